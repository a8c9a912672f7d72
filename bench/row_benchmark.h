// One benchmark variant: measures a table row (one message size at one density) and knows its
// columns. main() drives the rows; the variants own their buffers, reused across rows.
#ifndef MPIX_SPARSE_BENCH_ROW_BENCHMARK_H
#define MPIX_SPARSE_BENCH_ROW_BENCHMARK_H

#include "bench_context.h"
#include "report.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace bench {

class RowBenchmark {
  public:
    virtual ~RowBenchmark() = default;
    virtual std::vector<Column> columns() const = 0;
    // Collective over the context's communicators. ok: every validation and counter check passed
    // (same on all ranks). The record's latencies are valid on rank 0 only.
    virtual Record run_row(std::size_t bytes, double density, bool &ok) = 0;
};

// Dense buffers whose zero blocks MPIX_Sparse_allreduce skips.
std::unique_ptr<RowBenchmark> make_block_variant(const BenchContext &ctx);
// The block variant on CUDA device buffers (-d cuda); throws where there is no CUDA.
std::unique_ptr<RowBenchmark> make_device_block_variant(const BenchContext &ctx);
// (index, value) pairs reduced by MPIX_Sparse_allreduce_elements.
std::unique_ptr<RowBenchmark> make_element_variant(const BenchContext &ctx);

}  // namespace bench

#endif
