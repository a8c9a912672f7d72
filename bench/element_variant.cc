// --variant elements: each rank contributes round(D * count) (index, value) pairs with int64
// indices. Timed, interleaved: MPI_Allreduce of the equivalent dense vector (built beforehand),
// the allgather of pairs that Horovod and PyTorch/Gloo use for sparse gradients (MPI_Allgather of
// the counts, MPI_Allgatherv of indices and of values, then a scatter-add of all pairs into a zeroed
// dense output, everything inside the timing), and MPIX_Sparse_allreduce_elements.
#include "aligned_buffer.h"
#include "inputs.h"
#include "row_benchmark.h"
#include "row_fields.h"
#include "validation.h"

#include <mpix_sparse/mpix_sparse.h>

#include <climits>
#include <cstdio>
#include <cstring>

namespace bench {

namespace {

class ElementVariant final : public RowBenchmark {
  public:
    explicit ElementVariant(const BenchContext &ctx)
        : ctx_(ctx), gathered_counts_(static_cast<std::size_t>(ctx.nranks)),
          gathered_displs_(static_cast<std::size_t>(ctx.nranks)) {}

    std::vector<Column> columns() const override {
        std::vector<Column> c = shape_columns();
        for (const auto &group : {latency_columns("mpi_allreduce", "MPI_Allreduce"),
                                  latency_columns("allgather", "Allgather"), latency_columns("sparse", "Sparse")})
            c.insert(c.end(), group.begin(), group.end());
        c.push_back({"speedup", "Speedup(AR)", 2, false});
        c.push_back({"speedup_vs_allgather", "Speedup(AG)", 2, false});
        c.push_back({"sent_pct", "Sent(%)", 2, false});
        c.push_back({"algorithm_name", "Algorithm", 0, false});
        c.push_back({"iterations", "Iterations", 0, true});
        return c;
    }

    Record run_row(std::size_t bytes, double density, bool &ok) override {
        const BenchOptions &o = ctx_.opts;
        const std::size_t esize = element_size(o.type);
        const auto count = static_cast<std::int64_t>(bytes / esize);
        const std::size_t data_bytes = static_cast<std::size_t>(count) * esize;
        const MPI_Datatype dt = element_mpi_type(o.type);
        const int icount = static_cast<int>(count);  // main() keeps count within int
        const std::string label = row_label(bytes, density);
        reserve(data_bytes);

        // Inputs, outside any timing: the pairs, and the same vector dense for MPI_Allreduce.
        ZipfBatch zipf;
        indices_ = choose_nonzero_units(pattern_spec(ctx_), count, density, &zipf);
        const auto nnz = static_cast<std::int64_t>(indices_.size());
        values_.resize(static_cast<std::size_t>(nnz) * esize);
        fill_random_values(o.type, values_.data(), nnz, value_seed(ctx_, bytes, density));
        densify_pairs(o.type, indices_.data(), values_.data(), nnz, dense_in_.data(), count);
        prepare_gather(nnz, esize);

        check_mpi(
            MPI_Allreduce(dense_in_.data(), dense_out_.data(), icount, dt, baseline_sum_op(o.type), ctx_.base_comm),
            "MPI_Allreduce");
        const std::int64_t union_elements = count_nonzero_chunks(dense_out_.data(), data_bytes, esize);

        auto allgather = [&] { allgather_pairs(nnz, count); };
        auto sparse = [&] {
            check_mpi(MPIX_Sparse_allreduce_elements(nnz, indices_.data(), values_.data(), sparse_out_.data(), count,
                                                     dt, MPI_SUM, ctx_.lib_comm),
                      "MPIX_Sparse_allreduce_elements");
        };

        ok = true;
        if (o.validate) {
            // Into poisoned buffers, so that elements a method does not write are caught.
            poison(gather_out_.data(), data_bytes);
            allgather();
            ok &= validate_result(o.type, dense_out_.data(), gather_out_.data(), count, 0,
                                  "allgather of pairs, " + label + ", first call", ctx_.base_comm);
            poison(sparse_out_.data(), data_bytes);
            sparse();
            ok &= validate_result(o.type, dense_out_.data(), sparse_out_.data(), count, 0,
                                  "MPIX_Sparse_allreduce_elements, " + label + ", first call", ctx_.base_comm);
        }

        const std::vector<TimedMethod> methods = {
            {"mpi_allreduce",
             [&] {
                 check_mpi(MPI_Allreduce(dense_in_.data(), dense_out_.data(), icount, dt, baseline_sum_op(o.type),
                                         ctx_.base_comm),
                           "MPI_Allreduce");
             }},
            {"allgather", allgather},
            {"sparse", sparse},
        };
        const InterleavedResult timed =
            run_interleaved(methods, o.warmup, o.iterations_for(bytes), o.time_limit, ctx_.base_comm,
                            [&] { check_mpi(MPIX_Sparse_stats_reset(ctx_.lib_comm), "MPIX_Sparse_stats_reset"); });
        const StatsSummary stats = summarize_stats(ctx_.lib_comm, ctx_.base_comm, timed.iterations);
        ok &= stats.calls_match;
        if (o.validate) {
            ok &= validate_result(o.type, dense_out_.data(), gather_out_.data(), count, 0,
                                  "allgather of pairs, " + label + ", last timed call", ctx_.base_comm);
            ok &= validate_result(o.type, dense_out_.data(), sparse_out_.data(), count, 0,
                                  "MPIX_Sparse_allreduce_elements, " + label + ", last timed call", ctx_.base_comm);
        }

        Record r;
        add_shape_fields(r, ctx_, bytes, count, density, "element", count, nnz, union_elements, zipf);
        r.set_int("iterations", timed.iterations);
        add_latency_fields(r, "mpi_allreduce", timed.latency[0]);
        add_latency_fields(r, "allgather", timed.latency[1]);
        add_latency_fields(r, "sparse", timed.latency[2]);
        r.set_real("speedup", timed.latency[0].avg_us / timed.latency[2].avg_us);
        r.set_real("speedup_vs_allgather", timed.latency[1].avg_us / timed.latency[2].avg_us);
        add_stats_fields(r, stats, data_bytes);
        add_check_fields(r, o.validate, ok);
        return r;
    }

