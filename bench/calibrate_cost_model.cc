// Fits the planner's cost-model constants to this machine and rank count.
//
// For each algorithm (dense, aggregator, allgather) it times MPIX_Sparse_allreduce with that
// algorithm forced, over a grid of sizes and densities, subtracts the cost of the zero-block scan
// (already paid when the planner decides), and fits latency + per-byte constants by least squares
// against the same features the planner computes (core/planner.h). It prints the fit, its error,
// and the environment variables that install it:
//
//   mpirun -np 4 ./calibrate_cost_model [--max-bytes 67108864] [--iterations 10]
//
// It links the library's internals to evaluate the planner's features exactly.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/block_bitmap.h"
#include "core/block_scan.h"
#include "core/planner.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse;

namespace {

struct Sample {
    double feature; // the planner's cost with alpha = 0, beta = 1
    double latency_steps;
    double micros;  // measured, scan subtracted
};

struct Fit {
    double alpha = 0, beta = 0, rms_relative = 0;
};

// Least squares of micros = alpha * latency_steps + beta * feature.
Fit fit(const std::vector<Sample> &s) {
    double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
    for (const Sample &x : s) {
        // Weight by 1/t^2: relative error matters (small and large calls alike).
        const double w = 1.0 / std::max(1.0, x.micros * x.micros);
        a11 += w * x.latency_steps * x.latency_steps;
        a12 += w * x.latency_steps * x.feature;
        a22 += w * x.feature * x.feature;
        b1 += w * x.latency_steps * x.micros;
        b2 += w * x.feature * x.micros;
    }
    Fit f;
    const double det = a11 * a22 - a12 * a12;
    if (det == 0) return f;
    f.alpha = std::max(1.0, (b1 * a22 - b2 * a12) / det);
    f.beta = std::max(1e-4, (a11 * b2 - a12 * b1) / det);
    double err = 0;
    for (const Sample &x : s) {
        const double model = f.alpha * x.latency_steps + f.beta * x.feature;
        err += (model - x.micros) * (model - x.micros) / std::max(1.0, x.micros * x.micros);
    }
    f.rms_relative = std::sqrt(err / static_cast<double>(s.size()));
    return f;
}

MPI_Comm comm_for(const char *algorithm) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_sparse_algorithm", algorithm);
    MPI_Info_set(info, "mpix_sparse_dense_below", "0");
    MPI_Comm c;
    MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, &c);
    MPI_Info_free(&info);
    return c;
}

