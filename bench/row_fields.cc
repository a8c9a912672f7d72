#include "row_fields.h"

#include "rng.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace bench {

PatternSpec pattern_spec(const BenchContext &ctx) {
    PatternSpec spec;
    spec.pattern = ctx.opts.pattern;
    spec.seed = ctx.opts.seed;
    spec.zipf_s = ctx.opts.zipf_s;
    spec.rank = ctx.rank;
    spec.nranks = ctx.nranks;
    return spec;
}

std::uint64_t value_seed(const BenchContext &ctx, std::size_t bytes, double density) {
    std::uint64_t density_bits = 0;
    std::memcpy(&density_bits, &density, sizeof density);
    return derive_seed(
        {ctx.opts.seed, 0x76616c756573ULL /* "values" */, bytes, density_bits, static_cast<std::uint64_t>(ctx.rank)});
}

std::string row_label(std::size_t bytes, double density) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "size %zu B, density %g", bytes, density);
    return buf;
}

void add_shape_fields(Record &r, const BenchContext &ctx, std::size_t bytes, std::int64_t count, double density,
                      const std::string &unit, std::int64_t units, std::int64_t nonzero_here, std::int64_t union_units,
                      const ZipfBatch &zipf) {
    double nonzero_mean = static_cast<double>(nonzero_here);
    MPI_Allreduce(MPI_IN_PLACE, &nonzero_mean, 1, MPI_DOUBLE, MPI_SUM, ctx.base_comm);
    nonzero_mean /= ctx.nranks;
    const double n = static_cast<double>(units);
    r.set_int("size", static_cast<std::int64_t>(bytes));
    r.set_int("count", count);
    r.set_real("density", density);
    r.set_text("unit", unit);
    r.set_int("units", units);
    r.set_real("nonzero_units_per_rank", nonzero_mean);
    r.set_real("density_actual", units ? nonzero_mean / n : 0.0);
    r.set_int("union_units", union_units);
    r.set_real("union_density", units ? static_cast<double>(union_units) / n : 0.0);
    if (ctx.opts.pattern == Pattern::Zipf) {
        r.set_real("zipf_lookups", zipf.lookups);  // infinite (null) at density 1
        r.set_bool("zipf_lookups_drawn", zipf.drawn);
    }
}

void add_latency_fields(Record &r, const std::string &method, const LatencySummary &l) {
    r.set_real(method + "_avg_us", l.avg_us);
    r.set_real(method + "_min_us", l.min_us);
    r.set_real(method + "_max_us", l.max_us);
    r.set_real(method + "_faults_per_call", l.faults_per_call);
}

void add_stats_fields(Record &r, const StatsSummary &s, std::size_t buffer_bytes) {
    const double buffer = static_cast<double>(buffer_bytes);
    r.set_real("sent_pct", buffer > 0 ? 100.0 * s.sent_per_call_mean / buffer : 0.0);
    r.set_real("sent_bytes_per_call", s.sent_per_call_mean);
    r.set_real("sent_bytes_per_call_max", s.sent_per_call_max);
    r.set_real("received_bytes_per_call", s.received_per_call_mean);
    r.set_int("dense_fallbacks", s.dense_fallbacks);
    r.set_int("stats_calls_min", s.calls_min);
    r.set_int("stats_calls_max", s.calls_max);
    r.set_bool("stats_calls_match", s.calls_match);
    r.set_int("algorithm", s.algorithm);
    r.set_text("algorithm_name", algorithm_name(s.algorithm));
}

void add_profile_fields(Record &r, const ProfileSummary &p) {
    r.set_int("profile_calls", p.calls_min);
    r.set_real("profile_scan_us", p.scan_us);
    r.set_real("profile_agreement_us", p.agreement_us);
    r.set_real("profile_dense_us", p.dense_us);
    r.set_real("profile_allgather_us", p.allgather_us);
    r.set_real("profile_stream_us", p.stream_us);
    r.set_real("profile_reduce_us", p.reduce_us);
    r.set_real("profile_result_write_us", p.result_write_us);
    r.set_real("profile_barrier_us", p.barrier_us);
    r.set_real("profile_node_broadcast_us", p.node_broadcast_us);
}