  private:
    void reserve(std::size_t bytes) {
        if (dense_in_.size() >= bytes) return;
        for (AlignedBuffer *b : {&dense_in_, &dense_out_, &gather_out_, &sparse_out_})
            b->resize(bytes);
    }

    // Sizes the gathered-pairs buffers outside the timing, as a tuned baseline would keep them
    // allocated across calls; MPI_Allgatherv counts are int, so the total must fit.
    void prepare_gather(std::int64_t nnz, std::size_t esize) {
        long long total = nnz;
        MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, ctx_.base_comm);
        if (total > INT_MAX) {
            if (ctx_.rank == 0)
                std::fprintf(stderr,
                             "# ERROR: %lld pairs in all exceed the int counts of MPI_Allgatherv; "
                             "lower the size or the density\n",
                             total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        gathered_indices_.resize(static_cast<std::size_t>(total));
        gathered_values_.resize(static_cast<std::size_t>(total) * esize);
    }

    // The baseline, timed as a whole.
    void allgather_pairs(std::int64_t nnz, std::int64_t count) {
        const BenchOptions &o = ctx_.opts;
        const MPI_Datatype dt = element_mpi_type(o.type);
        int mine = static_cast<int>(nnz);
        check_mpi(MPI_Allgather(&mine, 1, MPI_INT, gathered_counts_.data(), 1, MPI_INT, ctx_.base_comm),
                  "MPI_Allgather");
        int total = 0;
        for (int r = 0; r < ctx_.nranks; ++r) {
            gathered_displs_[static_cast<std::size_t>(r)] = total;
            total += gathered_counts_[static_cast<std::size_t>(r)];
        }
        check_mpi(MPI_Allgatherv(indices_.data(), mine, MPI_INT64_T, gathered_indices_.data(), gathered_counts_.data(),
                                 gathered_displs_.data(), MPI_INT64_T, ctx_.base_comm),
                  "MPI_Allgatherv");
        check_mpi(MPI_Allgatherv(values_.data(), mine, dt, gathered_values_.data(), gathered_counts_.data(),
                                 gathered_displs_.data(), dt, ctx_.base_comm),
                  "MPI_Allgatherv");
        with_element_type(o.type, [&](auto zero) {
            using T = decltype(zero);
            T *out = reinterpret_cast<T *>(gather_out_.data());
            const T *values = reinterpret_cast<const T *>(gathered_values_.data());
            std::memset(out, 0, static_cast<std::size_t>(count) * sizeof(T));
            for (int i = 0; i < total; ++i)
                out[gathered_indices_[static_cast<std::size_t>(i)]] += values[i];
        });
    }

    const BenchContext &ctx_;
    AlignedBuffer dense_in_, dense_out_, gather_out_, sparse_out_;
    std::vector<std::int64_t> indices_;
    std::vector<unsigned char> values_;
    std::vector<int> gathered_counts_, gathered_displs_;
    std::vector<std::int64_t> gathered_indices_;
    std::vector<unsigned char> gathered_values_;
};

}  // namespace

std::unique_ptr<RowBenchmark> make_element_variant(const BenchContext &ctx) {
    return std::make_unique<ElementVariant>(ctx);
}

}  // namespace bench
