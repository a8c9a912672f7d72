#include "core/line_streams.h"

#include "core/memory_ops.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace mpix::sparse::detail {
namespace {

#if defined(__SSE2__)
void zero_sse2(std::byte *dst, std::size_t n) {
    const __m128i zero = _mm_setzero_si128();
    for (std::size_t i = 0; i < n; i += 64) {
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i), zero);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16), zero);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 32), zero);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 48), zero);
    }
}

void copy_sse2(std::byte *dst, const std::byte *src, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 64) {
        prefetch_ahead(src + i);
        const auto *s = reinterpret_cast<const __m128i *>(src + i);
        const __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
        const __m128i c = _mm_loadu_si128(s + 2), d = _mm_loadu_si128(s + 3);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i), a);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 48), d);
    }
}

constexpr LineStreams kSse2{StreamWidth::sse2, zero_sse2, copy_sse2};
#endif

#if defined(__SSE2__) && defined(__x86_64__) && defined(__GNUC__)
#define MPIX_SPARSE_HAVE_AVX512_STREAMS 1
__attribute__((target("avx512f"))) void zero_avx512(std::byte *dst, std::size_t n) {
    const __m512i zero = _mm512_setzero_si512();
    for (std::size_t i = 0; i < n; i += 64)
        _mm512_stream_si512(reinterpret_cast<__m512i *>(dst + i), zero);
}

__attribute__((target("avx512f"))) void copy_avx512(std::byte *dst, const std::byte *src, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 64) {
        prefetch_ahead(src + i);
        _mm512_stream_si512(reinterpret_cast<__m512i *>(dst + i), _mm512_loadu_si512(src + i));
    }
}

constexpr LineStreams kAvx512{StreamWidth::avx512, zero_avx512, copy_avx512};
#endif

}  // namespace

const LineStreams *line_streams_of(StreamWidth width) {
    switch (width) {
    case StreamWidth::sse2:
#if defined(__SSE2__)
        return &kSse2;
#else
        return nullptr;
#endif
    case StreamWidth::avx512:
#if defined(MPIX_SPARSE_HAVE_AVX512_STREAMS)
        return __builtin_cpu_supports("avx512f") ? &kAvx512 : nullptr;
#else
        return nullptr;
#endif
    }
    return nullptr;
}

#if defined(__SSE2__)  // elsewhere the library does not stream (core/memory_ops.cc)
const LineStreams &line_streams() {
    static const LineStreams *const chosen = [] {
#if defined(MPIX_SPARSE_HAVE_AVX512_STREAMS)
        // Skylake and Cascade Lake lower the core's clock while 512-bit instructions run, and glibc
        // avoids them there too; the CPUs with AVX512-VBMI2 (Ice Lake on, AMD's Zen 4 on) do not.
        if (__builtin_cpu_supports("avx512vbmi2"))
            if (const LineStreams *wide = line_streams_of(StreamWidth::avx512)) return wide;
#endif
        return line_streams_of(StreamWidth::sse2);
    }();
    return *chosen;
}
#endif

}  // namespace mpix::sparse::detail
