// MPIX_Sparse_alloc_mem / MPIX_Sparse_free_mem: local, never collective; errors go to MPI_COMM_WORLD.
#include <cstring>

#include "api/api_guard.h"
#include "mpix_sparse/mpix_sparse.h"
#include "transport/shared_allocations.h"

using namespace mpix::sparse::detail;

extern "C" int MPIX_Sparse_alloc_mem(MPI_Aint size, MPI_Info, void *baseptr) {
    return api_call(MPI_COMM_WORLD, [&] {
        if (size < 0) fail(ErrorId::NegativeSize);
        if (baseptr == nullptr) fail(ErrorId::NullBasePointer);
        void *base = SharedAllocations::get().allocate(static_cast<std::size_t>(size));
        if (base == nullptr) fail(ErrorId::OutOfMemory);
        // baseptr is a void ** passed as void *, as MPI_Alloc_mem takes it.
        std::memcpy(baseptr, &base, sizeof base);
    });
}

extern "C" int MPIX_Sparse_free_mem(void *base) {
    return api_call(MPI_COMM_WORLD, [&] {
        if (base != nullptr && !SharedAllocations::get().release(base)) fail(ErrorId::UnknownAllocation);
    });
}
