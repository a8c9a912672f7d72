// MPIX_Sparse_allreduce_elements[_sparse] below the API: canonicalize the pairs, agree (every call,
// so a rank with bad input is reported to all ranks instead of leaving them waiting), plan, and run
// the aggregator, allgather or dense algorithm with one element per block.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include <memory>

#include "core/error.h"
#include "core/operation.h"

namespace mpix::sparse::detail {

class CommState;

// Device buffers (indices and values, or the dense output) are staged through host memory: the
// pairs are already only the non-zero data, so they cross PCIe as they are and are sorted on the
// host; a dense device output gets the union written back by the device.
struct ElementInput {
    std::int64_t nnz = 0;
    const std::int64_t *indices = nullptr;
    const void *values = nullptr;
    std::int64_t count = 0;
    MPI_Datatype datatype = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    bool device = false;  // indices and values are device memory
};

// Where the result goes: a dense buffer of count elements, or a sorted sparse vector.
struct ElementOutput {
    void *dense = nullptr;                         // dense variant
    std::vector<std::int64_t> *indices = nullptr;  // sparse variant
    std::vector<std::byte> *values = nullptr;
    bool device = false;  // `dense` is device memory
};

// The operation (not started). `local_error` is an argument error this rank found before
// (ErrorId::Count_ when none); it is raised after the agreement, and the other ranks raise
// Error(RemoteArgument). Input and output must stay valid until the operation is retired.
std::unique_ptr<Operation> make_element_allreduce(CommState &state, const ElementInput &input,
                                                  const ElementOutput &output, ErrorId local_error);

}  // namespace mpix::sparse::detail
