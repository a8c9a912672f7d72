// What a byte costs between nodes, measured once per set of processes: the planner's other
// constants describe one node's memory, which on a cluster underestimates every algorithm's traffic
// and most of all MPI_Allreduce's (issue #13).
#pragma once

#include <mpi.h>

#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace mpix::sparse::detail {

// The shift s (1 <= s < ranks) by which every rank r sends to (r + s) % ranks and receives from
// (r - s) % ranks in the probe: the smallest that takes every rank to another node, else the one that
// takes the most ranks there. 0 when all ranks share one node (nothing to measure).
int probe_shift(const std::vector<int> &node_of_rank);

// The probe's estimate from its rounds, each the slowest rank's nanoseconds per byte: their median.
// A collective waits for its slowest rank, so each round keeps that one; a round the machine's noise
// slowed, or one that caught the link idle, lands at either end and decides nothing.
double link_ns_of_rounds(std::vector<double> slowest_per_round);

// Nanoseconds per byte a rank sees sending to another node while every rank does the same (all
// ranks of a node share its link, as in a collective): the same value on every rank; 0 when all
// ranks share one node. Collective over comm: kProbeRounds + 1 exchanges of kProbeBytes each way
// (the first opens the connection): ~280 ms at 1 Gbit/s, ~110 ms on the emulated cluster's faster
// links, a few ms on a real fast network.
// Latency is not probed: over TCP a small collective's time is not a round trip but steps of the
// stack's timers (8-16 ms or 0.04 ms for the same call on the emulated cluster), which a few
// samples cannot pin down.
double probe_link_ns(MPI_Comm comm, const std::vector<int> &node_of_rank);

// Large enough that the bandwidth shows through those timer steps: on the emulated cluster,
// exchanges of 256 KiB measured 30-60 ns per byte and of 1 MiB 9-15 (links of 1 and ~3 Gbit/s
// alike), of 4 MiB 9.6 and 3.5-4.7, against 9 and 3 for 16 MiB.
inline constexpr int kProbeBytes = 4 << 20;
// Timed rounds; odd, so the median is one of them. Once per set of processes (LinkCosts).
inline constexpr int kProbeRounds = 5;

// The links' cost per set of processes, for this process's lifetime: a communicator over processes
// that an earlier one probed reuses its value instead of probing again (a training job creates one
// per bucket or per process group; each probe costs a few exchanges of 4 MiB, and separate probes of
// the same links read 2.4-5.7 ns per byte in one run on the emulated cluster: one value keeps their
// plans consistent). Thread-safe.
class LinkCosts {
  public:
    // Processes are named by their ranks in MPI_COMM_WORLD, sorted: every member of a communicator
    // computes the same key. Empty (never cached) when a member is outside MPI_COMM_WORLD.
    using Key = std::vector<int>;
    static Key key_of(MPI_Comm comm);

    std::optional<double> find(const Key &key) const;
    void remember(const Key &key, double link_ns);

    // The link cost for comm's processes: the remembered value when every rank has one (agreed in
    // one small allreduce), else a fresh probe that every rank then remembers. Collective over comm.
    double link_ns(MPI_Comm comm, const std::vector<int> &node_of_rank);
    // Probes this process has run (tests: a second communicator over the same processes runs none).
    int probes() const;

  private:
    mutable std::mutex lock_;
    std::map<Key, double> known_;
    int probes_ = 0;
};

}  // namespace mpix::sparse::detail