// Mean time per call in µs, the slowest rank's mean.
template <class F>
double time_calls(int iterations, F &&call) {
    call();
    MPI_Barrier(MPI_COMM_WORLD);
    double total = 0;
    for (int i = 0; i < iterations; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        call();
        total += MPI_Wtime() - t0;
    }
    double mean = total / iterations * 1e6;
    MPI_Allreduce(MPI_IN_PLACE, &mean, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return mean;
}

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::size_t max_bytes = std::size_t{64} << 20;
    int iterations = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--max-bytes") == 0) max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
        if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
    }
    if (size < 2) {
        if (rank == 0) std::printf("calibrate_cost_model needs at least 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    const char *names[] = {"dense", "aggregator", "allgather"};
    MPI_Comm comms[3];
    for (int a = 0; a < 3; ++a) comms[a] = comm_for(names[a]);
    std::vector<Sample> samples[3];
    const std::uint32_t block = 256;
    const CostParams unit{0, 1, 0, 1, 0, 0, 1}; // dense beta, sparse beta, allgather beta = 1
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (rank == 0) std::printf("# %-10s %12s %8s %12s %12s\n", "algorithm", "bytes", "density", "us", "scan_us");
    for (std::size_t bytes = std::size_t{256} << 10; bytes <= max_bytes; bytes *= 4) {
        const std::size_t count = bytes / 4;
        const BlockLayout layout{count, block, 4};
        for (double density : {0.01, 0.1, 0.5, 1.0}) {
            std::vector<float> in(count, 0.0f), out(count), scratch(count);
            std::mt19937_64 rng(static_cast<unsigned>(rank) * 7 + 1);
            BlockBitmap bitmap;
            bitmap.reset(layout.num_blocks());
            for (std::uint64_t k = 0; k < layout.num_blocks(); ++k)
                if (std::uniform_real_distribution<>(0, 1)(rng) < density)
                    for (std::uint32_t e = 0; e < layout.elems_of(k); ++e) in[k * block + e] = 1.0f;
            // The planner's features, from exact per-rank counts.
            const std::uint64_t nonzero =
                scan_blocks(reinterpret_cast<const std::byte *>(in.data()), layout, bitmap, nullptr);
            std::vector<unsigned char> on(layout.num_blocks()), any(layout.num_blocks());
            for (std::uint64_t k = 0; k < layout.num_blocks(); ++k) on[k] = bitmap.test(k);
            MPI_Allreduce(on.data(), any.data(), static_cast<int>(on.size()), MPI_UNSIGNED_CHAR, MPI_BOR, MPI_COMM_WORLD);
            long long sum = static_cast<long long>(nonzero), max = sum;
            MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &max, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            Demand d;
            d.workers = size;
            d.aggregators = size;
            d.layout = layout;
            d.nonzero_sum = static_cast<std::uint64_t>(sum);
            d.nonzero_max = static_cast<std::uint64_t>(max);
            // One bin holding the exact union, so the union estimate equals the measured union.
            d.bin_width = layout.num_blocks();
            const auto u = static_cast<std::int64_t>(std::count(any.begin(), any.end(), 1));
            d.bins = {SumMax{u, u}};
            const CostEstimate feature = estimate_costs(d, unit);
            // What the scan costs (the sparse algorithms pay it before the planner decides).
            const double scan_us = time_calls(iterations, [&] {
                scan_blocks(reinterpret_cast<const std::byte *>(in.data()), layout, bitmap,
                            reinterpret_cast<std::byte *>(scratch.data()));
            });
            const double log_p = std::ceil(std::log2(static_cast<double>(size)));
            const double features[3] = {feature.dense_us, feature.aggregator_us, feature.allgather_us};
            const double steps[3] = {1, 1, log_p};
            for (int a = 0; a < 3; ++a) {
                if (a == 2 && static_cast<double>(max) * (block * 4 + 8) * size > 512e6) continue;
                const double us = time_calls(iterations, [&] {
                    MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM,
                                          comms[a]);
                });
                const double net = a == 0 ? us : std::max(1.0, us - scan_us);
                samples[a].push_back({features[a], steps[a], net});
                if (rank == 0)
                    std::printf("  %-10s %12zu %8.2f %12.1f %12.1f\n", names[a], bytes, density, us, scan_us);
            }
        }
    }
    if (rank == 0) {
        const char *env[3][2] = {{"MPIX_SPARSE_COST_DENSE_ALPHA_US", "MPIX_SPARSE_COST_DENSE_BETA_NS"},
                                 {"MPIX_SPARSE_COST_SPARSE_ALPHA_US", "MPIX_SPARSE_COST_SPARSE_BETA_NS"},
                                 {"MPIX_SPARSE_COST_ALLGATHER_ALPHA_US", "MPIX_SPARSE_COST_ALLGATHER_BETA_NS"}};
        std::printf("# fit on %d ranks (relative rms error of the model)\n", size);
        for (int a = 0; a < 3; ++a) {
            const Fit f = fit(samples[a]);
            std::printf("export %s=%.1f %s=%.3f   # %s, rms %.0f%%\n", env[a][0], f.alpha, env[a][1], f.beta, names[a],
                        100 * f.rms_relative);
        }
    }
    for (MPI_Comm &c : comms) MPIX_Sparse_comm_free(&c);
    MPI_Finalize();
    return 0;
}
