#include "core/core_sharing.h"

#include <sched.h>

#include <array>
#include <cstring>

#include "core/error.h"

namespace mpix::sparse::detail {

bool ranks_share_cores(MPI_Comm comm) {
    MPI_Comm node = MPI_COMM_NULL;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_split_type");
    int node_ranks = 1;
    MPI_Comm_size(node, &node_ranks);
    cpu_set_t mine;
    CPU_ZERO(&mine);
    // A failed read leaves the mask empty: it adds no core, and a node whose masks are all unread
    // counts none, which reads as "no sharing" below.
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
    std::array<unsigned char, sizeof(cpu_set_t)> bits{}, all{};
    std::memcpy(bits.data(), &mine, sizeof mine);
    rc = PMPI_Allreduce(bits.data(), all.data(), static_cast<int>(all.size()), MPI_UNSIGNED_CHAR, MPI_BOR, node);
    MPI_Comm_free(&node);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allreduce");
    int cores = 0;
    for (unsigned char b : all)
        cores += __builtin_popcount(b);
    int shared = cores > 0 && node_ranks > cores ? 1 : 0;
    rc = PMPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allreduce");
    return shared != 0;
}

}  // namespace mpix::sparse::detail
