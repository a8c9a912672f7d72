// --variant block -d cuda: the block variant on CUDA device buffers, as OSU's -d cuda measures
// device collectives. Timed, interleaved: MPI_Allreduce on the device buffers (through host memory
// when the MPI is not CUDA-aware: copy down, reduce, copy up, as an application would have to),
// MPIX_Sparse_allreduce on the device buffers, and the floor, a device-to-device copy of the send
// buffer (what no allreduce on device memory can beat).
#include "aligned_buffer.h"
#include "inputs.h"
#include "row_benchmark.h"
#include "row_fields.h"
#include "validation.h"

#include <cuda_runtime_api.h>
#include <mpix_sparse/mpix_sparse.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <stdexcept>
#include <string>

namespace bench {

namespace {

void check_cuda(cudaError_t rc, const char *what) {
    if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return false;
#endif
}

class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    ~DeviceBuffer() {
        if (p_ != nullptr) cudaFree(p_);
    }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    void resize(std::size_t bytes) {
        if (p_ != nullptr) cudaFree(p_);
        p_ = nullptr;
        check_cuda(cudaMalloc(&p_, bytes == 0 ? 1 : bytes), "cudaMalloc");
    }
    unsigned char *data() const { return static_cast<unsigned char *>(p_); }

  private:
    void *p_ = nullptr;
};

class DeviceBlockVariant final : public RowBenchmark {
  public:
    explicit DeviceBlockVariant(const BenchContext &ctx) : ctx_(ctx), cuda_aware_(mpi_is_cuda_aware()) {}

    std::vector<Column> columns() const override {
        return block_row_columns(cuda_aware_ ? "MPI_Allreduce" : "MPI(staged)", "Floor(D2D)");
    }

    Record run_row(std::size_t bytes, double density, bool &ok) override {
        const BenchOptions &o = ctx_.opts;
        const std::size_t esize = element_size(o.type);
        const auto count = static_cast<std::int64_t>(bytes / esize);
        const std::size_t data_bytes = static_cast<std::size_t>(count) * esize;
        const std::int64_t block = o.block_size;
        const std::int64_t nblocks = (count + block - 1) / block;
        const MPI_Datatype dt = element_mpi_type(o.type);
        const int icount = static_cast<int>(count);
        const std::string label = row_label(bytes, density) + " (device)";
        reserve(data_bytes);

        ZipfBatch zipf;
        const std::vector<std::int64_t> blocks = choose_nonzero_units(pattern_spec(ctx_), nblocks, density, &zipf);
        fill_block_input(o.type, host_in_.data(), count, block, blocks, value_seed(ctx_, bytes, density));
        check_cuda(cudaMemcpy(send_.data(), host_in_.data(), data_bytes, cudaMemcpyHostToDevice), "upload");
        check_mpi(MPI_Allreduce(host_in_.data(), host_ref_.data(), icount, dt, baseline_sum_op(o.type), ctx_.base_comm),
                  "MPI_Allreduce");
        const std::int64_t union_blocks =
            count_nonzero_chunks(host_ref_.data(), data_bytes, static_cast<std::size_t>(block) * esize);

        auto sparse = [&] {
            check_mpi(MPIX_Sparse_allreduce(send_.data(), sparse_out_.data(), count, dt, MPI_SUM, ctx_.lib_comm),
                      "MPIX_Sparse_allreduce");
        };
        auto check = [&](const char *when) {
            check_cuda(cudaMemcpy(host_got_.data(), sparse_out_.data(), data_bytes, cudaMemcpyDeviceToHost),
                       "download");
            return validate_result(o.type, host_ref_.data(), host_got_.data(), count, block,
                                   "MPIX_Sparse_allreduce, " + label + ", " + when, ctx_.base_comm);
        };
        ok = true;
        if (o.validate) {
            check_cuda(cudaMemset(sparse_out_.data(), 0x5c, data_bytes), "poison");
            sparse();
            ok &= check("first call");
        }
        const std::vector<TimedMethod> methods = {
            {"mpi_allreduce",
             [&] {
                 if (cuda_aware_) {
                     check_mpi(MPI_Allreduce(send_.data(), dense_out_.data(), icount, dt, baseline_sum_op(o.type),
                                             ctx_.base_comm),
                               "MPI_Allreduce");
                     return;
                 }
                 check_cuda(cudaMemcpy(stage_in_.data(), send_.data(), data_bytes, cudaMemcpyDeviceToHost), "D2H");
                 check_mpi(MPI_Allreduce(stage_in_.data(), stage_out_.data(), icount, dt, baseline_sum_op(o.type),
                                         ctx_.base_comm),
                           "MPI_Allreduce");
                 check_cuda(cudaMemcpy(dense_out_.data(), stage_out_.data(), data_bytes, cudaMemcpyHostToDevice),
                            "H2D");
             }},
            {"sparse", sparse},
            {"floor",
             [&] {
                 check_cuda(cudaMemcpy(floor_out_.data(), send_.data(), data_bytes, cudaMemcpyDeviceToDevice), "D2D");
                 check_cuda(cudaDeviceSynchronize(), "sync");
             }},
        };
        const InterleavedResult timed =
            run_interleaved(methods, o.warmup, o.iterations_for(bytes), o.time_limit, ctx_.base_comm,
                            [&] { check_mpi(MPIX_Sparse_stats_reset(ctx_.lib_comm), "MPIX_Sparse_stats_reset"); });
        const StatsSummary stats = summarize_stats(ctx_.lib_comm, ctx_.base_comm, timed.iterations);
        ok &= stats.calls_match;
        if (o.validate) ok &= check("last timed call");

        Record r;
        add_shape_fields(r, ctx_, bytes, count, density, "block", nblocks, static_cast<std::int64_t>(blocks.size()),
                         union_blocks, zipf);
        add_block_row_fields(r, timed, stats, data_bytes, o.validate, ok);
        return r;
    }

  private:
    void reserve(std::size_t bytes) {
        if (capacity_ >= bytes) return;
        for (DeviceBuffer *b : {&send_, &dense_out_, &sparse_out_, &floor_out_})
            b->resize(bytes);
        for (AlignedBuffer *b : {&host_in_, &host_ref_, &host_got_, &stage_in_, &stage_out_})
            b->resize(bytes);
        capacity_ = bytes;
    }

    const BenchContext &ctx_;
    bool cuda_aware_;
    std::size_t capacity_ = 0;
    DeviceBuffer send_, dense_out_, sparse_out_, floor_out_;
    AlignedBuffer host_in_, host_ref_, host_got_, stage_in_, stage_out_;
};

}  // namespace

std::unique_ptr<RowBenchmark> make_device_block_variant(const BenchContext &ctx) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        throw std::runtime_error("-d cuda: no CUDA device on this machine");
    return std::make_unique<DeviceBlockVariant>(ctx);
}

}  // namespace bench
