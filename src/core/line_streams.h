// Whole-line streaming loops (non-temporal stores of 64-byte lines), at the widest vector the CPU
// runs at full clock. The library is built for the x86-64 baseline (SSE2); where the CPU has
// AVX-512 (and VBMI2, see line_streams()), one store writes a whole line, as glibc's memcpy and
// memset do. On a Zen 5 guest (both widths alternated in one process, two processes at once,
// 64 MiB), zero fills took 4-19% less time and copies 0-7% less (docs/performance.md, "A Zen 5
// guest, and stores a line wide").
#pragma once

#include <cstddef>

namespace mpix::sparse::detail {

enum class StreamWidth { sse2, avx512 };

struct LineStreams {
    StreamWidth width;
    // dst is 64-byte aligned and n a multiple of 64; a store_fence() must follow before another
    // process may read dst.
    void (*zero)(std::byte *dst, std::size_t n);
    // Also asks for src's lines kPrefetchAhead bytes ahead (core/memory_ops.h); src needs no alignment.
    void (*copy)(std::byte *dst, const std::byte *src, std::size_t n);
};

// The loops for the widest width this CPU has and runs at full clock, chosen once (x86-64 only:
// elsewhere nothing streams).
const LineStreams &line_streams();
// The loops of one width, or nullptr where the CPU (or the compiler) lacks it: tests run every width.
const LineStreams *line_streams_of(StreamWidth width);

}  // namespace mpix::sparse::detail
