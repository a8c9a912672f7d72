// --variant block: dense buffers in which round(D * nblocks) blocks per rank are non-zero.
// Timed, interleaved: MPI_Allreduce, MPIX_Sparse_allreduce, and the floor, a memcpy of the send
// buffer into another buffer of the same size: the least time any allreduce needs to read its input
// and write its output once.
#include "aligned_buffer.h"
#include "inputs.h"
#include "row_benchmark.h"
#include "row_fields.h"
#include "validation.h"

#include <mpix_sparse/mpix_sparse.h>

#include <cstring>

namespace bench {

namespace {

class BlockVariant final : public RowBenchmark {
  public:
    explicit BlockVariant(const BenchContext &ctx) : ctx_(ctx) {}

    std::vector<Column> columns() const override { return block_row_columns("MPI_Allreduce", "Floor"); }

    Record run_row(std::size_t bytes, double density, bool &ok) override {
        const BenchOptions &o = ctx_.opts;
        const std::size_t esize = element_size(o.type);
        const auto count = static_cast<std::int64_t>(bytes / esize);
        const std::size_t data_bytes = static_cast<std::size_t>(count) * esize;
        const std::int64_t block = o.block_size;
        const std::int64_t nblocks = (count + block - 1) / block;
        const MPI_Datatype dt = element_mpi_type(o.type);
        const int icount = static_cast<int>(count);  // main() keeps count within int
        const std::string label = row_label(bytes, density);
        reserve(data_bytes);
        unsigned char *send = send_.data(), *dense_out = dense_out_.data(), *sparse_out = sparse_out_.data(),
                      *floor_out = floor_out_.data();

        // Inputs, outside any timing.
        ZipfBatch zipf;
        const std::vector<std::int64_t> blocks = choose_nonzero_units(pattern_spec(ctx_), nblocks, density, &zipf);
        fill_block_input(o.type, send, count, block, blocks, value_seed(ctx_, bytes, density));

        // The reference result; a block of it is non-zero exactly where some rank's block is.
        check_mpi(MPI_Allreduce(send, dense_out, icount, dt, baseline_sum_op(o.type), ctx_.base_comm), "MPI_Allreduce");
        const std::int64_t union_blocks =
            count_nonzero_chunks(dense_out, data_bytes, static_cast<std::size_t>(block) * esize);

        ok = true;
        if (o.validate) {
            // Into a poisoned buffer, so that blocks the library does not write are caught.
            poison(sparse_out, data_bytes);
            check_mpi(MPIX_Sparse_allreduce(send, sparse_out, count, dt, MPI_SUM, ctx_.lib_comm),
                      "MPIX_Sparse_allreduce");
            ok &= validate_result(o.type, dense_out, sparse_out, count, block,
                                  "MPIX_Sparse_allreduce, " + label + ", first call", ctx_.base_comm);
        }

        const std::vector<TimedMethod> methods = {
            {"mpi_allreduce",
             [&] {
                 check_mpi(MPI_Allreduce(send, dense_out, icount, dt, baseline_sum_op(o.type), ctx_.base_comm),
                           "MPI_Allreduce");
             }},
            {"sparse",
             [&] {
                 check_mpi(MPIX_Sparse_allreduce(send, sparse_out, count, dt, MPI_SUM, ctx_.lib_comm),
                           "MPIX_Sparse_allreduce");
             }},
            {"floor", [&] { std::memcpy(floor_out, send, data_bytes); }},
        };
        const InterleavedResult timed =
            run_interleaved(methods, o.warmup, o.iterations_for(bytes), o.time_limit, ctx_.base_comm,
                            [&] { check_mpi(MPIX_Sparse_stats_reset(ctx_.lib_comm), "MPIX_Sparse_stats_reset"); });
        const StatsSummary stats = summarize_stats(ctx_.lib_comm, ctx_.base_comm, timed.iterations);
        ok &= stats.calls_match;
        if (o.validate)
            ok &= validate_result(o.type, dense_out, sparse_out, count, block,
                                  "MPIX_Sparse_allreduce, " + label + ", last timed call", ctx_.base_comm);

        Record r;
        add_shape_fields(r, ctx_, bytes, count, density, "block", nblocks, static_cast<std::int64_t>(blocks.size()),
                         union_blocks, zipf);
        add_block_row_fields(r, timed, stats, data_bytes, o.validate, ok);
        return r;
    }

  private:
    // Buffers grow to the largest size seen and are reused, so rows do not pay for page faults.
    void reserve(std::size_t bytes) {
        if (send_.size() >= bytes) return;
        for (AlignedBuffer *b : {&send_, &dense_out_, &sparse_out_, &floor_out_})
            b->resize(bytes);
    }

    const BenchContext &ctx_;
    AlignedBuffer send_, dense_out_, sparse_out_, floor_out_;
};

}  // namespace

std::unique_ptr<RowBenchmark> make_block_variant(const BenchContext &ctx) {
    return std::make_unique<BlockVariant>(ctx);
}

}  // namespace bench
