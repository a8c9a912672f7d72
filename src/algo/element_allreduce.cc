#include "algo/element_allreduce.h"

#include <cstring>
#include <new>
#include <optional>
#include <vector>

#include "algo/contribution_source.h"
#include "algo/device_staging.h"
#include "algo/mpi_requests.h"
#include "algo/result_sink.h"
#include "algo/sparse_operation.h"
#include "core/comm_state.h"
#include "core/device_memory.h"
#include "core/element_type.h"
#include "core/half_types.h"
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
            MPI_Reduce_local(v, target, 1, in.datatype, dense_op_for(in.datatype, in.op));
        }
    }
}

// The union's presence bitmap of the dense path's sparse output: bit k set when this rank passed k.
std::vector<std::uint8_t> presence_of(const ElementInput &in) {
    std::vector<std::uint8_t> present(static_cast<std::size_t>(in.count + 7) / 8, 0);
    for (std::int64_t i = 0; i < in.nnz; ++i)
        present[static_cast<std::size_t>(in.indices[i]) >> 3] |= static_cast<std::uint8_t>(1u << (in.indices[i] & 7));
    return present;
}

class ElementAllreduce final : public SparseOperation {
  public:
    ElementAllreduce(CommState &state, const ElementInput &in, const ElementOutput &out, ErrorId local_error)
        : SparseOperation(state), in_(in), out_(out), local_(local_error) {}

    void activate() override;

  private:
    // Dense path for any type and op. With a sparse output, the union comes from a bitwise OR of
    // per-rank presence bitmaps, reduced together with the values.
    void start_dense() override {
        std::byte *dense = out_.device ? nullptr : static_cast<std::byte *>(out_.dense);
        if (dense == nullptr) {
            dense_scratch_.resize(static_cast<std::size_t>(in_.count) * extent_);
            dense = dense_scratch_.data();
        }
        densify(in_, call_.sparse_capable ? &pairs_ : nullptr, dense, extent_);
        dense_ = dense;
        if (out_.indices != nullptr) present_ = presence_of(in_);
        if (state().size() == 1) return;
        // The call is blocking on every rank: MPI's blocking MPI_Allreduce where that is faster, as
        // the block variant's blocking calls do (on one node Open MPI's non-blocking one took
        // 11.3-11.7 ms where MPI_Allreduce took 6.6-7.8, 1M floats, 4 ranks).
        if (state().blocking_dense()) {
            defer_dense_to_caller();
            return;
        }
        mpi_.iallreduce(MPI_IN_PLACE, dense, static_cast<std::uint64_t>(in_.count), in_.datatype, in_.op,
                        state().comm());
        if (out_.indices != nullptr)
            mpi_.iallreduce(MPI_IN_PLACE, present_.data(), present_.size(), MPI_UINT8_T, MPI_BOR, state().comm());
    }
    void dense_by_caller() override {
        blocking_allreduce(MPI_IN_PLACE, dense_, static_cast<std::uint64_t>(in_.count), in_.datatype, in_.op,
                           state().comm());
        if (out_.indices != nullptr)
            blocking_allreduce(MPI_IN_PLACE, present_.data(), present_.size(), MPI_UINT8_T, MPI_BOR, state().comm());
    }
    void finish_dense() override {
        if (out_.device) device_memory()->upload(dense_scratch_.data(), dense_scratch_.size(), out_.dense);
        if (out_.indices == nullptr) return;
        const std::byte *dense =
            out_.dense != nullptr ? static_cast<const std::byte *>(out_.dense) : dense_scratch_.data();
        out_.indices->clear();
        out_.values->clear();
        for (std::int64_t k = 0; k < in_.count; ++k) {
            if (!((present_[static_cast<std::size_t>(k) >> 3] >> (k & 7)) & 1u)) continue;
            out_.indices->push_back(k);
            const std::byte *v = dense + static_cast<std::size_t>(k) * extent_;
            out_.values->insert(out_.values->end(), v, v + extent_);
        }
    }
    void finish_sparse() override {
        if (collecting_)
            collecting_->finish(*out_.indices, *out_.values);
        else if (staged_sink_)
            staged_sink_->finish(static_cast<std::byte *>(out_.dense));
        else
            store_fence();
    }
    // Brings device indices and values to host staging; in_ then points there.
    void stage_input();
    OpError local_error() const override { return {local_, {}}; }
    bool blocking() const override { return true; }  // the element calls are blocking only
    const ContributionSource &source() const override { return *source_; }
    ResultSink &sink() override {
        if (collecting_) return *collecting_;
        if (staged_sink_) return *staged_sink_;
        return *dense_sink_;
    }

