// --variant block: dense buffers in which round(D * nblocks) blocks per rank are non-zero.
// Timed, interleaved: MPI_Allreduce, MPIX_Sparse_allreduce, and the floor, a copy of the send
// buffer into another buffer of the same size (memcpy or streaming stores, the faster here:
// floor_copy.h): the least time any allreduce needs to read its input and write its output once.
#include "aligned_buffer.h"
#include "floor_copy.h"
#include "inputs.h"
#include "library_stats.h"
#include "row_benchmark.h"
#include "row_fields.h"
#include "validation.h"

#include <mpix_sparse/mpix_sparse.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

namespace bench {

namespace {

class BlockVariant final : public RowBenchmark {
  public:
    explicit BlockVariant(const BenchContext &ctx) : ctx_(ctx) {
        for (AlignedBuffer *b : {&send_, &dense_out_, &sparse_out_, &floor_out_})
            b->use_alloc_mem(ctx_.opts.alloc_mem);
        for (AlignedBuffer &b : forced_out_)
            b.use_alloc_mem(ctx_.opts.alloc_mem);
    }

    std::vector<Column> columns() const override {
        std::vector<Column> c = block_row_columns("MPI_Allreduce", "Floor");
        if (ctx_.opts.forced) {
            c.push_back({"best_forced", "BestForced", 0, false});
            c.push_back({"auto_over_best", "Auto/Best", 2, false});
        }
        return c;
    }

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

        // The reference result; a block of it is non-zero exactly where some rank's block is. Without
        // MPI (--no-mpi, never validated), the library's first result stands in for the union count.
        if (o.no_mpi)
            check_mpi(MPIX_Sparse_allreduce(send, dense_out, count, dt, MPI_SUM, ctx_.lib_comm),
                      "MPIX_Sparse_allreduce");
        else
            check_mpi(MPI_Allreduce(send, dense_out, icount, dt, baseline_sum_op(o.type), ctx_.base_comm),
                      "MPI_Allreduce");
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

        const FloorMethod floor_method = floor_method_for(floor_out, send, data_bytes);
        // The algorithm of each timed call of auto (the same on every rank: the choice is collective):
        // its last call alone may be one that measures another algorithm.
        std::vector<int> auto_algorithms;
        auto_algorithms.reserve(static_cast<std::size_t>(o.iterations_for(bytes)));
        std::vector<TimedMethod> methods = {
            {"mpi_allreduce",
             [&] {
                 check_mpi(MPI_Allreduce(send, dense_out, icount, dt, baseline_sum_op(o.type), ctx_.base_comm),
                           "MPI_Allreduce");
             }},
            {"sparse",
             [&] {
                 check_mpi(MPIX_Sparse_allreduce(send, sparse_out, count, dt, MPI_SUM, ctx_.lib_comm),
                           "MPIX_Sparse_allreduce");
             },
             [&] { auto_algorithms.push_back(last_algorithm(ctx_.lib_comm)); }},
            {"floor", [&] { floor_copy(floor_method, floor_out, send, data_bytes); }},
        };
        if (o.no_mpi) methods.erase(methods.begin());
        const std::size_t sparse_at = o.no_mpi ? 0 : 1, forced_at = methods.size();  // entries in `timed`
        // --forced: the same call with each algorithm forced, each into its own buffer as auto's is
        // (validated below). Sharing one, written by three of the five methods of an iteration, kept
        // it warmer than auto's: on one node at 2-8 MiB 1%, auto forced to the aggregator read
        // 1.06-1.27x the same forced call (docs/performance.md, the eleventh session).
        for (std::size_t i = 0; o.forced && i < kForcedAlgorithms.size(); ++i)
            methods.push_back({std::string("forced_") + kForcedAlgorithms[i],
                               [&, comm = ctx_.forced[i], out = forced_out_[i].data()] {
                                   check_mpi(MPIX_Sparse_allreduce(send, out, count, dt, MPI_SUM, comm),
                                             "MPIX_Sparse_allreduce");
                               }});
        const InterleavedResult timed =
            run_interleaved(methods, o.warmup, o.iterations_for(bytes), o.time_limit, ctx_.base_comm,
                            [&] { check_mpi(MPIX_Sparse_stats_reset(ctx_.lib_comm), "MPIX_Sparse_stats_reset"); });
        const StatsSummary stats = summarize_stats(ctx_.lib_comm, ctx_.base_comm, timed.iterations);
        ok &= stats.calls_match;
        if (o.validate)
            ok &= validate_result(o.type, dense_out, sparse_out, count, block,
                                  "MPIX_Sparse_allreduce, " + label + ", last timed call", ctx_.base_comm);
        for (std::size_t i = 0; o.validate && o.forced && i < kForcedAlgorithms.size(); ++i)
            ok &= validate_result(o.type, dense_out, forced_out_[i].data(), count, block,
                                  std::string("MPIX_Sparse_allreduce forced ") + kForcedAlgorithms[i] + ", " + label +
                                      ", last timed call",
                                  ctx_.base_comm);

