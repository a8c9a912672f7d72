// osu_sparse_iallreduce: overlap of the non-blocking sparse allreduce with computation, in the format
// of OSU's osu_iallreduce, with MPI_Iallreduce measured in the same run; and a "bucketed" mode that
// reduces a gradient in K buckets started one after another with computation between them (the way
// PyTorch DDP and Horovod overlap the backward pass with communication).
//
// Per message size and method, as osu_iallreduce does: the pure communication time (start + wait),
// then start, compute for that long, wait (Overall), with the compute time measured alone; Overlap
// = 100 * (1 - (Overall - Compute) / Pure). During the computation the benchmark may call the
// method's test function --test-calls times (OSU's -t); with --thread it asks MPI for
// MPI_THREAD_MULTIPLE, so that mpix_sparse's progress thread advances operations meanwhile.
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace po = boost::program_options;

namespace {

struct Options {
    std::size_t min_size = std::size_t{1} << 20, max_size = std::size_t{64} << 20;
    std::vector<double> densities{0.01};
    int iterations = 10, warmup = 2;
    int test_calls = 0;
    bool thread = false;
    int buckets = 0;  // bucketed mode when > 0
    std::size_t gradient_mib = 64;
    double compute_us = 2000;  // per bucket
    bool validate = false;
};

void check(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        std::fprintf(stderr, "%s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

double now() {
    return MPI_Wtime();
}

// A float vector in which round(density * blocks) random blocks of 256 are non-zero (rank-seeded).
void fill_sparse(std::vector<float> &v, double density, int rank, unsigned seed) {
    std::fill(v.begin(), v.end(), 0.0f);
    const std::size_t blocks = (v.size() + 255) / 256;
    const auto nonzero = static_cast<std::size_t>(density * static_cast<double>(blocks) + 0.5);
    std::mt19937 rng(seed * 7919u + static_cast<unsigned>(rank));
    std::vector<std::size_t> ids(blocks);
    for (std::size_t i = 0; i < blocks; ++i)
        ids[i] = i;
    for (std::size_t i = 0; i < nonzero; ++i) {
        std::swap(ids[i], ids[i + rng() % (blocks - i)]);
        const std::size_t lo = ids[i] * 256, hi = std::min(v.size(), lo + 256);
        for (std::size_t k = lo; k < hi; ++k)
            v[k] = static_cast<float>(1 + rng() % 100);
    }
}

// A non-blocking method: start, test, wait (one request at a time per call site).
struct Method {
    const char *name;
    std::function<void(const float *, float *, std::size_t, int)> start;  // slot
    std::function<bool(int)> test;
    std::function<void(int)> wait;
};

// Busy computation for `seconds`, calling test(slot) `calls` times spread over it (OSU's dummy
// compute with -t). Returns the seconds spent.
double compute(double seconds, int calls, const std::function<void()> &test) {
    const double t0 = now();
    const double step = calls > 0 ? seconds / calls : seconds;
    double next = t0 + step;
    volatile double sink = 0;
    while (now() - t0 < seconds) {
        for (int i = 0; i < 200; ++i)
            sink = sink + 1.0;
        if (calls > 0 && now() >= next) {
            test();
            next += step;
        }
    }
    return now() - t0;
}

double mean_over_ranks(double x) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return x / size;
}

std::vector<Method> make_methods(std::vector<MPI_Request> &mpi, std::vector<MPIX_Sparse_request> &ours) {
    return {
        {"MPI_Iallreduce",
         [&](const float *in, float *out, std::size_t n, int slot) {
             check(MPI_Iallreduce(in, out, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                  &mpi[static_cast<std::size_t>(slot)]),
                   "MPI_Iallreduce");
         },
         [&](int slot) {
             int flag = 0;
             MPI_Test(&mpi[static_cast<std::size_t>(slot)], &flag, MPI_STATUS_IGNORE);
             return flag != 0;
         },
         [&](int slot) { MPI_Wait(&mpi[static_cast<std::size_t>(slot)], MPI_STATUS_IGNORE); }},
        {"MPIX_Sparse_iallreduce",
         [&](const float *in, float *out, std::size_t n, int slot) {
             check(MPIX_Sparse_iallreduce(in, out, static_cast<MPI_Count>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                          &ours[static_cast<std::size_t>(slot)]),
                   "MPIX_Sparse_iallreduce");
         },
         [&](int slot) {
             int flag = 0;
             check(MPIX_Sparse_test(&ours[static_cast<std::size_t>(slot)], &flag), "MPIX_Sparse_test");
             return flag != 0;
         },
         [&](int slot) { check(MPIX_Sparse_wait(&ours[static_cast<std::size_t>(slot)]), "MPIX_Sparse_wait"); }},
    };
}

void overlap_mode(const Options &o, int rank) {
    std::vector<MPI_Request> mpi(1, MPI_REQUEST_NULL);
    std::vector<MPIX_Sparse_request> ours(1, MPIX_SPARSE_REQUEST_NULL);
    const std::vector<Method> methods = make_methods(mpi, ours);
    if (rank == 0)
        std::printf("# %-10s %8s  %-24s %12s %12s %15s %11s\n", "Size", "Density", "Method", "Overall(us)",
                    "Compute(us)", "Pure Comm.(us)", "Overlap(%)");
    for (std::size_t bytes = o.min_size; bytes <= o.max_size; bytes *= 2) {
        const std::size_t n = bytes / sizeof(float);
        std::vector<float> in(n), out(n), want(n);
        for (double density : o.densities) {
            fill_sparse(in, density, rank, static_cast<unsigned>(bytes));
            check(MPI_Allreduce(in.data(), want.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
                  "MPI_Allreduce");
            for (const Method &m : methods) {
                // Pure communication.
                double pure = 0;
                for (int i = 0; i < o.warmup + o.iterations; ++i) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    const double t0 = now();
                    m.start(in.data(), out.data(), n, 0);
                    m.wait(0);
                    if (i >= o.warmup) pure += now() - t0;
                }
                pure /= o.iterations;
                const double target = mean_over_ranks(pure);
                // Communication and computation of the same length.
                double overall = 0, computed = 0;
                for (int i = 0; i < o.warmup + o.iterations; ++i) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    const double t0 = now();
                    m.start(in.data(), out.data(), n, 0);
                    const double c = compute(target, o.test_calls, [&] { m.test(0); });
                    m.wait(0);
                    if (i >= o.warmup) {
                        overall += now() - t0;
                        computed += c;
                    }
                }
                overall = mean_over_ranks(overall / o.iterations);
                computed = mean_over_ranks(computed / o.iterations);
                const double pure_avg = target;
                const double overlap = std::clamp(100.0 * (1.0 - (overall - computed) / pure_avg), 0.0, 100.0);
                bool ok = true;
                if (o.validate) ok = out == want;
                int all_ok = ok ? 1 : 0;
                MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
                if (rank == 0)
                    std::printf("%-12zu %8g  %-24s %12.2f %12.2f %15.2f %11.2f%s\n", bytes, density, m.name,
                                overall * 1e6, computed * 1e6, pure_avg * 1e6, overlap,
                                o.validate ? (all_ok ? "  ok" : "  FAIL") : "");
            }
        }
    }
}

// A gradient of gradient_mib MiB in `buckets` buckets; per bucket: compute, then reduce it.
void bucketed_mode(const Options &o, int rank) {
    const std::size_t n = o.gradient_mib * (std::size_t{1} << 20) / sizeof(float);
    const auto k = static_cast<std::size_t>(o.buckets);
    const std::size_t per = (n + k - 1) / k;
    std::vector<float> in(n), out(n), want(n);
    std::vector<MPI_Request> mpi(k, MPI_REQUEST_NULL);
    std::vector<MPIX_Sparse_request> ours(k, MPIX_SPARSE_REQUEST_NULL);
    const std::vector<Method> methods = make_methods(mpi, ours);
    const double compute_s = o.compute_us * 1e-6;
    if (rank == 0)
        std::printf("# Bucketed: %zu MiB of floats in %d buckets, %.0f us of compute before each; times in us "
                    "(mean over ranks of each rank's mean)\n# %8s  %14s %16s %16s %18s %14s\n",
                    o.gradient_mib, o.buckets, o.compute_us, "Density", "Compute only", "Sparse blocking",
                    "MPI_Iallreduce", "Sparse non-blocking", "vs blocking");
    for (double density : o.densities) {
        fill_sparse(in, density, rank, 77);
        check(MPI_Allreduce(in.data(), want.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce");
        auto bucket = [&](std::size_t b, std::size_t &len) {
            const std::size_t lo = b * per;
            len = std::min(n, lo + per) - lo;
            return lo;
        };
        auto timed = [&](const std::function<void()> &body) {
            double total = 0;
            for (int i = 0; i < o.warmup + o.iterations; ++i) {
                MPI_Barrier(MPI_COMM_WORLD);
                const double t0 = now();
                body();
                if (i >= o.warmup) total += now() - t0;
            }
            return mean_over_ranks(total / o.iterations);
        };
        const double compute_only = timed([&] {
            for (std::size_t b = 0; b < k; ++b)
                compute(compute_s, 0, [] {});
        });
        const double blocking = timed([&] {
            for (std::size_t b = 0; b < k; ++b) {
                std::size_t len = 0;
                const std::size_t lo = bucket(b, len);
                compute(compute_s, 0, [] {});
                check(MPIX_Sparse_allreduce(in.data() + lo, out.data() + lo, static_cast<MPI_Count>(len), MPI_FLOAT,
                                            MPI_SUM, MPI_COMM_WORLD),
                      "MPIX_Sparse_allreduce");
            }
        });
        double nonblocking[2] = {0, 0};
        bool ok = out == want;
        for (std::size_t mi = 0; mi < methods.size(); ++mi) {
            const Method &m = methods[mi];
            nonblocking[mi] = timed([&] {
                for (std::size_t b = 0; b < k; ++b) {
                    // The earlier buckets are tested during this bucket's computation.
                    compute(compute_s, o.test_calls, [&] {
                        for (std::size_t j = 0; j < b; ++j)
                            m.test(static_cast<int>(j));
                    });
                    std::size_t len = 0;
                    const std::size_t lo = bucket(b, len);
                    m.start(in.data() + lo, out.data() + lo, len, static_cast<int>(b));
                }
                for (std::size_t b = 0; b < k; ++b)
                    m.wait(static_cast<int>(b));
            });
            ok &= out == want;
        }
        int all_ok = ok ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (rank == 0)
            std::printf("%10g  %14.0f %16.0f %16.0f %18.0f %13.2fx%s\n", density, compute_only * 1e6, blocking * 1e6,
                        nonblocking[0] * 1e6, nonblocking[1] * 1e6, blocking / nonblocking[1],
                        o.validate ? (all_ok ? "  ok" : "  FAIL") : "");
    }
}

std::vector<double> parse_list(const std::string &s) {
    std::vector<double> v;
    std::size_t at = 0;
    while (at < s.size()) {
        const std::size_t comma = std::min(s.find(',', at), s.size());
        v.push_back(std::stod(s.substr(at, comma - at)));
        at = comma + 1;
    }
    return v;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    std::string sizes, densities = "0.01";
    po::options_description desc("osu_sparse_iallreduce options");
    desc.add_options()("help,h", "this text")("message-size,m", po::value(&sizes), "MIN:MAX bytes [1048576:67108864]")(
        "density", po::value(&densities),
        "block densities, comma-separated [0.01]")("iterations,i", po::value(&o.iterations), "timed iterations [10]")(
        "warmup,x", po::value(&o.warmup), "warm-up iterations [2]")("test-calls,t", po::value(&o.test_calls),
                                                                    "test calls during each computation [0]")(
        "thread", po::bool_switch(&o.thread), "MPI_THREAD_MULTIPLE: mpix_sparse's progress thread runs")(
        "buckets", po::value(&o.buckets), "bucketed mode: number of buckets [0: off]")(
        "gradient-mib", po::value(&o.gradient_mib), "bucketed mode: gradient size in MiB [64]")(
        "compute-us", po::value(&o.compute_us), "bucketed mode: compute before each bucket, us [2000]")(
        "validate,c", po::bool_switch(&o.validate), "check results against MPI_Allreduce");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
        if (!sizes.empty()) {
            const std::size_t colon = sizes.find(':');
            o.min_size = std::stoull(sizes.substr(0, colon));
            o.max_size = colon == std::string::npos ? o.min_size : std::stoull(sizes.substr(colon + 1));
        }
        o.densities = parse_list(densities);
    } catch (const std::exception &e) {
        std::cerr << "osu_sparse_iallreduce: " << e.what() << "\n" << desc;
        return 2;
    }
    if (vm.count("help")) {
        std::cout << desc;
        return 0;
    }
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, o.thread ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        std::printf("# OSU MPI Sparse Non-blocking Allreduce Latency Test\n# Ranks: %d, Type: float, Pattern: random, "
                    "Block size: 256, Test calls: %d, Thread level: %s, Iterations: %d, Warm-up: %d\n",
                    size, o.test_calls, provided >= MPI_THREAD_MULTIPLE ? "multiple (progress thread)" : "single",
                    o.iterations, o.warmup);
    }
    if (o.buckets > 0)
        bucketed_mode(o, rank);
    else
        overlap_mode(o, rank);
    MPI_Finalize();
    return 0;
}
