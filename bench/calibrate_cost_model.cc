// Fits the planner's cost-model constants to this machine and rank count.
//
// For each algorithm (dense, aggregator, allgather) it times MPIX_Sparse_allreduce with that
// algorithm forced, over a grid of sizes and densities, subtracts the zero-block scan (already paid
// when the planner decides), and fits the model's constants by least squares (relative error) against
// the very features the planner computes (cost_features in core/planner.h). It prints measured and
// fitted times and the environment variables that install the fit:
//
//   mpirun -np 4 ./calibrate_cost_model [--max-bytes 67108864] [--iterations 10]
//   mpirun -np 4 ./calibrate_cost_model --elements [--iterations 10]   (element variant's constants)
//
// It links the library's internals to evaluate the planner's features exactly.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/block_bitmap.h"
#include "core/block_scan.h"
#include "core/node_layout.h"
#include "core/planner.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse::detail;

namespace {

struct Sample {
    std::vector<double> features;
    double micros;  // measured, scan subtracted
};

// Least squares of micros = sum(c_i * features_i), relative error, constants kept positive by
// dropping any that come out negative and refitting.
std::vector<double> fit(const std::vector<Sample> &samples, std::size_t k) {
    std::vector<bool> used(k, true);
    std::vector<double> c(k, 0.0);
    for (int round = 0; round < static_cast<int>(k); ++round) {
        std::vector<double> a(k * k, 0.0), b(k, 0.0);
        for (const Sample &s : samples) {
            const double w = 1.0 / std::max(1.0, s.micros * s.micros);
            for (std::size_t i = 0; i < k; ++i) {
                if (!used[i]) continue;
                b[i] += w * s.features[i] * s.micros;
                for (std::size_t j = 0; j < k; ++j)
                    if (used[j]) a[i * k + j] += w * s.features[i] * s.features[j];
            }
        }
        for (std::size_t i = 0; i < k; ++i)
            if (!used[i]) a[i * k + i] = 1.0;
        // Gaussian elimination with partial pivoting.
        std::vector<double> x = b;
        for (std::size_t col = 0; col < k; ++col) {
            std::size_t piv = col;
            for (std::size_t r = col + 1; r < k; ++r)
                if (std::fabs(a[r * k + col]) > std::fabs(a[piv * k + col])) piv = r;
            for (std::size_t j = 0; j < k; ++j)
                std::swap(a[col * k + j], a[piv * k + j]);
            std::swap(x[col], x[piv]);
            if (a[col * k + col] == 0) continue;
            for (std::size_t r = 0; r < k; ++r) {
                if (r == col) continue;
                const double m = a[r * k + col] / a[col * k + col];
                for (std::size_t j = 0; j < k; ++j)
                    a[r * k + j] -= m * a[col * k + j];
                x[r] -= m * x[col];
            }
        }
        bool negative = false;
        for (std::size_t i = 0; i < k; ++i) {
            c[i] = used[i] && a[i * k + i] != 0 ? x[i] / a[i * k + i] : 0.0;
            if (used[i] && c[i] < 0) {
                used[i] = false;
                negative = true;
            }
        }
        if (!negative) break;
    }
    for (double &v : c)
        v = std::max(0.0, v);
    return c;
}

double model(const std::vector<double> &c, const std::vector<double> &f) {
    double t = 0;
    for (std::size_t i = 0; i < c.size(); ++i)
        t += c[i] * f[i];
    return t;
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

// Mean time per call in µs, OSU style: each rank's mean, averaged over ranks.
template <class F>
double time_calls(int iterations, F &&call) {
    call();
    double total = 0;
    for (int i = 0; i < iterations; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        call();
        total += MPI_Wtime() - t0;
    }
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double mean = total / iterations * 1e6;
    MPI_Allreduce(MPI_IN_PLACE, &mean, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return mean / size;
}

// The planner's demand from exact per-rank counts and the exact union (one bin holding it): `on`
// marks this rank's blocks with data, `nonzero` counts them. Collective over MPI_COMM_WORLD.
Demand exact_demand(const BlockLayout &layout, const std::vector<unsigned char> &on, std::uint64_t nonzero) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<unsigned char> any(on.size());
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
    d.bin_width = layout.num_blocks();
    const auto u = static_cast<std::int64_t>(std::count(any.begin(), any.end(), 1));
    d.bins.assign(1, SumMax{u, u});  // (a braced list here trips GCC 12's -Wnonnull)
    static const bool cores_shared =
        learn_node_layout(MPI_COMM_WORLD).cores_shared;  // as the library's communicators see it
    d.cores_shared = cores_shared;
    return d;
}

// --elements: the element variant's per-block constants. One-element blocks make per-block work
// (listing, placing, scattering each pair) dominate, which the block grid cannot see; with the
// latency and per-byte constants at their defaults, the aggregator's and the allgather's per-block
// constants and the cost of zeroing the dense output are fitted together from forced runs of
// MPIX_Sparse_allreduce_elements (pairs sorted, as most callers pass them).
void calibrate_elements(int rank, int size, int iterations, const CostParams &defaults) {
    MPI_Comm comms[2] = {comm_for("aggregator"), comm_for("allgather")};
    const char *names[2] = {"aggregator", "allgather"};
    std::vector<Sample> samples;
    if (rank == 0)
        std::printf("# %-10s %12s %8s %12s %12s\n", "algorithm", "elements", "density", "us", "model_us (built-in)");
    for (std::uint64_t count : {std::uint64_t{1} << 18, std::uint64_t{1} << 20, std::uint64_t{1} << 22}) {
        for (double density : {0.001, 0.01, 0.1}) {
            const BlockLayout layout{count, 1, 4};
            std::mt19937_64 rng(static_cast<unsigned>(rank) * 7 + 1);
            std::vector<unsigned char> on(count, 0);
            std::vector<std::int64_t> indices;
            for (std::uint64_t k = 0; k < count; ++k)
                if (std::uniform_real_distribution<>(0, 1)(rng) < density) {
                    on[k] = 1;
                    indices.push_back(static_cast<std::int64_t>(k));
                }
            const std::vector<float> values(indices.size(), 1.0f);
            std::vector<float> out(count);
            Demand d = exact_demand(layout, on, indices.size());
            d.output_to_zero = true;
            const CostFeatures f = cost_features(d);
            const CostEstimate e = estimate_costs(d, defaults);
            // Unknowns: sparse_block_ns, allgather_block_ns, memory_ns; the rest at their defaults.
            const double known[2] = {
                defaults.sparse_alpha_us * f.aggregator[0] + defaults.sparse_beta_ns * f.aggregator[1] +
                    defaults.sparse_copy_ns * f.aggregator[2] + defaults.shared_core_gap_ns * f.aggregator[4],
                defaults.allgather_alpha_us * f.allgather[0] + defaults.allgather_beta_ns * f.allgather[1]};
            const std::vector<double> features[2] = {{f.aggregator[3], 0.0, f.output_zero},
                                                     {0.0, f.allgather[2], f.output_zero}};
            const double model_us[2] = {e.aggregator_us, e.allgather_us};
            for (int a = 0; a < 2; ++a) {
                const double us = time_calls(iterations, [&] {
                    MPIX_Sparse_allreduce_elements(static_cast<MPI_Count>(indices.size()), indices.data(),
                                                   values.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT,
                                                   MPI_SUM, comms[a]);
                });
                // Scaled by the measured time: fit() then minimizes the relative error of the whole
                // prediction (known part included), with unit weights (its targets stay below 1).
                std::vector<double> scaled = features[a];
                for (double &x : scaled)
                    x /= us;
                samples.push_back({scaled, (us - known[a]) / us});
                if (rank == 0)
                    std::printf("  %-10s %12llu %8.3f %12.1f %12.1f\n", names[a],
                                static_cast<unsigned long long>(count), density, us, model_us[a]);
            }
        }
    }
    if (rank == 0) {
        const std::vector<double> c = fit(samples, 3);
        const std::vector<double> current = {defaults.sparse_block_ns, defaults.allgather_block_ns, defaults.memory_ns};
        double err_fit = 0, err_default = 0;
        for (const Sample &s : samples) {
            const double rf = model(c, s.features) - s.micros;  // already relative
            const double rd = model(current, s.features) - s.micros;
            err_fit += rf * rf;
            err_default += rd * rd;
        }
        const double n = static_cast<double>(std::max<std::size_t>(1, samples.size()));
        std::printf("export MPIX_SPARSE_COST_SPARSE_BLOCK_NS=%.3g MPIX_SPARSE_COST_ALLGATHER_BLOCK_NS=%.3g "
                    "MPIX_SPARSE_COST_MEMORY_NS=%.3g   # elements on %d ranks: fit rms %.0f%%, defaults rms %.0f%%\n",
                    c[0], c[1], c[2], size, 100 * std::sqrt(err_fit / n), 100 * std::sqrt(err_default / n));
    }
    for (MPI_Comm &c : comms)
        MPIX_Sparse_comm_free(&c);
}

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::size_t max_bytes = std::size_t{64} << 20;
    int iterations = 10;
    bool elements = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--elements") == 0) elements = true;
        if (i + 1 == argc) break;
        if (std::strcmp(argv[i], "--max-bytes") == 0) max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
        if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
    }
    if (size < 2) {
        if (rank == 0) std::printf("calibrate_cost_model needs at least 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    const CostParams defaults;
    if (elements) {
        calibrate_elements(rank, size, iterations, defaults);
        MPI_Finalize();
        return 0;
    }
    const char *names[] = {"dense", "aggregator", "allgather"};
    MPI_Comm comms[3];
    for (int a = 0; a < 3; ++a)
        comms[a] = comm_for(names[a]);
    std::vector<Sample> samples[3];
    std::map<std::size_t, std::vector<double>> dense_per_size;  // ns per ring byte, per size
    const std::uint32_t block = 256;
    if (rank == 0) std::printf("# %-10s %12s %8s %12s %12s\n", "algorithm", "bytes", "density", "us", "scan_us");
    for (std::size_t bytes = std::size_t{256} << 10; bytes <= max_bytes; bytes *= 2) {
        const std::size_t count = bytes / 4;
        const BlockLayout layout{count, block, 4};
        for (double density : {0.01, 0.1, 0.5, 1.0}) {
            std::vector<float> in(count, 0.0f), out(count);
            std::mt19937_64 rng(static_cast<unsigned>(rank) * 7 + 1);
            BlockBitmap bitmap;
            bitmap.reset(layout.num_blocks());
            for (std::uint64_t k = 0; k < layout.num_blocks(); ++k)
                if (std::uniform_real_distribution<>(0, 1)(rng) < density)
                    for (std::uint32_t e = 0; e < layout.elems_of(k); ++e)
                        in[k * block + e] = 1.0f;
            // The planner's features, from exact per-rank counts and the exact union.
            const std::uint64_t nonzero = scan_blocks(reinterpret_cast<const std::byte *>(in.data()), layout, bitmap);
            std::vector<unsigned char> on(layout.num_blocks());
            for (std::uint64_t k = 0; k < layout.num_blocks(); ++k)
                on[k] = bitmap.test(k);
            const Demand d = exact_demand(layout, on, nonzero);
            const CostFeatures f = cost_features(d);
            const double scan_us = time_calls(
                iterations, [&] { scan_blocks(reinterpret_cast<const std::byte *>(in.data()), layout, bitmap); });
            // Block sizes here are 256 elements: the per-block constants are not identifiable from this
            // grid and keep their defaults (the fit covers latency and per-byte constants).
            const std::vector<double> features[3] = {{f.dense[0], f.dense[1]},
                                                     {f.aggregator[0], f.aggregator[1], f.aggregator[2]},
                                                     {f.allgather[0], f.allgather[1]}};
            const double fixed[3] = {
                0.0, defaults.sparse_block_ns * f.aggregator[3] + defaults.shared_core_gap_ns * f.aggregator[4],
                defaults.allgather_block_ns * f.allgather[2]};
            for (int a = 0; a < 3; ++a) {
                if (a == 2 && static_cast<double>(d.nonzero_max) * (block * 4 + 8) * size > 256e6) continue;
                const double us = time_calls(iterations, [&] {
                    MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM,
                                          comms[a]);
                });
                samples[a].push_back({features[a], a == 0 ? us : std::max(1.0, us - scan_us - fixed[a])});
                if (a == 0) dense_per_size[bytes].push_back((us - defaults.dense_alpha_us) / (f.dense[1] * 1e3) * 1e3);
                if (rank == 0)
                    std::printf("  %-10s %12zu %8.2f %12.1f %12.1f\n", names[a], bytes, density, us, scan_us);
            }
        }
    }
    if (rank == 0) {
        // Dense: MPI_Allreduce's per-byte cost per size (mean over densities), as a table.
        std::printf("export MPIX_SPARSE_COST_DENSE_TABLE=");
        const char *sep = "";
        for (const auto &[bytes, ns] : dense_per_size) {
            double mean = 0;
            for (double x : ns)
                mean += x;
            std::printf("%s%g:%.3g", sep, static_cast<double>(bytes) / 1048576.0,
                        mean / static_cast<double>(ns.size()));
            sep = ",";
        }
        std::printf("   # dense, alpha %.0f us\n", defaults.dense_alpha_us);
        const char *env[3][3] = {
            {"MPIX_SPARSE_COST_DENSE_ALPHA_US", "unused", nullptr},
            {"MPIX_SPARSE_COST_SPARSE_ALPHA_US", "MPIX_SPARSE_COST_SPARSE_BETA_NS", "MPIX_SPARSE_COST_SPARSE_COPY_NS"},
            {"MPIX_SPARSE_COST_ALLGATHER_ALPHA_US", "MPIX_SPARSE_COST_ALLGATHER_BETA_NS", nullptr}};
        std::printf("# fit on %d ranks: constant (default), then rms relative error of fit and of defaults\n", size);
        const std::vector<double> current[3] = {
            {defaults.dense_alpha_us, 0.0},
            {defaults.sparse_alpha_us, defaults.sparse_beta_ns, defaults.sparse_copy_ns},
            {defaults.allgather_alpha_us, defaults.allgather_beta_ns}};
        for (int a = 1; a < 3; ++a) {
            const std::vector<double> c = fit(samples[a], current[a].size());
            double err_fit = 0, err_default = 0;
            for (const Sample &s : samples[a]) {
                const double rf = (model(c, s.features) - s.micros) / std::max(1.0, s.micros);
                const double rd = (model(current[a], s.features) - s.micros) / std::max(1.0, s.micros);
                err_fit += rf * rf;
                err_default += rd * rd;
            }
            const double n = static_cast<double>(std::max<std::size_t>(1, samples[a].size()));
            std::printf("export");
            for (std::size_t i = 0; i < c.size(); ++i)
                std::printf(" %s=%.3g", env[a][i], c[i]);
            std::printf("   # %s: fit rms %.0f%%, defaults rms %.0f%%\n", names[a], 100 * std::sqrt(err_fit / n),
                        100 * std::sqrt(err_default / n));
        }
    }
    for (MPI_Comm &c : comms)
        MPIX_Sparse_comm_free(&c);
    MPI_Finalize();
    return 0;
}
