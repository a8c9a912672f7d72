// Remembers that recent calls with the same arguments found their data too dense for the sparse path,
// so that the next ones go straight to MPI_Allreduce, skipping the scan and the agreement collective
// (which would otherwise cost small and mid-sized dense calls a visible share of their time). Every
// rank updates it from the same agreed plans and the same arguments, so all ranks stay in step; every
// kReprobeEvery-th call looks at the data again, in case it became sparse.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace mpix::sparse::detail {

class DenseStreak {
  public:
    static constexpr int kReprobeEvery = 32;

    // True (and one call of the streak used up) when this call may skip straight to the dense path.
    bool take(std::uint64_t count, MPI_Datatype datatype, MPI_Op op) {
        if (remaining_ == 0 || count != count_ || datatype != datatype_ || op != op_) return false;
        --remaining_;
        return true;
    }
    // After a call that scanned and agreed: start a streak if it went dense, else forget.
    void record(std::uint64_t count, MPI_Datatype datatype, MPI_Op op, bool went_dense) {
        count_ = count;
        datatype_ = datatype;
        op_ = op;
        remaining_ = went_dense ? kReprobeEvery - 1 : 0;
    }

  private:
    std::uint64_t count_ = 0;
    MPI_Datatype datatype_ = MPI_DATATYPE_NULL;
    MPI_Op op_ = MPI_OP_NULL;
    int remaining_ = 0;
};

}  // namespace mpix::sparse::detail
