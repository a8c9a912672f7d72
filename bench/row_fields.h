// Row fields and columns both variants share, so that their JSON keys and headers agree.
#ifndef MPIX_SPARSE_BENCH_ROW_FIELDS_H
#define MPIX_SPARSE_BENCH_ROW_FIELDS_H

#include "bench_context.h"
#include "interleaved_timer.h"
#include "library_stats.h"
#include "patterns.h"
#include "report.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

// The pattern parameters of this rank.
PatternSpec pattern_spec(const BenchContext &ctx);
// Seed of this rank's non-zero values in one row.
std::uint64_t value_seed(const BenchContext &ctx, std::size_t bytes, double density);
// "size 4096 B, density 0.01", for messages.
std::string row_label(std::size_t bytes, double density);

// size, count, density, unit counts and densities (per rank, mean over ranks; union).
void add_shape_fields(Record &r, const BenchContext &ctx, std::size_t bytes, std::int64_t count, double density,
                      const std::string &unit, std::int64_t units, std::int64_t nonzero_here, std::int64_t union_units,
                      const ZipfBatch &zipf);
// <method>_avg_us, <method>_min_us, <method>_max_us.
void add_latency_fields(Record &r, const std::string &method, const LatencySummary &l);
// Library counters per call, as bytes and as a percentage of the dense buffer.
void add_stats_fields(Record &r, const StatsSummary &s, std::size_t buffer_bytes);

// profile_<phase>_us: the library's phases per call (--profile).
void add_profile_fields(Record &r, const ProfileSummary &p);
std::vector<Column> profile_columns();

// validated, valid (with --validate), and check: "ok" or "FAIL" (validation or counters).
void add_check_fields(Record &r, bool validated, bool ok);

// Columns: Size, Density, Union.
std::vector<Column> shape_columns();
// Average latency of a method, plus min and max with -f.
std::vector<Column> latency_columns(const std::string &method, const std::string &label);
// Check: "ok" or "FAIL".
Column check_column();

// The block variant's row, on host or device buffers: MPI, ours and the floor timed in that order
// (without MPI when mpi_timed is false: its columns and the speedup are left out).
std::vector<Column> block_row_columns(const std::string &mpi_label, const std::string &floor_label);
void add_block_row_fields(Record &r, const InterleavedResult &timed, const StatsSummary &stats,
                          std::size_t buffer_bytes, bool validated, bool ok, bool mpi_timed = true);

// Number of chunks of chunk_bytes (the last one possibly shorter) holding a non-zero byte.
std::int64_t count_nonzero_chunks(const void *buf, std::size_t bytes, std::size_t chunk_bytes);

}  // namespace bench

#endif
