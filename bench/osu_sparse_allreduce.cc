// osu_sparse_allreduce: latency of MPIX_Sparse_allreduce against MPI_Allreduce in the manner of the
// OSU micro-benchmarks (osu_allreduce), one row per message size and density. See bench/README.md.
#include "bench_context.h"
#include "bench_options.h"
#include "process_heap.h"
#include "report.h"
#include "row_benchmark.h"
#include "row_fields.h"

#include <mpix_sparse/mpix_sparse.h>

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <ctime>
#include <exception>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace bench;

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// Processor names of all ranks of comm, distinct, in rank order of first appearance (on rank 0).
std::vector<std::string> host_names(MPI_Comm comm, int nranks) {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    std::vector<char> all(static_cast<std::size_t>(nranks) * MPI_MAX_PROCESSOR_NAME);
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);
    std::vector<std::string> hosts;
    std::set<std::string> seen;
    for (int r = 0; r < nranks; ++r) {
        std::string h(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
        if (seen.insert(h).second) hosts.push_back(h);
    }
    return hosts;
}

Record run_metadata(const BenchContext &ctx, int world_size) {
    const BenchOptions &o = ctx.opts;
    const std::vector<std::string> hosts = host_names(ctx.base_comm, ctx.nranks);
    Record m;
    m.set_text("benchmark", "osu_sparse_allreduce");
    m.set_text("library_version", std::to_string(MPIX_SPARSE_VERSION_MAJOR) + "." +
                                      std::to_string(MPIX_SPARSE_VERSION_MINOR) + "." +
                                      std::to_string(MPIX_SPARSE_VERSION_PATCH));
    m.set_text("command_line", o.command_line);
    m.set_int("ranks", ctx.nranks);
    m.set_int("world_ranks", world_size);
    m.set_text("hostname", hosts.empty() ? "" : hosts.front());
    m.set_list("hosts", hosts);
    m.set_text("date", utc_now());
    m.set_text("type", element_type_name(o.type));
    m.set_text("pattern", pattern_name(o.pattern));
    m.set_int("block_size", o.block_size);
    m.set_text("variant", variant_name(o.variant));
    m.set_text("buffers", o.cuda ? "cuda" : o.alloc_mem ? "alloc_mem" : "host");
    m.set_int("seed", static_cast<std::int64_t>(o.seed));
    if (o.pattern == Pattern::Zipf) m.set_real("zipf_s", o.zipf_s);
    m.set_int("min_size", static_cast<std::int64_t>(o.min_size));
    m.set_int("max_size", static_cast<std::int64_t>(o.max_size));
    m.set_int("iterations", o.iterations);
    m.set_int("warmup", o.warmup);
    m.set_real("time_limit", o.time_limit);
    m.set_bool("validate", o.validate);
    m.set_text("heap", o.keep_heap ? "kept" : "default");
    m.set_bool("complete", false);  // set once the last row is in
    return m;
}

void print_header(const BenchContext &ctx, const Table &table) {
    const BenchOptions &o = ctx.opts;
    std::printf("# OSU MPI Sparse Allreduce Latency Test\n");
    std::printf("# Ranks: %d, Type: %s, Pattern: %s, Block size: %lld, Variant: %s, Seed: %llu", ctx.nranks,
                element_type_name(o.type), pattern_name(o.pattern), static_cast<long long>(o.block_size),
                variant_name(o.variant), static_cast<unsigned long long>(o.seed));
    if (o.pattern == Pattern::Zipf) std::printf(", Zipf s: %g", o.zipf_s);
    if (o.cuda) std::printf(", Buffers: CUDA device");
    if (o.alloc_mem) std::printf(", Buffers: MPIX_Sparse_alloc_mem");
    if (o.keep_heap) std::printf(", Heap: kept");
    if (o.variant == Variant::Block) std::printf(", Floor: memcpy or streaming stores, the faster");
    std::printf(", Warm-up: %d, Iterations: %d\n", o.warmup, o.iterations);
    std::printf("%s\n", table.header().c_str());
    std::fflush(stdout);
}

