// A training loop's gradient reduction, the way PyTorch DDP does it: the gradient is cut into
// buckets; each bucket's persistent request is started as soon as the backward pass has produced
// it, while the rest of the backward pass goes on, and all are waited for before the optimizer step.
// Uses the C++ header (RAII communicator and requests). The gradient and its sum live in memory the
// ranks of a machine read in place (SharedArray, MPIX_Sparse_alloc_mem), as a framework's allocator
// would hand it out. Checks the result against MPI_Allreduce.
//
//   mpirun -np 4 build/examples/bucketed_gradients
#include <mpi.h>

#include <mpix_sparse/mpix_sparse.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    constexpr std::size_t kBuckets = 4, kBucket = std::size_t{1} << 20;  // 4 x 4 MiB of floats
    std::vector<float> want(kBuckets * kBucket);
    int wrong = 0;
    {
        mpix::sparse::SharedArray<float> grad(want.size()), sum(want.size());
        mpix::sparse::Communicator comm(MPI_COMM_WORLD);
        // Set up once: one persistent request per bucket.
        std::vector<mpix::sparse::Request> buckets;
        for (std::size_t b = 0; b < kBuckets; ++b)
            buckets.push_back(comm.allreduce_init(grad.data() + b * kBucket, sum.data() + b * kBucket, kBucket));
        for (int step = 0; step < 5; ++step) {
            // "Backward pass", last layer first: each bucket is ready in turn and starts reducing.
            for (std::size_t b = kBuckets; b-- > 0;) {
                float *g = grad.data() + b * kBucket;
                std::fill(g, g + kBucket, 0.0f);
                // A few embedding rows touched: 64 rows of 256 floats per bucket (1.6% of its blocks).
                for (std::size_t row = (static_cast<std::size_t>(rank) * 7 + step) % 64; row < kBucket / 256; row += 64)
                    std::fill(g + row * 256, g + row * 256 + 256, static_cast<float>(rank + step + 1));
                buckets[b].start();
            }
            for (auto &r : buckets)
                r.wait();
            MPI_Allreduce(grad.data(), want.data(), static_cast<int>(grad.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            wrong += !std::equal(sum.begin(), sum.end(), want.begin());
        }
        const MPIX_Sparse_stats s = comm.stats();
        if (rank == 0)
            std::printf("%d ranks, 5 steps x %zu buckets of %zu floats: %s; rank 0 sent %.2f%% of the data\n", size,
                        kBuckets, kBucket, wrong ? "WRONG" : "results equal MPI_Allreduce",
                        100.0 * static_cast<double>(s.bytes_sent) /
                            (static_cast<double>(s.calls) * static_cast<double>(kBucket * sizeof(float))));
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
