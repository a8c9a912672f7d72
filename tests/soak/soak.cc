// Soak: many calls mixing sizes, densities, types, ops, algorithms, in place or not, blocking,
// non-blocking and persistent, with communicators created and freed along the way; every result
// compared bitwise with MPI_Allreduce (integer-valued data: exact in any order). After a warm-up,
// resident memory and open file descriptors must stay flat. Usage: soak CALLS [CYCLE] (under
// mpirun; CYCLE: calls between communicator create/free cycles, 0 for none; 500).
// Rank 0 prints the figures; exit status 1 on any mismatch or growth.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "mpix_sparse/mpix_sparse.h"

namespace {

constexpr std::int64_t kMaxCount = 1 << 18;
const char *const kAlgorithms[] = {"auto", "aggregator", "allgather", "dense", "hierarchical"};

long resident_kib() {
    std::ifstream statm("/proc/self/statm");
    long pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int open_fds() {
    int n = 0;
    if (DIR *d = opendir("/proc/self/fd")) {
        while (readdir(d) != nullptr)
            ++n;
        closedir(d);
    }
    return n - 3;  // ., .. and the directory's own descriptor
}

MPI_Comm make_comm(const char *algorithm, int block) {
    MPI_Info info;
    MPI_Info_create(&info);
    if (std::strcmp(algorithm, "hierarchical") == 0)
        MPI_Info_set(info, "mpix_sparse_hierarchical", "on");
    else
        MPI_Info_set(info, "mpix_sparse_algorithm", algorithm);
    MPI_Info_set(info, "mpix_sparse_block_size", std::to_string(block).c_str());
    MPI_Info_set(info, "mpix_sparse_dense_below", "0");
    MPI_Comm comm = MPI_COMM_NULL;
    MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, &comm);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return comm;
}

struct Comms {
    std::vector<MPI_Comm> comms;
    void create(std::mt19937_64 &rng) {
        const int blocks[] = {1, 7, 64, 256};
        for (const char *a : kAlgorithms)
            comms.push_back(make_comm(a, blocks[rng() % 4]));
    }
    void free_all() {
        for (MPI_Comm &c : comms)
            MPIX_Sparse_comm_free(&c);
        comms.clear();
    }
};

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const long calls = argc > 1 ? std::atol(argv[1]) : 2000;
    const long cycle = argc > 2 ? std::atol(argv[2]) : 500;  // calls between communicator create/free cycles
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::mt19937_64 shared(12345);  // the same sequence on every rank: calls are collective
    std::mt19937_64 mine(777 + static_cast<unsigned>(rank));
    // Buffers allocated once: the test's own heap stays still, so growth is the library's.
    std::vector<std::int64_t> in(kMaxCount), out(kMaxCount), ref(kMaxCount);
    Comms comms;
    comms.create(shared);
    const long warmup = std::max(10L, calls / 10);
    // Resident memory at the end of warm-up, half way and at the end. The allocator keeps warming up
    // for a while (glibc raises its mmap threshold as large blocks are freed, so later ones come from
    // the heap); a leak grows steadily, so the second half must stay flat.
    const long midway = warmup + (calls - warmup) / 2;
    long rss_after_warmup = 0, rss_midway = 0, mismatches = 0, failures = 0;
    int fds_after_warmup = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) {
        if (i == warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            rss_after_warmup = resident_kib();
            fds_after_warmup = open_fds();
        }
        if (i == midway) {
            MPI_Barrier(MPI_COMM_WORLD);
            rss_midway = resident_kib();
        }
        if (cycle > 0 && i % cycle == cycle - 1) {  // communicator create/free cycles
            comms.free_all();
            comms.create(shared);
        }
        const auto count = static_cast<std::int64_t>(std::exp2(std::uniform_real_distribution<>(0, 18)(shared)));
        const double density = std::pow(10.0, -std::uniform_real_distribution<>(0, 3)(shared));
        const bool use_int = shared() % 2 == 0;
        const MPI_Datatype type = use_int ? MPI_INT64_T : MPI_DOUBLE;
        const MPI_Op op = (shared() % 3 == 0) ? MPI_MAX : (use_int && shared() % 2 == 0 ? MPI_BOR : MPI_SUM);
        MPI_Comm comm = comms.comms[shared() % comms.comms.size()];
        const bool in_place = shared() % 4 == 0;
        const int mode = static_cast<int>(shared() % 3);  // blocking, non-blocking, persistent
        for (std::int64_t k = 0; k < count; ++k) {
            const bool on = std::uniform_real_distribution<>(0, 1)(mine) < density;
            const std::int64_t v = on ? static_cast<std::int64_t>(mine() % 1000) + 1 : 0;
            if (use_int)
                in[static_cast<std::size_t>(k)] = v;
            else {
                const double d = static_cast<double>(v);
                std::memcpy(&in[static_cast<std::size_t>(k)], &d, 8);
            }
        }
        MPI_Allreduce(in.data(), ref.data(), static_cast<int>(count), type, op, MPI_COMM_WORLD);
        const void *send = in.data();
        if (in_place) {
            std::copy(in.begin(), in.begin() + count, out.begin());
            send = MPI_IN_PLACE;
        }
        int rc = MPI_SUCCESS;
        if (mode == 0) {
            rc = MPIX_Sparse_allreduce(send, out.data(), count, type, op, comm);
        } else {
            MPIX_Sparse_request r = MPIX_SPARSE_REQUEST_NULL;
            rc = mode == 1 ? MPIX_Sparse_iallreduce(send, out.data(), count, type, op, comm, &r)
                           : MPIX_Sparse_allreduce_init(send, out.data(), count, type, op, comm, MPI_INFO_NULL, &r);
            if (rc == MPI_SUCCESS && mode == 2) rc = MPIX_Sparse_start(&r);
            if (rc == MPI_SUCCESS) rc = MPIX_Sparse_wait(&r);
            if (mode == 2 && r != MPIX_SPARSE_REQUEST_NULL) MPIX_Sparse_request_free(&r);
        }
        if (rc != MPI_SUCCESS) ++failures;
        if (std::memcmp(out.data(), ref.data(), static_cast<std::size_t>(count) * 8) != 0) ++mismatches;
    }
    comms.free_all();
    MPI_Barrier(MPI_COMM_WORLD);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const long rss_end = resident_kib();
    const int fds_end = open_fds();
    long worst[5] = {mismatches, failures, rss_end - rss_midway, fds_end - fds_after_warmup,
                     rss_end - rss_after_warmup};
    MPI_Allreduce(MPI_IN_PLACE, worst, 5, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    // Second-half growth allowed: allocator slack (a few MiB of heap), no descriptors.
    const long kRssSlackKib = 4 * 1024;
    const bool ok = worst[0] == 0 && worst[1] == 0 && worst[2] <= kRssSlackKib && worst[3] <= 0;
    if (rank == 0)
        std::printf("soak: %ld calls on %d ranks in %.1f s; mismatches %ld, failed calls %ld; rank 0 resident KiB "
                    "after warm-up (call %ld) %ld, half way (call %ld) %ld, at the end %ld; max growth over ranks: "
                    "second half %ld KiB, since warm-up %ld KiB; open fds %d -> %d (max growth %ld): %s\n",
                    calls, size, seconds, worst[0], worst[1], warmup, rss_after_warmup, midway, rss_midway, rss_end,
                    worst[2], worst[4], fds_after_warmup, fds_end, worst[3], ok ? "ok" : "FAIL");
    MPI_Finalize();
    return ok ? 0 : 1;
}