// Runs every (size, density) row; returns whether all checks passed.
bool run_rows(const BenchContext &ctx, int world_size) {
    const BenchOptions &o = ctx.opts;
    std::unique_ptr<RowBenchmark> bench = o.cuda                        ? make_device_block_variant(ctx)
                                          : o.variant == Variant::Block ? make_block_variant(ctx)
                                                                        : make_element_variant(ctx);
    std::vector<Column> columns = bench->columns();
    if (o.profile) {
        const std::vector<Column> phases = profile_columns();
        columns.insert(columns.end(), phases.begin(), phases.end());
    }
    if (o.validate) columns.push_back(check_column());
    const Table table(std::move(columns), o.full);
    Record metadata = run_metadata(ctx, world_size);
    std::vector<Record> rows;
    const bool root = ctx.rank == 0;
    if (root) print_header(ctx, table);

    auto write_json = [&] {
        std::string error;
        if (root && !o.json_path.empty() && !write_json_report(o.json_path, metadata, rows, error))
            std::fprintf(stderr, "# ERROR: --json: %s\n", error.c_str());
    };

    bool all_ok = true;
    const std::size_t esize = element_size(o.type);
    for (std::size_t bytes = o.min_size; bytes <= o.max_size; bytes *= 2) {
        const std::size_t count = bytes / esize;
        if (count == 0) continue;  // smaller than one element
        if (count > static_cast<std::size_t>(INT_MAX)) {
            if (root) std::printf("# size %zu skipped: MPI_Allreduce counts are int\n", bytes);
            break;
        }
        for (double density : o.densities) {
            bool ok = true;
            Record row = bench->run_row(bytes, density, ok);
            // The statistics reset before the timed calls cleared the profile: it holds those calls.
            if (o.profile) add_profile_fields(row, summarize_profile(ctx.lib_comm, ctx.base_comm));
            all_ok &= ok;
            if (root) {
                std::printf("%s\n", table.row(row).c_str());
                std::fflush(stdout);
                rows.push_back(std::move(row));
                write_json();  // after every row, so a cut-short run keeps what it measured
            }
        }
        if (bytes > o.max_size / 2) break;  // doubling would overflow or pass MAX
    }

    metadata.set_bool("complete", true);
    metadata.set_text("validation", !o.validate ? "not requested" : all_ok ? "passed" : "failed");
    metadata.set_bool("checks_passed", all_ok);
    write_json();
    if (root) {
        if (!all_ok)
            std::printf("# FAILED: %s (details on stderr)\n",
                        o.validate ? "validation or library counter checks" : "library counter checks");
        else if (o.validate)
            std::printf("# all validations passed\n");
        std::fflush(stdout);
    }
    return all_ok;
}

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int world_rank = 0, world_size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    // Every rank parses the same argv, so all ranks take the same branch without communicating.
    BenchOptions opts;
    std::string message;
    switch (parse_options(argc, argv, opts, message)) {
    case ParseResult::Help:
        if (world_rank == 0) std::printf("%s", message.c_str());
        MPI_Finalize();
        return 0;
    case ParseResult::Error:
        if (world_rank == 0) std::fprintf(stderr, "osu_sparse_allreduce: %s (try --help)\n", message.c_str());
        MPI_Finalize();
        return 1;
    case ParseResult::Run: break;
    }
    if (opts.keep_heap && !keep_freed_blocks_in_heap()) {
        if (world_rank == 0) std::fprintf(stderr, "osu_sparse_allreduce: --keep-heap: needs glibc's mallopt\n");
        MPI_Finalize();
        return 1;
    }

    // The block size reaches the library through the communicator, as an application would set it.
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_sparse_block_size", std::to_string(opts.block_size).c_str());
    if (opts.profile) MPI_Info_set(info, "mpix_sparse_profile", "on");
    MPI_Comm lib_comm = MPI_COMM_NULL;
    check_mpi(MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, &lib_comm), "MPIX_Sparse_comm_create");
    MPI_Info_free(&info);
    if (lib_comm == MPI_COMM_NULL) {
        // A dedicated aggregator (MPIX_SPARSE_AGGREGATOR_MODE=dedicated): it served the workers inside
        // MPIX_Sparse_comm_create and has nothing to measure.
        MPI_Finalize();
        return 0;
    }

    MPI_Comm base_comm = MPI_COMM_NULL;
    MPI_Comm_dup(lib_comm, &base_comm);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(lib_comm, &rank);
    MPI_Comm_size(lib_comm, &nranks);
    BenchContext ctx{opts, lib_comm, base_comm, rank, nranks};
    for (std::size_t i = 0; opts.forced && i < kForcedAlgorithms.size(); ++i) {
        MPI_Info forced;
        MPI_Info_create(&forced);
        MPI_Info_set(forced, "mpix_sparse_block_size", std::to_string(opts.block_size).c_str());
        MPI_Info_set(forced, "mpix_sparse_algorithm", kForcedAlgorithms[i]);
        check_mpi(MPIX_Sparse_comm_create(MPI_COMM_WORLD, forced, &ctx.forced[i]), "MPIX_Sparse_comm_create");
        MPI_Info_free(&forced);
    }

    bool ok = false;
    try {
        ok = run_rows(ctx, world_size);
    } catch (const std::exception &e) {
        // Every rank meets the same condition (e.g. -d cuda without a device): end cleanly.
        if (rank == 0) std::fprintf(stderr, "osu_sparse_allreduce: %s\n", e.what());
        ok = false;
    }

    MPI_Comm_free(&base_comm);
    for (MPI_Comm &c : ctx.forced)
        if (c != MPI_COMM_NULL) check_mpi(MPIX_Sparse_comm_free(&c), "MPIX_Sparse_comm_free");
    check_mpi(MPIX_Sparse_comm_free(&lib_comm), "MPIX_Sparse_comm_free");
    MPI_Finalize();
    return ok ? 0 : 1;
}
