#include "core/node_layout.h"

#include <sched.h>

#include <array>
#include <cstring>
#include <map>

#include "core/error.h"

namespace mpix::sparse::detail {

namespace {

// The CPUs this process may run on, as bytes that MPI_BOR can combine. A failed read leaves the mask
// empty: it adds no core.
std::array<unsigned char, sizeof(cpu_set_t)> my_cpu_mask() {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
    std::array<unsigned char, sizeof(cpu_set_t)> bits{};
    std::memcpy(bits.data(), &mine, sizeof mine);
    return bits;
}

}  // namespace

NodeLayout learn_node_layout(MPI_Comm comm) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm node_comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm), "MPI_Comm_split_type");
    struct FreeOnExit {
        MPI_Comm &c;
        ~FreeOnExit() { MPI_Comm_free(&c); }
    } free_node{node_comm};

    // Per rank: the node's lowest rank in comm (it names the node) and whether the node shares cores.
    std::array<int, 2> mine{rank, 0};
    check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &mine[0], 1, MPI_INT, MPI_MIN, node_comm), "MPI_Allreduce");
    int node_ranks = 1;
    MPI_Comm_size(node_comm, &node_ranks);
    const std::array<unsigned char, sizeof(cpu_set_t)> bits = my_cpu_mask();
    std::array<unsigned char, sizeof(cpu_set_t)> node_cpus{};
    check_mpi(PMPI_Allreduce(bits.data(), node_cpus.data(), static_cast<int>(node_cpus.size()), MPI_UNSIGNED_CHAR,
                             MPI_BOR, node_comm),
              "MPI_Allreduce");
    int cores = 0;
    for (unsigned char b : node_cpus)
        cores += __builtin_popcount(b);
    mine[1] = cores > 0 && node_ranks > cores ? 1 : 0;

    std::vector<int> all(2 * static_cast<std::size_t>(size));
    check_mpi(MPI_Allgather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, comm), "MPI_Allgather");
    NodeLayout layout;
    std::map<int, int> index;  // leader -> node number, in leader order
    for (int r = 0; r < size; ++r) {
        index.emplace(all[2 * static_cast<std::size_t>(r)], 0);
        layout.cores_shared = layout.cores_shared || all[2 * static_cast<std::size_t>(r) + 1] != 0;
    }
    int n = 0;
    for (auto &[leader, i] : index)
        i = n++;
    layout.node_of_rank.resize(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r)
        layout.node_of_rank[static_cast<std::size_t>(r)] = index[all[2 * static_cast<std::size_t>(r)]];
    return layout;
}

}  // namespace mpix::sparse::detail
