// The floor's copy. What no allreduce can beat is reading its input and writing its output once, so
// the floor copies the buffer the fastest way this machine has. glibc's memcpy turns to streaming
// (non-temporal) stores only above a threshold it derives from the cache size (114 MiB on a host
// that reports a 300 MiB L3); below it, every line written is first read into the cache. There, a
// copy with streaming stores is about 20% faster at 64 MiB, and the library uses such stores for its
// own large copies: a memcpy floor would flatter every ratio. So each buffer size gets the faster of
// the two, timed on every rank at once (the floor's conditions), chosen alike on every rank.
#ifndef MPIX_SPARSE_BENCH_FLOOR_COPY_H
#define MPIX_SPARSE_BENCH_FLOOR_COPY_H

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "median.h"

namespace bench {

enum class FloorMethod { Memcpy, Streaming };

inline const char *floor_method_name(FloorMethod m) {
    return m == FloorMethod::Streaming ? "streaming" : "memcpy";
}

// Copies with streaming stores where the machine has them (16-byte aligned destination, else memcpy).
inline void streaming_copy(void *dst, const void *src, std::size_t bytes) {
#if defined(__SSE2__)
    auto *d = static_cast<unsigned char *>(dst);
    const auto *s = static_cast<const unsigned char *>(src);
    if (reinterpret_cast<std::uintptr_t>(d) % 16 == 0) {
        const std::size_t whole = bytes / 64 * 64;
        for (std::size_t i = 0; i < whole; i += 64) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 16));
            const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 32));
            const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 48));
            _mm_stream_si128(reinterpret_cast<__m128i *>(d + i), a);
            _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 16), b);
            _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 32), c);
            _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 48), e);
        }
        _mm_sfence();
        std::memcpy(d + whole, s + whole, bytes - whole);
        return;
    }
#endif
    std::memcpy(dst, src, bytes);
}

inline void floor_copy(FloorMethod m, void *dst, const void *src, std::size_t bytes) {
    if (m == FloorMethod::Streaming)
        streaming_copy(dst, src, bytes);
    else
        std::memcpy(dst, src, bytes);
}

// The faster method for `bytes` on this machine: `rounds` of both, alternated, every rank copying at
// once after a barrier; the lower sum over ranks of each rank's median wins (the same on all ranks).
inline FloorMethod choose_floor_method(void *dst, const void *src, std::size_t bytes, MPI_Comm comm, int rounds = 5) {
    std::vector<double> times[2];
    for (int r = 0; r < rounds; ++r)
        for (int m = 0; m < 2; ++m) {
            const int method = (r + m) % 2;  // which goes first alternates
            MPI_Barrier(comm);
            const double start = MPI_Wtime();
            floor_copy(static_cast<FloorMethod>(method), dst, src, bytes);
            times[method].push_back(MPI_Wtime() - start);
        }
    double sums[2] = {median(times[0]), median(times[1])};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
    return sums[1] < sums[0] ? FloorMethod::Streaming : FloorMethod::Memcpy;
}

}  // namespace bench

#endif
