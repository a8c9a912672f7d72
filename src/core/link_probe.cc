#include "core/link_probe.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/error.h"

namespace mpix::sparse::detail {

int probe_shift(const std::vector<int> &node_of_rank) {
    const auto ranks = static_cast<int>(node_of_rank.size());
    int best = 0, best_crossing = 0;
    for (int s = 1; s < ranks; ++s) {
        int crossing = 0;
        for (int r = 0; r < ranks; ++r)
            crossing +=
                node_of_rank[static_cast<std::size_t>(r)] != node_of_rank[static_cast<std::size_t>((r + s) % ranks)];
        if (crossing > best_crossing) {
            best = s;
            best_crossing = crossing;
        }
        if (crossing == ranks) break;
    }
    return best;
}

double link_ns_of_rounds(std::vector<double> slowest_per_round) {
    if (slowest_per_round.empty()) return 0.0;
    const auto middle = slowest_per_round.begin() + static_cast<std::ptrdiff_t>(slowest_per_round.size() / 2);
    std::nth_element(slowest_per_round.begin(), middle, slowest_per_round.end());
    if (slowest_per_round.size() % 2 == 1) return *middle;
    return (*middle + *std::max_element(slowest_per_round.begin(), middle)) / 2;
}

double probe_link_ns(MPI_Comm comm, const std::vector<int> &node_of_rank) {
    const int shift = probe_shift(node_of_rank);
    if (shift == 0) return 0.0;
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int to = (rank + shift) % size, from = (rank - shift + size) % size;
    const bool crossing = node_of_rank[static_cast<std::size_t>(rank)] != node_of_rank[static_cast<std::size_t>(to)];
    std::vector<char> out(kProbeBytes, 1), in(kProbeBytes);
    auto exchange = [&] {
        check_mpi(MPI_Sendrecv(out.data(), kProbeBytes, MPI_BYTE, to, 0, in.data(), kProbeBytes, MPI_BYTE, from, 0,
                               comm, MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
    };
    exchange();  // opens the connection (TCP: and its window) outside the timing
    check_mpi(MPI_Barrier(comm), "MPI_Barrier");
    std::vector<double> rounds(kProbeRounds, 0.0);
    for (double &ns : rounds) {
        const double t0 = MPI_Wtime();
        exchange();
        if (crossing) ns = (MPI_Wtime() - t0) * 1e9 / kProbeBytes;
    }
    // The interposer may route MPI_Allreduce here: the profiling entry point is the MPI library's own.
    check_mpi(PMPI_Allreduce(MPI_IN_PLACE, rounds.data(), kProbeRounds, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
    return link_ns_of_rounds(std::move(rounds));
}

LinkCosts::Key LinkCosts::key_of(MPI_Comm comm) {
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    check_mpi(MPI_Comm_group(comm, &group), "MPI_Comm_group");
    int size = 0;
    MPI_Group_size(group, &size);
    std::vector<int> ranks(static_cast<std::size_t>(size)), in_world(ranks.size());
    for (int r = 0; r < size; ++r)
        ranks[static_cast<std::size_t>(r)] = r;
    int rc = MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (rc == MPI_SUCCESS) rc = MPI_Group_translate_ranks(group, size, ranks.data(), world, in_world.data());
    MPI_Group_free(&group);
    if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
    check_mpi(rc, "MPI_Group_translate_ranks");
    if (std::find(in_world.begin(), in_world.end(), MPI_UNDEFINED) != in_world.end()) return {};
    std::sort(in_world.begin(), in_world.end());
    return in_world;
}

std::optional<double> LinkCosts::find(const Key &key) const {
    std::lock_guard<std::mutex> guard(lock_);
    const auto it = known_.find(key);
    if (it == known_.end()) return std::nullopt;
    return it->second;
}

void LinkCosts::remember(const Key &key, double link_ns) {
    std::lock_guard<std::mutex> guard(lock_);
    known_[key] = link_ns;
}

double LinkCosts::link_ns(MPI_Comm comm, const std::vector<int> &node_of_rank) {
    const Key key = key_of(comm);
    const std::optional<double> known = key.empty() ? std::nullopt : find(key);
    // {1 where a rank lacks the value, the value}: all zero in the first means every rank has it.
    double agreed[2] = {known ? 0.0 : 1.0, known.value_or(0.0)};
    check_mpi(PMPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
    if (agreed[0] == 0.0) return agreed[1];
    const double ns = probe_link_ns(comm, node_of_rank);
    std::lock_guard<std::mutex> guard(lock_);
    ++probes_;
    if (!key.empty()) known_[key] = ns;
    return ns;
}

int LinkCosts::probes() const {
    std::lock_guard<std::mutex> guard(lock_);
    return probes_;
}

}  // namespace mpix::sparse::detail
