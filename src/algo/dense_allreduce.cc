#include "algo/dense_allreduce.h"

#include <algorithm>
#include <climits>

#include "core/comm_state.h"
#include "core/error.h"

namespace mpix::sparse::detail {

void dense_allreduce(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype,
                     MPI_Op op) {
    MPI_Count size = 0, lb = 0, extent = 0;
    MPI_Type_size_x(datatype, &size);
    MPI_Type_get_extent_x(datatype, &lb, &extent);
    // MPI_Allreduce takes an int count: go in slices of at most INT_MAX elements. Reducing slice by
    // slice is exact because reductions are element-wise.
    constexpr std::uint64_t kSlice = static_cast<std::uint64_t>(INT_MAX);
    std::uint64_t done = 0;
    do {
        const std::uint64_t n = std::min(kSlice, count - done);
        const auto offset = static_cast<std::ptrdiff_t>(done) * static_cast<std::ptrdiff_t>(extent);
        const void *in = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : static_cast<const char *>(sendbuf) + offset;
        const int rc =
            MPI_Allreduce(in, static_cast<char *>(recvbuf) + offset, static_cast<int>(n), datatype, op, state.comm());
        if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allreduce");
        done += n;
    } while (done < count);
}

}  // namespace mpix::sparse::detail
