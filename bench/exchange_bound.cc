// What the network alone costs a sparse allreduce with one dedicated aggregator per node, without
// the library: the reference for the dedicated-aggregator scale rows of docs/performance.md.
// On each node (MPI_COMM_TYPE_SHARED) local rank 0 is the worker and local rank 1 the aggregator,
// one of each per node. An iteration, after a barrier: every worker sends BYTES/N to the
// aggregator of every other node (its contributions to each shard), and each aggregator, once it
// has all of them, sends BYTES/N to the worker of every other node (its shard's result, one copy
// per node as node multicast sends it). That is the library's traffic at identical patterns, where
// BYTES is the non-zero data of one rank: per node link and direction 2 BYTES (N-1)/N, whatever N.
// Plain MPI point-to-point over the same links (TCP), so what grows with N here is the network's
// doing (TCP through shaped links), not the library's.
// Prints the median over iterations of the slowest rank's time, and the link bytes' time at RATE.
// Usage: mpirun ... exchange_bound BYTES [iterations=5] [rate_mbit=0]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "median.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long long total = argc > 1 ? std::atoll(argv[1]) : 0;
    const int iterations = argc > 2 ? std::atoi(argv[2]) : 5;
    const double rate_mbit = argc > 3 ? std::atof(argv[3]) : 0;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int local = 0, local_size = 0;
    MPI_Comm_rank(node, &local);
    MPI_Comm_size(node, &local_size);
    // Every node's worker (local 0) and aggregator (local 1), as world ranks, both lists in the order
    // of the nodes (named by their local rank 0's world rank), whatever the rank mapping.
    int leader = rank;
    MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    std::vector<int> roles(static_cast<std::size_t>(3 * size), -1);
    const int mine[3] = {local < 2 ? local : -1, leader, rank};
    MPI_Allgather(mine, 3, MPI_INT, roles.data(), 3, MPI_INT, MPI_COMM_WORLD);
    std::vector<std::pair<int, int>> worker_of, aggregator_of;  // (node leader, world rank)
    for (int r = 0; r < size; ++r) {
        const int *role = &roles[static_cast<std::size_t>(3 * r)];
        if (role[0] == 0) worker_of.emplace_back(role[1], role[2]);
        if (role[0] == 1) aggregator_of.emplace_back(role[1], role[2]);
    }
    std::sort(worker_of.begin(), worker_of.end());
    std::sort(aggregator_of.begin(), aggregator_of.end());
    std::vector<int> workers, aggregators;
    int my_node = -1;
    for (std::size_t i = 0; i < worker_of.size(); ++i) {
        workers.push_back(worker_of[i].second);
        if (worker_of[i].first == leader) my_node = static_cast<int>(i);
    }
    for (const auto &a : aggregator_of)
        aggregators.push_back(a.second);
    const int n = static_cast<int>(workers.size());
    if (total <= 0 || iterations < 1 || local_size != 2 || static_cast<int>(aggregators.size()) != n || n < 2) {
        if (rank == 0)
            std::fprintf(stderr, "usage: exchange_bound BYTES [iterations] [rate_mbit]; 2 ranks per node, 2+ nodes\n");
        MPI_Finalize();
        return 2;
    }
    const auto piece = static_cast<std::size_t>(total / n);
    std::vector<char> out(piece * static_cast<std::size_t>(n), 1), in(piece * static_cast<std::size_t>(n), 0);
    std::vector<MPI_Request> requests;
    // Sends `piece` to each peer but the one on this node, or receives from each.
    auto post = [&](const std::vector<int> &peers, bool send) {
        for (int i = 0; i < n; ++i) {
            if (i == my_node) continue;
            char *at = (send ? out.data() : in.data()) + piece * static_cast<std::size_t>(i);
            requests.emplace_back();
            if (send)
                MPI_Isend(at, static_cast<int>(piece), MPI_CHAR, peers[static_cast<std::size_t>(i)], 0, MPI_COMM_WORLD,
                          &requests.back());
            else
                MPI_Irecv(at, static_cast<int>(piece), MPI_CHAR, peers[static_cast<std::size_t>(i)], 0, MPI_COMM_WORLD,
                          &requests.back());
        }
    };
    auto wait = [&] {
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        requests.clear();
    };
    std::vector<double> times;
    for (int it = -1; it < iterations; ++it) {  // iteration -1 warms the connections up
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        if (local == 0) {
            post(aggregators, false);  // results, posted first
            std::vector<MPI_Request> results(requests.begin(), requests.end());
            requests.clear();
            post(aggregators, true);  // contributions
            wait();
            requests = results;
            wait();
        } else {
            post(workers, false);  // contributions
            wait();
            post(workers, true);  // results
            wait();
        }
        double elapsed = MPI_Wtime() - start;
        MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it >= 0) times.push_back(elapsed);
    }
    if (rank == 0) {
        const double link_bytes = 2.0 * static_cast<double>(piece) * (n - 1);
        std::printf("# exchange_bound: %d nodes x (worker + aggregator), %lld bytes of non-zero data per worker, "
                    "%zu per pair, %d iterations\n",
                    n, total, piece, iterations);
        std::printf("nodes %d  median_ms %.1f  link_bytes_per_direction %.0f", n, 1e3 * bench::median(times),
                    link_bytes);
        if (rate_mbit > 0) std::printf("  link_bytes_ms %.1f", 1e3 * link_bytes * 8 / (rate_mbit * 1e6));
        std::printf("\n");
    }
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
