// Non-blocking MPI requests of one stage of an operation, tested without waiting, and the one blocking
// collective a blocking call's dense path makes. Large collectives go in slices of at most INT_MAX
// elements (MPI counts are int); reductions are element-wise, so slicing is exact.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace mpix::sparse::detail {

class MpiRequests {
  public:
    MpiRequests() = default;
    MpiRequests(const MpiRequests &) = delete;
    MpiRequests &operator=(const MpiRequests &) = delete;
    // Requests still active are completed first: MPI has no way to cancel a collective, and its
    // buffers must outlive it.
    ~MpiRequests();

    // Tracks the request an MPI_I* call wrote (by reference: read after the call, whatever the order
    // in which the arguments were evaluated); throws Error(MpiFailure) when rc says it failed.
    void add(int rc, const MPI_Request &request, const char *what);
    // True when every request completed (throws Error(MpiFailure) on a failed one).
    bool test();
    bool empty() const { return requests_.empty(); }

    // MPI_Iallreduce over `count` elements in slices (sendbuf may be MPI_IN_PLACE).
    void iallreduce(const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm);
    // MPI_Ibcast from rank 0 in slices.
    void ibcast(void *buf, std::uint64_t count, MPI_Datatype datatype, MPI_Comm comm);

  private:
    std::vector<MPI_Request> requests_;
};

// MPI_Allreduce in slices, returning when done (throws Error(MpiFailure) on failure).
void blocking_allreduce(const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm);

}  // namespace mpix::sparse::detail