std::vector<Column> profile_columns() {
    return {{"profile_scan_us", "Scan(us)", 1, false},
            {"profile_agreement_us", "Agree(us)", 1, false},
            {"profile_dense_us", "Dense(us)", 1, false},
            {"profile_allgather_us", "Gather(us)", 1, false},
            {"profile_stream_us", "Stream(us)", 1, false},
            {"profile_reduce_us", "Reduce(us)", 1, false},
            {"profile_result_write_us", "Write(us)", 1, false},
            {"profile_barrier_us", "Barrier(us)", 1, false},
            {"profile_node_broadcast_us", "NodeBcast(us)", 1, true}};
}

void add_check_fields(Record &r, bool validated, bool ok) {
    r.set_bool("validated", validated);
    if (validated) r.set_bool("valid", ok);
    r.set_text("check", ok ? "ok" : "FAIL");
}

Column check_column() {
    return {"check", "Check", 0, false};
}

std::vector<Column> shape_columns() {
    return {{"size", "Size", 0, false},
            {"density", "Density", Column::kGeneral, false},
            {"union_density", "Union", 4, false}};
}

std::vector<Column> latency_columns(const std::string &method, const std::string &label) {
    return {{method + "_avg_us", label + "(us)", 2, false},
            {method + "_min_us", label + "-min(us)", 2, true},
            {method + "_max_us", label + "-max(us)", 2, true}};
}

std::int64_t count_nonzero_chunks(const void *buf, std::size_t bytes, std::size_t chunk_bytes) {
    const auto *p = static_cast<const unsigned char *>(buf);
    std::int64_t n = 0;
    for (std::size_t begin = 0; begin < bytes; begin += chunk_bytes) {
        const std::size_t end = std::min(bytes, begin + chunk_bytes);
        n += std::any_of(p + begin, p + end, [](unsigned char c) { return c != 0; });
    }
    return n;
}

std::vector<Column> block_row_columns(const std::string &mpi_label, const std::string &floor_label) {
    std::vector<Column> c = shape_columns();
    for (const auto &group : {latency_columns("mpi_allreduce", mpi_label), latency_columns("sparse", "Sparse"),
                              latency_columns("floor", floor_label)})
        c.insert(c.end(), group.begin(), group.end());
    c.push_back({"speedup", "Speedup", 2, false});
    c.push_back({"sent_pct", "Sent(%)", 2, false});
    c.push_back({"algorithm_name", "Algorithm", 0, false});
    c.push_back({"ours_over_floor", "Ours/Floor", 2, false});
    // Page faults per call: where MPI_Allreduce maps fresh memory per call (see --keep-heap).
    c.push_back({"mpi_allreduce_faults_per_call", "MPIFaults", 1, false});
    c.push_back({"sparse_faults_per_call", "OurFaults", 1, false});
    c.push_back({"iterations", "Iterations", 0, true});
    return c;
}

void add_block_row_fields(Record &r, const InterleavedResult &timed, const StatsSummary &stats,
                          std::size_t buffer_bytes, bool validated, bool ok, bool mpi_timed) {
    r.set_int("iterations", timed.iterations);
    const std::size_t first = mpi_timed ? 1 : 0;  // the library's entry
    const LatencySummary &sparse = timed.latency[first], &floor = timed.latency[first + 1];
    if (mpi_timed) {
        add_latency_fields(r, "mpi_allreduce", timed.latency[0]);
        r.set_real("speedup", timed.latency[0].avg_us / sparse.avg_us);
    }
    add_latency_fields(r, "sparse", sparse);
    add_latency_fields(r, "floor", floor);
    r.set_real("ours_over_floor", sparse.avg_us / floor.avg_us);
    add_stats_fields(r, stats, buffer_bytes);
    add_check_fields(r, validated, ok);
}

}  // namespace bench