        Record r;
        add_shape_fields(r, ctx_, bytes, count, density, "block", nblocks, static_cast<std::int64_t>(blocks.size()),
                         union_blocks, zipf);
        add_block_row_fields(r, timed, stats, data_bytes, o.validate, ok, !o.no_mpi);
        r.set_text("floor_copy", floor_method_name(floor_method));
        if (o.forced) {
            std::size_t best = 0;
            for (std::size_t i = 0; i < kForcedAlgorithms.size(); ++i) {
                add_latency_fields(r, std::string("forced_") + kForcedAlgorithms[i], timed.latency[forced_at + i]);
                if (timed.latency[forced_at + i].avg_us < timed.latency[forced_at + best].avg_us) best = i;
            }
            r.set_text("best_forced", kForcedAlgorithms[best]);
            for (std::size_t i = 0; i < kForcedAlgorithms.size(); ++i)
                r.set_int(std::string("auto_calls_") + kForcedAlgorithms[i],
                          std::count_if(auto_algorithms.begin(), auto_algorithms.end(), [i](int a) {
                              return std::strcmp(algorithm_name(a), kForcedAlgorithms[i]) == 0;
                          }));
            // Call by call, for comparisons in pairs (the calls of one iteration were made moments apart).
            std::vector<std::string> ran;
            for (const int a : auto_algorithms)
                ran.emplace_back(algorithm_name(a));
            r.set_list("auto_call_algorithms", std::move(ran));
            r.set_reals("sparse_calls_us", timed.latency[sparse_at].calls_us);
            for (std::size_t i = 0; i < kForcedAlgorithms.size(); ++i)
                r.set_reals(std::string("forced_") + kForcedAlgorithms[i] + "_calls_us",
                            timed.latency[forced_at + i].calls_us);
            r.set_real("auto_over_best", timed.latency[sparse_at].avg_us / timed.latency[forced_at + best].avg_us);
        }
        return r;
    }

  private:
    // Chosen once per size (collectively: every rank runs the same rows).
    FloorMethod floor_method_for(void *dst, const void *src, std::size_t bytes) {
        auto it = floor_methods_.find(bytes);
        if (it == floor_methods_.end())
            it = floor_methods_.emplace(bytes, choose_floor_method(dst, src, bytes, ctx_.base_comm)).first;
        return it->second;
    }

    // Buffers grow to the largest size seen and are reused, so rows do not pay for page faults.
    void reserve(std::size_t bytes) {
        if (send_.size() >= bytes) return;
        for (AlignedBuffer *b : {&send_, &dense_out_, &sparse_out_, &floor_out_})
            b->resize(bytes);
        if (!ctx_.opts.forced) return;
        for (AlignedBuffer &b : forced_out_)
            b.resize(bytes);
    }

    const BenchContext &ctx_;
    AlignedBuffer send_, dense_out_, sparse_out_, floor_out_;
    std::array<AlignedBuffer, kForcedAlgorithms.size()> forced_out_;
    std::map<std::size_t, FloorMethod> floor_methods_;
};

}  // namespace

std::unique_ptr<RowBenchmark> make_block_variant(const BenchContext &ctx) {
    return std::make_unique<BlockVariant>(ctx);
}

}  // namespace bench
