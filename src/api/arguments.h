// Local argument checks shared by the reduction entry points.
#pragma once

#include <mpi.h>

#include "core/memory_kind.h"

namespace mpix::sparse::detail {

// Throws Error for a negative count, MPI_DATATYPE_NULL, a datatype without a size, MPI_OP_NULL, null
// or MPI_IN_PLACE buffers where data is needed (NULL is allowed with derived datatypes: MPI_BOTTOM),
// overlapping send and receive buffers, and sizes beyond the address space.
void check_reduction_arguments(const void *sendbuf, const void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Op op);

// Throws Error for MPI_DATATYPE_NULL, MPI_OP_NULL or a datatype without a size.
void check_type_and_op(MPI_Datatype datatype, MPI_Op op, MPI_Count *size, MPI_Count *extent);

// Where each buffer lives (MPI_IN_PLACE and NULL count as host). Throws Error(DeviceUnsupported) for
// device memory when there is no device backend, and Error(DeviceDatatype) for device memory
// with a datatype that is not contiguous from offset 0 (it is staged as count * extent bytes).
MemoryKind memory_kind_of(const void *buffer, MPI_Datatype datatype);

}  // namespace mpix::sparse::detail
