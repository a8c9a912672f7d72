// The one small collective every sparse call makes before moving data, so that all ranks choose the
// same path from the same facts: each rank contributes a vector of int64 values and every rank gets,
// per entry, the sum and the maximum over ranks (one MPI_Allreduce with a (sum, max) pair type).
// Equal arguments are checked for free: values are equal on all ranks iff sum == ranks * max.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace mpix::sparse::detail {

struct SumMax {
    std::int64_t sum;
    std::int64_t max;
};

// The MPI datatype and op for SumMax, created once per process and freed at MPI_Finalize.
class AgreementOp {
  public:
    AgreementOp();
    ~AgreementOp();
    AgreementOp(const AgreementOp &) = delete;
    AgreementOp &operator=(const AgreementOp &) = delete;

    // In place over `values` (each entry's sum and max start as the local value). Returns the MPI
    // error code of the allreduce.
    int allreduce(std::vector<SumMax> &values, MPI_Comm comm) const;
    // The same, non-blocking: `values` must stay untouched until *request completes.
    int iallreduce(std::vector<SumMax> &values, MPI_Comm comm, MPI_Request *request) const;

  private:
    MPI_Datatype type_ = MPI_DATATYPE_NULL;
    MPI_Op op_ = MPI_OP_NULL;
};

// What ranks agree on before a block- or element-sparse call.
struct AgreementFields {
    enum : std::size_t {
        kCount = 0,
        kType,
        kOp,
        kBlockElems,
        kError,
        kAlgorithm,
        kNonzero,
        kDevice,
        kOutput,     // what the call writes: the block variant's buffer, or the element variant's outputs
        kInPlace,    // 1 when peers read this rank's input and output where they are (MPIX_Sparse_alloc_mem)
        kTunerTag,   // the previous blocking call's shape and algorithm (CallTuner::Report), or 0
        kTunerTime,  // and its time on this rank: the maximum is the call's time
        kHeader
    };
};

}  // namespace mpix::sparse::detail
