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
    const std::size_t extent = extent_of(datatype);
    op = dense_op_for(datatype, op);  // MPI cannot reduce the library's 16-bit float types itself
    std::uint64_t done = 0;
    do {
        const std::uint64_t n = std::min(kSlice, count - done);
        const std::size_t offset = static_cast<std::size_t>(done) * extent;
        const void *in = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : static_cast<const char *>(sendbuf) + offset;
        MPI_Request r = MPI_REQUEST_NULL;
        add(PMPI_Iallreduce(in, static_cast<char *>(recvbuf) + offset, static_cast<int>(n), datatype, op, comm, &r), r,
            "MPI_Iallreduce");
        done += n;
    } while (done < count);
}

void MpiRequests::ibcast(void *buf, std::uint64_t count, MPI_Datatype datatype, MPI_Comm comm) {
    const std::size_t extent = extent_of(datatype);
    std::uint64_t done = 0;
    do {
        const std::uint64_t n = std::min(kSlice, count - done);
        MPI_Request r = MPI_REQUEST_NULL;
        add(MPI_Ibcast(static_cast<char *>(buf) + static_cast<std::size_t>(done) * extent, static_cast<int>(n),
                       datatype, 0, comm, &r),
            r, "MPI_Ibcast");
        done += n;
    } while (done < count);
}

}  // namespace mpix::sparse::detail