    ElementInput in_;
    ElementOutput out_;
    ErrorId local_;
    std::size_t extent_ = 0;
    SortedPairs pairs_;
    std::optional<PairsSource> source_;
    std::optional<DenseResultSink> dense_sink_;
    std::optional<CollectingResultSink> collecting_;
    std::optional<StagedResultSink> staged_sink_;
    std::vector<std::byte> dense_scratch_;
    std::byte *dense_ = nullptr;  // the dense path's vector: the output, or dense_scratch_
    std::vector<std::uint8_t> present_;
};

void ElementAllreduce::stage_input() {
    DeviceMemory &device = *device_memory();
    DeviceStaging &staging = scratch().device;
    const auto nnz = static_cast<std::size_t>(in_.nnz);
    auto *indices = reinterpret_cast<std::int64_t *>(staging.indices.reserve(device, nnz * sizeof(std::int64_t)));
    std::byte *values = staging.input.reserve(device, nnz * extent_);
    device.download(in_.indices, nnz * sizeof(std::int64_t), indices);
    device.download(in_.values, nnz * extent_, values);
    in_.indices = indices;
    in_.values = values;
}

void ElementAllreduce::activate() {
    CommState &s = state();
    std::optional<PhaseTimer> scanning(std::in_place, s.profile(), Phase::Scan);  // staging and sorting
    SparseCall call;
    const auto type = element_type_of(in_.datatype);
    const auto reduce = reduce_op_of(in_.op);
    call.sparse_capable = type && reduce && is_sparse_capable(*type, *reduce);
    if (local_ == kNoError) {
        MPI_Count lb = 0, extent = 0;
        MPI_Type_get_extent_x(in_.datatype, &lb, &extent);
        extent_ = static_cast<std::size_t>(extent);
    }
    if (local_ == kNoError && in_.device && in_.nnz > 0) {
        try {
            stage_input();
        } catch (const Error &e) {
            local_ = e.id();  // still agree, so the others learn of it
        } catch (const std::bad_alloc &) {
            local_ = ErrorId::OutOfMemory;
        }
    }
    // Canonical input: sorted unique pairs (sparse path) or just checked indices (dense path).
    if (local_ == kNoError) {
        if (call.sparse_capable) {
            try {
                if (!sort_pairs(in_.indices, static_cast<const std::byte *>(in_.values),
                                static_cast<std::size_t>(in_.nnz), element_size(*type),
                                static_cast<std::uint64_t>(in_.count), kernels_for(*type, *reduce), scratch().pairs,
                                pairs_))
                    local_ = ErrorId::IndexOutOfRange;
            } catch (const std::bad_alloc &) {
                local_ = ErrorId::OutOfMemory;  // still agree, so the others learn of it
                pairs_ = SortedPairs{};
            }
        } else {
            for (std::int64_t i = 0; i < in_.nnz && local_ == kNoError; ++i)
                if (in_.indices[i] < 0 || in_.indices[i] >= in_.count) local_ = ErrorId::IndexOutOfRange;
        }
    }
    if (s.size() == 1 && local_ != kNoError) detail::fail(local_);
    if (call.sparse_capable) {
        call.type = *type;
        call.op = *reduce;
    }
    const std::uint32_t elem = call.sparse_capable ? static_cast<std::uint32_t>(element_size(call.type)) : 4;
    call.layout = BlockLayout{local_ == kNoError ? static_cast<std::uint64_t>(in_.count) : 0, 1, elem};
    call.nonzero = pairs_.size;
    call.output_to_zero = out_.dense != nullptr;
    call.allow_dense = out_.dense != nullptr;
    if (local_ != kNoError) call.local = SparseCall::Local::Argument;
    source_.emplace(pairs_.indices, pairs_.values, pairs_.size, elem);
    call.device = in_.device || out_.device;
    if (out_.dense != nullptr && out_.device && local_ == kNoError) {
        try {
            staged_sink_.emplace(*device_memory(), scratch().device, call.layout);
        } catch (const Error &e) {
            local_ = e.id();
        } catch (const std::bad_alloc &) {
            local_ = ErrorId::OutOfMemory;
        }
        if (local_ != kNoError) call.local = SparseCall::Local::Argument;
    }
    // The dense output is written once, a covered range at a time as results arrive: the union's
    // values with the zeros between them (large outputs in cache tiles streamed to memory).
    // Zero-filling first and scattering after costs a second pass over every line with a value.
    if (out_.dense != nullptr && !out_.device)
        dense_sink_.emplace(static_cast<std::byte *>(out_.dense), call.layout, DenseResultSink::Zeros::Written);
    else if (out_.dense == nullptr)
        collecting_.emplace(call.layout);
    call_ = call;
    scanning.reset();
    if (s.size() == 1) {
        go_dense();
        return;
    }
    agree(call);
}

}  // namespace

std::unique_ptr<Operation> make_element_allreduce(CommState &state, const ElementInput &input,
                                                  const ElementOutput &output, ErrorId local_error) {
    return std::make_unique<ElementAllreduce>(state, input, output, local_error);
}

}  // namespace mpix::sparse::detail
