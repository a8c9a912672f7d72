#include "algo/mpi_requests.h"

#include <algorithm>
#include <climits>

#include "core/error.h"
#include "core/half_types.h"

namespace mpix::sparse::detail {
namespace {

constexpr std::uint64_t kSlice = static_cast<std::uint64_t>(INT_MAX);

std::size_t extent_of(MPI_Datatype datatype) {
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(datatype, &lb, &extent);
    return static_cast<std::size_t>(extent);
}

// Calls fn(offset_bytes, elements) for each slice of at most INT_MAX elements.
template <typename Fn>
void for_each_slice(std::uint64_t count, MPI_Datatype datatype, Fn &&fn) {
    if (count <= kSlice) {
        fn(0, static_cast<int>(count));  // one slice: no extent needed (asking MPI costs a small call)
        return;
    }
    const std::size_t extent = extent_of(datatype);
    std::uint64_t done = 0;
    do {
        const std::uint64_t n = std::min(kSlice, count - done);
        fn(static_cast<std::size_t>(done) * extent, static_cast<int>(n));
        done += n;
    } while (done < count);
}

const void *at(const void *sendbuf, std::size_t offset) {
    return sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : static_cast<const char *>(sendbuf) + offset;
}

}  // namespace

MpiRequests::~MpiRequests() {
    if (!requests_.empty()) MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

void MpiRequests::add(int rc, const MPI_Request &request, const char *what) {
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, what);
    requests_.push_back(request);
}

bool MpiRequests::test() {
    if (requests_.empty()) return true;
    int flag = 0;
    const int rc = MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &flag, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
        requests_.clear();
        throw Error(ErrorId::MpiFailure, rc, "MPI_Testall");
    }
    if (flag) requests_.clear();
    return flag != 0;
}

void MpiRequests::iallreduce(const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
    op = dense_op_for(datatype, op);  // MPI cannot reduce the library's 16-bit float types itself
    for_each_slice(count, datatype, [&](std::size_t offset, int n) {
        MPI_Request r = MPI_REQUEST_NULL;
        add(PMPI_Iallreduce(at(sendbuf, offset), static_cast<char *>(recvbuf) + offset, n, datatype, op, comm, &r), r,
            "MPI_Iallreduce");
    });
}

void blocking_allreduce(const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm) {
    op = dense_op_for(datatype, op);
    for_each_slice(count, datatype, [&](std::size_t offset, int n) {
        const int rc =
            PMPI_Allreduce(at(sendbuf, offset), static_cast<char *>(recvbuf) + offset, n, datatype, op, comm);
        if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allreduce");
    });
}

void MpiRequests::ibcast(void *buf, std::uint64_t count, MPI_Datatype datatype, MPI_Comm comm) {
    for_each_slice(count, datatype, [&](std::size_t offset, int n) {
        MPI_Request r = MPI_REQUEST_NULL;
        add(MPI_Ibcast(static_cast<char *>(buf) + offset, n, datatype, 0, comm, &r), r, "MPI_Ibcast");
    });
}

}  // namespace mpix::sparse::detail
