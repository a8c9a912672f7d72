#include "algo/element_allreduce.h"

#include <cstring>

#include "algo/contribution_source.h"
#include "algo/dense_allreduce.h"
#include "algo/result_sink.h"
#include "algo/sparse_call.h"
#include "core/comm_state.h"
#include "core/element_type.h"
#include "core/memory_ops.h"
#include "core/pair_sort.h"
#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {
namespace {

constexpr ErrorId kNoError = ErrorId::Count_;

// The dense vector of this rank's pairs: zeros, then each pair. Canonical pairs (sorted, unique,
// already combined) are scattered; raw pairs combine duplicates with op through MPI_Reduce_local,
// which serves any type and op.
void densify(const ElementInput &in, const SortedPairs *canonical, std::byte *dense, std::size_t extent) {
    const std::size_t bytes = static_cast<std::size_t>(in.count) * extent;
    fill_zero(dense, bytes, bytes >= kStreamingFillBytes);
    store_fence();
    if (canonical != nullptr) {
        for (std::size_t i = 0; i < canonical->size; ++i)
            std::memcpy(dense + static_cast<std::size_t>(canonical->indices[i]) * extent,
                        canonical->values + i * extent, extent);
        return;
    }
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(in.count), 0);
    const auto *values = static_cast<const std::byte *>(in.values);
    for (std::int64_t i = 0; i < in.nnz; ++i) {
        const auto k = static_cast<std::size_t>(in.indices[i]);
        std::byte *target = dense + k * extent;
        const std::byte *v = values + static_cast<std::size_t>(i) * extent;
        if (!seen[k]) {
            std::memcpy(target, v, extent);
            seen[k] = 1;
        } else {
            MPI_Reduce_local(v, target, 1, in.datatype, in.op);
        }
    }
}

// Dense path for any type and op. With a sparse output, the union comes from a bitwise OR of
// per-rank presence bitmaps.
void serve_dense(CommState &state, const ElementInput &in, const SortedPairs *canonical, const ElementOutput &out,
                 std::size_t extent) {
    std::vector<std::byte> scratch;
    std::byte *dense = static_cast<std::byte *>(out.dense);
    if (dense == nullptr) {
        scratch.resize(static_cast<std::size_t>(in.count) * extent);
        dense = scratch.data();
    }
    densify(in, canonical, dense, extent);
    if (state.size() > 1)
        dense_allreduce(state, MPI_IN_PLACE, dense, static_cast<std::uint64_t>(in.count), in.datatype, in.op);
    if (out.indices != nullptr) {
        std::vector<std::uint8_t> present(static_cast<std::size_t>(in.count + 7) / 8, 0);
        for (std::int64_t i = 0; i < in.nnz; ++i)
            present[static_cast<std::size_t>(in.indices[i]) >> 3] |=
                static_cast<std::uint8_t>(1u << (in.indices[i] & 7));
        if (state.size() > 1) {
            std::uint64_t done = 0;
            while (done < present.size()) {
                const std::uint64_t n = std::min<std::uint64_t>(present.size() - done, 1u << 30);
                const int rc = MPI_Allreduce(MPI_IN_PLACE, present.data() + done, static_cast<int>(n), MPI_UINT8_T,
                                             MPI_BOR, state.comm());
                if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allreduce");
                done += n;
            }
        }
        out.indices->clear();
        out.values->clear();
        for (std::int64_t k = 0; k < in.count; ++k) {
            if (!((present[static_cast<std::size_t>(k) >> 3] >> (k & 7)) & 1u)) continue;
            out.indices->push_back(k);
            const std::byte *v = dense + static_cast<std::size_t>(k) * extent;
            out.values->insert(out.values->end(), v, v + extent);
        }
    }
    ++state.stats().dense_fallbacks;
    state.stats().last_algorithm = static_cast<int>(Algorithm::Dense);
}

}  // namespace

void element_allreduce(CommState &state, const ElementInput &in, const ElementOutput &out, ErrorId local_error) {
    SparseCall call;
    call.seq = state.begin_call();
    const auto type = element_type_of(in.datatype);
    const auto reduce = reduce_op_of(in.op);
    call.sparse_capable = type && reduce && is_sparse_capable(*type, *reduce);
    MPI_Count size = 0, lb = 0, extent = 0;
    if (local_error == kNoError) {
        MPI_Type_size_x(in.datatype, &size);
        MPI_Type_get_extent_x(in.datatype, &lb, &extent);
    }

    // Canonical input: sorted unique pairs (sparse path) or just checked indices (dense path).
    SortedPairs pairs;
    if (local_error == kNoError) {
        if (call.sparse_capable) {
            if (!sort_pairs(in.indices, static_cast<const std::byte *>(in.values), static_cast<std::size_t>(in.nnz),
                            element_size(*type), static_cast<std::uint64_t>(in.count), kernels_for(*type, *reduce),
                            state.pair_scratch(), pairs))
                local_error = ErrorId::IndexOutOfRange;
        } else {
            for (std::int64_t i = 0; i < in.nnz && local_error == kNoError; ++i)
                if (in.indices[i] < 0 || in.indices[i] >= in.count) local_error = ErrorId::IndexOutOfRange;
        }
    }
    if (state.size() == 1 && local_error != kNoError) fail(local_error);

    if (call.sparse_capable) {
        call.type = *type;
        call.op = *reduce;
    }
    const std::uint32_t elem = call.sparse_capable ? static_cast<std::uint32_t>(element_size(call.type)) : 4;
    call.layout = BlockLayout{local_error == kNoError ? static_cast<std::uint64_t>(in.count) : 0, 1, elem};
    call.nonzero = pairs.size;
    call.output_to_zero = out.dense != nullptr;
    PairsSource source(pairs.indices, pairs.values, pairs.size, elem);

    Plan plan;
    if (state.size() > 1) {
        plan = agree_on_plan(state, call, source, local_error != kNoError, out.dense != nullptr);
        if (local_error != kNoError) fail(local_error);
    }
    if (!call.sparse_capable || state.size() == 1 || plan.algorithm == Algorithm::Dense) {
        serve_dense(state, in, call.sparse_capable ? &pairs : nullptr, out, static_cast<std::size_t>(extent));
        return;
    }
    if (out.dense != nullptr) {
        // The output is written once, a covered range at a time as results arrive: the union's
        // values with the zeros between them (large outputs in cache tiles streamed to memory).
        // Zero-filling first and scattering after costs a second pass over every line with a value.
        DenseResultSink sink(static_cast<std::byte *>(out.dense), call.layout, DenseResultSink::Zeros::Written);
        run_sparse(state, call, plan, source, sink);
        store_fence();
    } else {
        CollectingResultSink sink(call.layout);
        run_sparse(state, call, plan, source, sink);
        sink.finish(*out.indices, *out.values);
    }
}

}  // namespace mpix::sparse::detail
