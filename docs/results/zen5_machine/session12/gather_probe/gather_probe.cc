// Probe: MPI_Allgather (blocking) against MPI_Iallgather waited on as the library waits (test, spin
// 64 polls, yield for 2 ms, then 1 ms sleeps), per record size; mean over ranks of each rank's mean.
// Build: mpicxx -O2 -std=c++17 gather_probe.cc -o gather_probe; run: mpirun -np 4 ./gather_probe
#include <mpi.h>
#include <poll.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <vector>

static void wait_like_library(MPI_Request &r) {
    int done = 0;
    auto start = std::chrono::steady_clock::now();
    for (int polls = 0;; ++polls) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done) return;
        if (polls < 64) continue;
        if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2))
            sched_yield();
        else
            (void)poll(nullptr, 0, 1);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int iterations = 40;
    for (std::size_t bytes : {16384ul, 65536ul, 262144ul, 688128ul, 1376256ul}) {
        std::vector<char> all(bytes * static_cast<std::size_t>(size), 1);
        double t[2] = {0, 0};
        for (int it = 0; it < iterations + 5; ++it) {
            for (int m = 0; m < 2; ++m) {
                MPI_Barrier(MPI_COMM_WORLD);
                const double t0 = MPI_Wtime();
                if (m == 0) {
                    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), static_cast<int>(bytes), MPI_BYTE,
                                  MPI_COMM_WORLD);
                } else {
                    MPI_Request r;
                    MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), static_cast<int>(bytes), MPI_BYTE,
                                   MPI_COMM_WORLD, &r);
                    wait_like_library(r);
                }
                if (it >= 5) t[m] += MPI_Wtime() - t0;
            }
        }
        double sum[2];
        MPI_Reduce(t, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            std::printf("%8zu bytes per rank: MPI_Allgather %8.1f us, MPI_Iallgather waited %8.1f us\n", bytes,
                        sum[0] / size / iterations * 1e6, sum[1] / size / iterations * 1e6);
    }
    MPI_Finalize();
}
