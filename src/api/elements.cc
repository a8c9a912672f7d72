// MPIX_Sparse_allreduce_elements, _elements_sparse and the sparse vector handle.
#include <mutex>
#include <set>
#include <vector>

#include "algo/element_allreduce.h"
#include "api/api_guard.h"
#include "api/arguments.h"
#include "core/comm_state.h"
#include "core/device_memory.h"
#include "core/half_types.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse::detail;

struct MPIX_Sparse_vector_s {
    std::vector<std::int64_t> indices;
    std::vector<std::byte> values;
};

namespace {

constexpr ErrorId kNoError = ErrorId::Count_;

// Live vectors, so a stale or foreign handle is an error rather than a crash.
std::mutex g_vectors_lock;  // guards live_vectors(): any thread may call
std::set<const MPIX_Sparse_vector_s *> &live_vectors() {
    static std::set<const MPIX_Sparse_vector_s *> live;
    return live;
}

// Argument errors that only this rank can see. They do not return at once: the rank still joins the
// call's agreement so every other rank learns of them (and raises MPIX_ERR_SPARSE_REMOTE) instead of
// waiting for it.
ErrorId check_element_arguments(const ElementInput &in) {
    if (in.count < 0) return ErrorId::NegativeCount;
    if (in.nnz < 0) return ErrorId::NegativeNnz;
    if (in.datatype == MPI_DATATYPE_NULL) return ErrorId::NullDatatype;
    if (in.op == MPI_OP_NULL) return ErrorId::NullOp;
    if (unsupported_half_op(in.datatype, in.op)) return ErrorId::HalfFloatOp;
    if (in.nnz > 0 && (in.indices == nullptr || in.values == nullptr)) return ErrorId::NullIndices;
    if (in.nnz > 0xfffffffe) return ErrorId::CountTooLarge;
    MPI_Count size = 0;
    if (MPI_Type_size_x(in.datatype, &size) != MPI_SUCCESS || size == MPI_UNDEFINED || size <= 0)
        return ErrorId::UnsupportedDatatype;
    // Byte offsets into the vector stay below 2^62 (the wire format's bound: every length a message
    // implies is then computed without overflow), far beyond any address space.
    if (static_cast<std::uint64_t>(in.count) > (std::uint64_t{1} << 62) / static_cast<std::uint64_t>(size))
        return ErrorId::CountTooLarge;
    return kNoError;
}

// Indices and values must live in the same kind of memory (both staged, or neither). Returns the
// argument error, raised after the agreement like the others.
ErrorId classify_buffers(ElementInput &in, ElementOutput &out) {
    if (!device_memory_possible()) return kNoError;  // all host (the inputs' device flags start false)
    try {
        if (in.nnz > 0) {
            const MemoryKind indices = memory_kind_of(in.indices, MPI_INT64_T);
            const MemoryKind values = memory_kind_of(in.values, in.datatype);
            if (on_device(indices) != on_device(values)) return ErrorId::MixedElementMemory;
            in.device = on_device(values);
        }
        out.device = out.dense != nullptr && on_device(memory_kind_of(out.dense, in.datatype));
    } catch (const Error &e) {
        return e.id();
    }
    return kNoError;
}

void run(MPI_Comm comm, ElementInput in, ElementOutput out, ErrorId local) {
    Library &library = Library::get();
    CommState *known = library.check_comm(comm);
    if (local == kNoError) local = check_element_arguments(in);
    if (local == kNoError) local = classify_buffers(in, out);
    CommState &state = known != nullptr ? *known : library.state_for(comm);
    library.run(state, make_element_allreduce(state, in, out, local));
}

}  // namespace

extern "C" int MPIX_Sparse_allreduce_elements(MPI_Count nnz, const int64_t *indices, const void *values, void *recvbuf,
                                              MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    return api_call(comm, [&] {
        const ElementInput in{nnz, indices, values, count, datatype, op};
        ElementOutput out;
        out.dense = recvbuf;
        run(comm, in, out, count > 0 && recvbuf == nullptr ? ErrorId::NullBuffer : kNoError);
    });
}

extern "C" int MPIX_Sparse_allreduce_elements_sparse(MPI_Count nnz, const int64_t *indices, const void *values,
                                                     MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                     MPIX_Sparse_vector *result) {
    return api_call(comm, [&] {
        if (result != nullptr) *result = nullptr;
        auto vector = std::make_unique<MPIX_Sparse_vector_s>();
        const ElementInput in{nnz, indices, values, count, datatype, op};
        ElementOutput out;
        out.indices = &vector->indices;
        out.values = &vector->values;
        run(comm, in, out, result == nullptr ? ErrorId::NullResult : kNoError);
        {
            std::lock_guard<std::mutex> guard(g_vectors_lock);
            live_vectors().insert(vector.get());
        }
        *result = vector.release();
    });
}

extern "C" int MPIX_Sparse_vector_get(MPIX_Sparse_vector v, MPI_Count *nnz, const int64_t **indices,
                                      const void **values) {
    return api_call(MPI_COMM_WORLD, [&] {
        Library::get();
        {
            std::lock_guard<std::mutex> guard(g_vectors_lock);
            if (v == nullptr || live_vectors().count(v) == 0) fail(ErrorId::NullVector);
        }
        if (nnz == nullptr || indices == nullptr || values == nullptr) fail(ErrorId::NullResult);
        *nnz = static_cast<MPI_Count>(v->indices.size());
        *indices = v->indices.data();
        *values = v->values.data();
    });
}

extern "C" int MPIX_Sparse_vector_free(MPIX_Sparse_vector *v) {
    return api_call(MPI_COMM_WORLD, [&] {
        Library::get();
        {
            std::lock_guard<std::mutex> guard(g_vectors_lock);
            if (v == nullptr || *v == nullptr || live_vectors().count(*v) == 0) fail(ErrorId::NullVector);
            live_vectors().erase(*v);
        }
        delete *v;
        *v = nullptr;
    });
}
