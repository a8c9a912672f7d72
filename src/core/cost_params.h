// Machine constants of the cost model (core/planner.h, docs/architecture.md). The defaults were fitted
// with bench/calibrate_cost_model and checked with the OSU-style sweep on the reference machine (a
// 2-core EPYC VM, 4 ranks, Open MPI 4.1 shared memory, UCX 1.13 shared memory); MPIX_SPARSE_COST_*
// environment variables override them.
#pragma once

#include <vector>

namespace mpix::sparse::detail {

// MPI_Allreduce's cost per byte of 2(P-1)/P * N for messages of `mib` MiB.
struct DensePoint {
    double mib;
    double ns;
};

struct CostParams {
    // Dense MPI_Allreduce: latency (µs), and its per-byte cost by message size (interpolated in log
    // size, clamped at the ends). It is not one number: it rises as buffers leave the caches and again
    // where Open MPI switches algorithm for large messages (here between 16 and 32 MiB). Up to 4 MiB
    // the first fit (0.28-0.55, 2026-11-30) held buffers that stayed in the caches; every later
    // machine measured 0.55-1.3 there, between other calls as in an application, and the planner
    // sent 256 KiB-1 MiB at 50-100% to MPI_Allreduce where the aggregator was 1.1-1.5x faster
    // (docs/performance.md, the eleventh session).
    double dense_alpha_us = 40.0;
    std::vector<DensePoint> dense_table = {{0.25, 0.60}, {1, 0.60},  {2, 0.62},  {4, 0.62},
                                           {8, 0.67},    {16, 0.71}, {32, 1.31}, {64, 1.34}};
    // Aggregator streaming: fixed cost (µs: agreement, message round trips, completion barrier), ns per
    // byte the busiest rank sends or receives, and ns per byte of blocks that travel packed (gathered
    // at the sender, placed at the receiver) instead of as dense runs.
    // Refitted for beta and copy after payloads between ranks of one node began to travel by
    // reference (packed blocks are packed straight into shared memory and read in place: 0.38 ->
    // 0.127 ns per packed byte; docs/performance.md, "The planner on one node after shared segments"),
    // and again after the output was written once and the streaming loops began to prefetch
    // (beta 0.249 -> 0.145, copy 0.127 -> 0.096: "The output written once"). Alpha's fits (246, 286)
    // were not taken: they send 256 KiB-1 MiB calls at 10% to MPI_Allreduce, 2.5x slower there.
    double sparse_alpha_us = 80.0;
    double sparse_beta_ns = 0.145;
    double sparse_copy_ns = 0.096;
    // Refitted after the allgather began to scatter gathered pairs into output tiles instead of
    // reducing them through counted windows (docs/performance.md, "The element variant: scattered
    // pairs"): allgather beta 1.5 -> 0.75 (calibrate_cost_model's block grid fitted 0.72); the three
    // per-block and output constants below with calibrate_cost_model --elements (sparse block 3 ->
    // 7.3, allgather block 5 -> 0, memory 0.15 -> 0.105).
    // ns of per-block work (accumulate, list, place) per block the busiest rank handles: invisible for
    // 256-element blocks, dominant for the element variant's one-element blocks.
    double sparse_block_ns = 7.3;
    // ns per byte of the output's gaps that the aggregators' closing barrier waits for when a node
    // runs more ranks than it has cores (4 ranks on 2 cores: the barrier phase took 0.02-0.03 ns
    // per gap byte at 1%, 4-64 MiB, and the allgather, which ends without one, ran 1.1-1.3x faster
    // there; docs/performance.md, the twelfth session).
    double shared_core_gap_ns = 0.025;
    // Allgather of non-zero blocks or pairs: latency per log2(P) step (µs), ns per byte gathered, ns
    // per block merged (P * D).
    double allgather_alpha_us = 30.0;
    double allgather_beta_ns = 0.75;
    double allgather_block_ns = 0.0;
    // ns per byte of an output every algorithm must write whole (the element variant's dense output,
    // which the dense path fills when it densifies the pairs). The block variant's sparse paths write
    // their output with the results, inside what the fitted constants above measure; its dense path
    // has MPI write it.
    double memory_ns = 0.105;
    // ns per byte crossing PCIe when some rank's buffers are in device memory: the dense path stages
    // whole buffers both ways, the sparse ones only non-zero blocks and the union (not fitted on a GPU
    // machine yet: ~25 GB/s, a PCIe 4/5 link shared by a few ranks).
    double pcie_ns = 0.04;
    // ns per byte a rank sends to another node while every rank does the same (a node's ranks share
    // its link). 0 on one node; measured when a communicator spanning nodes is created (core/
    // link_probe.h) unless set here (MPIX_SPARSE_COST_LINK_NS). Each algorithm's bytes that cross
    // nodes cost this on top of the on-node constants above.
    double link_ns = 0.0;
    // A sparse algorithm must be predicted this much faster than dense to be chosen: dense is never
    // worse than MPI_Allreduce, so uncertainty should fall on its side.
    double sparse_margin = 1.15;
};

}  // namespace mpix::sparse::detail
