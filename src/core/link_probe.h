// What a byte costs between nodes, measured once when a communicator spanning several nodes is
// created: the planner's other constants describe one node's memory, which on a cluster
// underestimates every algorithm's traffic and most of all MPI_Allreduce's (issue #13).
#pragma once

#include <mpi.h>

#include <vector>

namespace mpix::sparse::detail {

// The shift s (1 <= s < ranks) by which every rank r sends to (r + s) % ranks and receives from
// (r - s) % ranks in the probe: the smallest that takes every rank to another node, else the one that
// takes the most ranks there. 0 when all ranks share one node (nothing to measure).
int probe_shift(const std::vector<int> &node_of_rank);

// Nanoseconds per byte a rank sees sending to another node while every rank does the same (all
// ranks of a node share its link, as in a collective), the slowest rank's: the same value on every
// rank. 0 when all ranks share one node. Collective over comm: three exchanges of kProbeBytes each
// way (one opens the connection, the faster of two counts): ~120 ms at 1 Gbit/s, ~50 ms on the
// emulated cluster's faster links, a few ms on a real fast network.
// Latency is not probed: over TCP a small collective's time is not a round trip but steps of the
// stack's timers (8-16 ms or 0.04 ms for the same call on the emulated cluster), which three samples
// cannot pin down.
double probe_link_ns(MPI_Comm comm, const std::vector<int> &node_of_rank);

// Large enough that the bandwidth shows through those timer steps: on the emulated cluster,
// exchanges of 256 KiB measured 30-60 ns per byte and of 1 MiB 9-15 (links of 1 and ~3 Gbit/s
// alike), of 4 MiB 9.6 and 3.5-4.7, against 9 and 3 for 16 MiB.
inline constexpr int kProbeBytes = 4 << 20;

}  // namespace mpix::sparse::detail
