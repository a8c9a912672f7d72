#include "core/reduce_kernels.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "core/half_float.h"
#include "core/memory_ops.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace mpix::sparse::detail {
namespace {

struct SumOp {
    template <class T>
    static T init(T x) {
        return x;
    }
    template <class T>
    static T combine(T a, T x) {
        // Signed overflow wraps as MPI implementations do, without undefined behaviour.
        if constexpr (std::is_integral_v<T>) {
            using U = std::make_unsigned_t<T>;
            return static_cast<T>(static_cast<U>(a) + static_cast<U>(x));
        } else {
            return a + x;
        }
    }
};
struct BorOp {
    template <class T>
    static T init(T x) {
        return x;
    }
    template <class T>
    static T combine(T a, T x) {
        return a | x;
    }
};
struct BxorOp {
    template <class T>
    static T init(T x) {
        return x;
    }
    template <class T>
    static T combine(T a, T x) {
        return a ^ x;
    }
};
struct LorOp {
    template <class T>
    static T init(T x) {
        return static_cast<T>(x != 0);
    }
    template <class T>
    static T combine(T a, T x) {
        return static_cast<T>((a != 0) | (x != 0));
    }
};
struct LxorOp {
    template <class T>
    static T init(T x) {
        return static_cast<T>(x != 0);
    }
    template <class T>
    static T combine(T a, T x) {
        return static_cast<T>((a != 0) ^ (x != 0));
    }
};
struct MaxOp {
    template <class T>
    static T init(T x) {
        return x;
    }
    template <class T>
    static T combine(T a, T x) {
        return a < x ? x : a;
    }
};

// Whether init(x) is x for every value: a slot that already holds its first contribution (an
// aggregator reducing in place) needs nothing more. The logical ops normalize to 0/1.
template <class Op>
constexpr bool init_is_identity =
    std::is_same_v<Op, SumOp> || std::is_same_v<Op, BorOp> || std::is_same_v<Op, BxorOp> || std::is_same_v<Op, MaxOp>;

// Element loops over __restrict pointers copied through memcpy-safe typed access: user buffers are
// only guaranteed element alignment, which is what T* needs.
template <class T, class Op>
void init_elems(std::byte *acc, const std::byte *x, std::size_t n) {
    T *__restrict a = reinterpret_cast<T *>(acc);
    const T *__restrict v = reinterpret_cast<const T *>(x);
    for (std::size_t i = 0; i < n; ++i)
        a[i] = Op::init(v[i]);
}

// A slot's first contribution that is the slot itself (an aggregator reducing in place): it holds
// its value already, which the logical ops normalize as init would. Not init_elems: its pointers
// are __restrict, and here they would be the same.
template <class T, class Op>
void init_in_place(std::byte *acc, std::size_t n) {
    if constexpr (!init_is_identity<Op>) {
        T *a = reinterpret_cast<T *>(acc);
        for (std::size_t i = 0; i < n; ++i)
            a[i] = Op::init(a[i]);
    }
}

template <class T, class Op>
void combine_elems(std::byte *acc, const std::byte *x, std::size_t n) {
    T *a = reinterpret_cast<T *>(acc);
    const T *v = reinterpret_cast<const T *>(x);
    // acc may alias x exactly (in-place aggregation reads and writes the same slot); element-wise
    // access keeps that correct while letting the compiler vectorize.
    for (std::size_t i = 0; i < n; ++i)
        a[i] = Op::combine(a[i], v[i]);
}

template <class T, class Op>
void accumulate(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, const std::uint32_t *index,
                std::int64_t shift, const std::byte *data, std::size_t nblocks, std::size_t elems, std::size_t stride) {
    T *a = reinterpret_cast<T *>(acc);
    const T *v = reinterpret_cast<const T *>(data);
    if (stride == 1) {
        // Element-sparse traffic: one element per block, a scalar loop without calls.
        for (std::size_t i = 0; i < nblocks; ++i) {
            const std::size_t slot =
                static_cast<std::size_t>((index ? std::int64_t{index[i]} : std::int64_t(i)) + shift);
            if (counts[slot]++ == 0) {
                touched[slot >> 6] |= std::uint64_t{1} << (slot & 63);
                a[slot] = Op::init(v[i]);
            } else {
                a[slot] = Op::combine(a[slot], v[i]);
            }
        }
        return;
    }
    for (std::size_t i = 0; i < nblocks; ++i) {
        const std::size_t slot = static_cast<std::size_t>((index ? std::int64_t{index[i]} : std::int64_t(i)) + shift);
        T *out = a + slot * stride;
        const T *in = v + i * stride;
        // (From the block's start: a partial last block ends before stride elements.)
        for (std::size_t line = 0; line < stride * sizeof(T); line += 64)
            prefetch_ahead(in, line + kPrefetchAhead);
        if (counts[slot]++ == 0) {
            touched[slot >> 6] |= std::uint64_t{1} << (slot & 63);
            if (out != in)
                init_elems<T, Op>(reinterpret_cast<std::byte *>(out), reinterpret_cast<const std::byte *>(in), elems);
            else
                init_in_place<T, Op>(reinterpret_cast<std::byte *>(out), elems);
        } else {
            combine_elems<T, Op>(reinterpret_cast<std::byte *>(out), reinterpret_cast<const std::byte *>(in), elems);
        }
    }
}

// Up to four sources combined into n elements in one pass, in order: out = op(...op(start, s0)...,
// s3), where start is init(s0) for a slot's first contribution (then s0 is not combined again).
// No source aliases out (accumulate_runs takes a source that is the slot itself apart).
template <class T, class Op, std::size_t K>
void fuse_sources(T *__restrict out, const T *const *s, std::size_t n, bool first) {
    const T *__restrict s0 = s[0];
    const T *__restrict s1 = K > 1 ? s[1] : nullptr;
    const T *__restrict s2 = K > 2 ? s[2] : nullptr;
    const T *__restrict s3 = K > 3 ? s[3] : nullptr;
    auto rest = [&](T v, std::size_t e) {
        if constexpr (K > 1) v = Op::combine(v, s1[e]);
        if constexpr (K > 2) v = Op::combine(v, s2[e]);
        if constexpr (K > 3) v = Op::combine(v, s3[e]);
        return v;
    };
    if (first)  // two loops, so that neither tests `first` per element
        for (std::size_t e = 0; e < n; ++e)
            out[e] = rest(Op::init(s0[e]), e);
    else
        for (std::size_t e = 0; e < n; ++e)
            out[e] = rest(Op::combine(out[e], s0[e]), e);
}

template <class T, class Op>
void fuse_any(T *out, const T *const *s, std::size_t k, std::size_t n, bool first) {
    switch (k) {
    case 1: return fuse_sources<T, Op, 1>(out, s, n, first);
    case 2: return fuse_sources<T, Op, 2>(out, s, n, first);
    case 3: return fuse_sources<T, Op, 3>(out, s, n, first);
    default: return fuse_sources<T, Op, 4>(out, s, n, first);
    }
}

template <class T, class Op>
void accumulate_runs(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, std::size_t slot0,
                     const std::byte *const *sources, std::size_t k, std::size_t nblocks, std::size_t elems,
                     std::size_t stride) {
    T *a = reinterpret_cast<T *>(acc);
    const std::size_t block_bytes = stride * sizeof(T);
    std::array<const T *, 4> s{};
    for (std::size_t i = 0; i < nblocks; ++i) {
        const std::size_t slot = slot0 + i;
        T *out = a + slot * stride;
        for (std::size_t line = 0; line < block_bytes; line += 64)
            for (std::size_t j = 0; j < k && j < 4; ++j)
                prefetch_ahead(sources[j] + i * block_bytes, line + kPrefetchAhead);
        bool first = counts[slot] == 0;
        if (first) touched[slot >> 6] |= std::uint64_t{1} << (slot & 63);
        counts[slot] += static_cast<std::uint32_t>(k);
        auto source = [&](std::size_t j) { return reinterpret_cast<const T *>(sources[j] + i * block_bytes); };
        for (std::size_t j = 0; j < k;) {
            if (source(j) == out) {
                // The slot itself (an aggregator reducing in place: its own blocks, which come first),
                // treated as accumulate treats such a source.
                auto *slot_bytes = reinterpret_cast<std::byte *>(out);
                if (first)
                    init_in_place<T, Op>(slot_bytes, elems);
                else
                    combine_elems<T, Op>(slot_bytes, slot_bytes, elems);
                first = false;
                ++j;
                continue;
            }
            std::size_t g = 0;  // up to four sources in a row, none of them the slot
            while (g < 4 && j + g < k && source(j + g) != out) {
                s[g] = source(j + g);
                ++g;
            }
            fuse_any<T, Op>(out, s.data(), g, elems, first);
            first = false;
            j += g;
        }
    }
}

template <class T, class Op, class Index>
void scatter_elements(std::byte *out, std::uint64_t base, const Index *index, const std::byte *values, std::size_t n) {
    T *o = reinterpret_cast<T *>(out);
    const T *v = reinterpret_cast<const T *>(values);
    for (std::size_t i = 0; i < n; ++i) {
        T &slot = o[index[i] - base];
        slot = Op::combine(slot, v[i]);
    }
}

// 0 + x is x for every float but -0 (gives +0) and a signalling NaN (comes out quiet); zeros and
// NaNs are rare in sparse values, so any of them sends the call to the counting path.
template <class T>
bool exact_from_zero_float(const std::byte *values, std::size_t n) {
    const T *v = reinterpret_cast<const T *>(values);
    unsigned inexact = 0;  // an integer reduction, so the loop vectorizes
    for (std::size_t i = 0; i < n; ++i)
        inexact |= static_cast<unsigned>(!(v[i] == v[i]) | (v[i] == T(0)));
    return inexact == 0;
}

template <class T>
void finish_partial_float(std::byte *slot, std::size_t elems) {
    T *a = reinterpret_cast<T *>(slot);
    for (std::size_t i = 0; i < elems; ++i)
        a[i] = a[i] + T(0);
}

template <class T, class Op>
std::size_t collect_elements(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, std::size_t span,
                             std::uint32_t contributors, std::uint32_t *union_out) {
    T *a = reinterpret_cast<T *>(acc);
    std::size_t u = 0;
    const std::size_t words = (span + 63) / 64;
    for (std::size_t w = 0; w < words; ++w) {
        std::uint64_t bits = touched[w];
        if (bits == 0) continue;
        touched[w] = 0;
        do {
            const std::size_t i = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
            bits &= bits - 1;
            union_out[u++] = static_cast<std::uint32_t>(i);
            if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, SumOp>)
                if (counts[i] < contributors) a[i] = a[i] + T(0);
            counts[i] = 0;
        } while (bits != 0);
    }
    return u;
}

// 16-bit floats: slots are floats; each contribution is widened exactly, so a slot's value is the
// float sum of its contributors in the fixed order, rounded once by narrow(). AddBlock(out, in,
// elems, first) widens one block into its slot (copying when it is the slot's first contributor).
template <class AddBlock>
void accumulate_blocks_wide(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, const std::uint32_t *index,
                            std::int64_t shift, const std::byte *data, std::size_t nblocks, std::size_t elems,
                            std::size_t stride, AddBlock add_block) {
    float *a = reinterpret_cast<float *>(acc);
    const auto *v = reinterpret_cast<const std::uint16_t *>(data);
    for (std::size_t i = 0; i < nblocks; ++i) {
        const std::size_t slot = static_cast<std::size_t>((index ? std::int64_t{index[i]} : std::int64_t(i)) + shift);
        const bool first = counts[slot]++ == 0;
        if (first) touched[slot >> 6] |= std::uint64_t{1} << (slot & 63);
        add_block(a + slot * stride, v + i * stride, elems, first);
    }
}

template <class Format>
void add_block_portable(float *out, const std::uint16_t *in, std::size_t elems, bool first) {
    if (first) {
        for (std::size_t e = 0; e < elems; ++e)
            out[e] = Format::to_float(in[e]);
    } else {
        for (std::size_t e = 0; e < elems; ++e)
            out[e] += Format::to_float(in[e]);
    }
}

template <class Format>
void accumulate_wide(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, const std::uint32_t *index,
                     std::int64_t shift, const std::byte *data, std::size_t nblocks, std::size_t elems,
                     std::size_t stride) {
    accumulate_blocks_wide(acc, counts, touched, index, shift, data, nblocks, elems, stride,
                           &add_block_portable<Format>);
}

template <class Format>
void narrow_wide(std::byte *out, const std::byte *wide, std::size_t n) {
    auto *o = reinterpret_cast<std::uint16_t *>(out);
    const auto *w = reinterpret_cast<const float *>(wide);
    for (std::size_t i = 0; i < n; ++i)
        o[i] = Format::from_float(w[i]);
}

// Element-wise on the 16-bit values themselves (a rank's duplicate indices): one rounding per add.
template <class Format>
void init_narrow(std::byte *acc, const std::byte *x, std::size_t n) {
    std::memcpy(acc, x, n * sizeof(std::uint16_t));
}

template <class Format>
void combine_narrow(std::byte *acc, const std::byte *x, std::size_t n) {
    auto *a = reinterpret_cast<std::uint16_t *>(acc);
    const auto *v = reinterpret_cast<const std::uint16_t *>(x);
    for (std::size_t i = 0; i < n; ++i)
        a[i] = Format::from_float(Format::to_float(a[i]) + Format::to_float(v[i]));
}

template <class Format>
constexpr std::array<ReduceKernels, static_cast<std::size_t>(ReduceOp::Count_)> half_kernels() {
    ReduceKernels k{};
    k.accumulate = &accumulate_wide<Format>;
    k.finish_partial = &finish_partial_float<float>;
    k.collect_elements = &collect_elements<float, SumOp>;
    k.init = &init_narrow<Format>;
    k.combine = &combine_narrow<Format>;
    k.narrow = &narrow_wide<Format>;
    k.accumulator_size = sizeof(float);
    return {k, ReduceKernels{}, ReduceKernels{}, ReduceKernels{}, ReduceKernels{}, ReduceKernels{}};
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// float16 with F16C: the same conversions in hardware, 8 values an instruction. vcvtph2ps widens
// exactly; vcvtps2ph with rounding control 0 rounds to nearest, ties to even, as float_to_half does,
// and NaNs come out with the same bits (quieted, top payload kept), so results equal the portable
// kernels' bit for bit (except which payload an addition of two NaNs keeps: the compiler's operand
// order, in either kernel). Chosen at run time (float16_kernels), never assumed at build time.
#define MPIX_SPARSE_F16C_KERNELS 1

// CPUID leaf 1: F16C and AVX, and the OS saving YMM state (OSXSAVE, then XCR0 bits 1-2). Read
// directly: clang's __builtin_cpu_supports does not know "f16c".
bool cpu_has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
    const unsigned needed = (1u << 27) | (1u << 28) | (1u << 29);  // OSXSAVE, AVX, F16C
    if ((ecx & needed) != needed) return false;
    unsigned xcr0_lo = 0, xcr0_hi = 0;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    return (xcr0_lo & 6u) == 6u;
}

__attribute__((target("avx,f16c"))) void add_block_f16c(float *out, const std::uint16_t *in, std::size_t elems,
                                                        bool first) {
    std::size_t e = 0;
    for (; e + 8 <= elems; e += 8) {
        const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(in + e)));
        _mm256_storeu_ps(out + e, first ? x : _mm256_add_ps(_mm256_loadu_ps(out + e), x));
    }
    for (; e < elems; ++e)
        out[e] = first ? half_to_float(in[e]) : out[e] + half_to_float(in[e]);
}

void accumulate_f16c(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, const std::uint32_t *index,
                     std::int64_t shift, const std::byte *data, std::size_t nblocks, std::size_t elems,
                     std::size_t stride) {
    accumulate_blocks_wide(acc, counts, touched, index, shift, data, nblocks, elems, stride, &add_block_f16c);
}

__attribute__((target("avx,f16c"))) void narrow_f16c(std::byte *out, const std::byte *wide, std::size_t n) {
    auto *o = reinterpret_cast<std::uint16_t *>(out);
    const auto *w = reinterpret_cast<const float *>(wide);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(o + i), _mm256_cvtps_ph(_mm256_loadu_ps(w + i), 0));
    for (; i < n; ++i)
        o[i] = float_to_half(w[i]);
}
#endif

template <class T, class Op>
constexpr ReduceKernels make_kernels() {
    ReduceKernels k{};
    k.accumulator_size = sizeof(T);
    k.accumulate = &accumulate<T, Op>;
    k.accumulate_runs = &accumulate_runs<T, Op>;
    k.finish_partial = nullptr;
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, SumOp>) k.finish_partial = &finish_partial_float<T>;
    k.init = &init_elems<T, Op>;
    k.combine = &combine_elems<T, Op>;
    k.collect_elements = &collect_elements<T, Op>;
    k.scatter_elements = &scatter_elements<T, Op, std::uint64_t>;
    k.scatter_elements_narrow = &scatter_elements<T, Op, std::uint32_t>;
    if constexpr (std::is_floating_point_v<T>) k.exact_from_zero = &exact_from_zero_float<T>;
    return k;
}

template <class T>
constexpr std::array<ReduceKernels, static_cast<std::size_t>(ReduceOp::Count_)> kernels_of_type() {
    return {make_kernels<T, SumOp>(), make_kernels<T, BorOp>(),  make_kernels<T, BxorOp>(),
            make_kernels<T, LorOp>(), make_kernels<T, LxorOp>(), make_kernels<T, MaxOp>()};
}

// Bitwise and logical ops are not defined on floating types: their rows stay empty (never selected,
// is_sparse_capable() rules them out).
template <class T>
constexpr std::array<ReduceKernels, static_cast<std::size_t>(ReduceOp::Count_)> float_kernels() {
    return {make_kernels<T, SumOp>(), ReduceKernels{}, ReduceKernels{},
            ReduceKernels{},          ReduceKernels{}, ReduceKernels{}};
}

const std::array<std::array<ReduceKernels, static_cast<std::size_t>(ReduceOp::Count_)>,
                 static_cast<std::size_t>(ElementType::Count_)>
    kKernels{float_kernels<float>(),          float_kernels<double>(),          kernels_of_type<std::int32_t>(),
             kernels_of_type<std::int64_t>(), kernels_of_type<std::uint32_t>(), kernels_of_type<std::uint64_t>(),
             half_kernels<Float16Format>(),   half_kernels<BFloat16Format>()};

// float16 sums: the F16C kernels where the CPU has them (nearly every x86-64 since 2012).
const ReduceKernels &float16_kernels(ReduceOp op) {
    const auto &portable = kKernels[static_cast<std::size_t>(ElementType::F16)];
#ifdef MPIX_SPARSE_F16C_KERNELS
    static const ReduceKernels hardware = [] {
        ReduceKernels k = kKernels[static_cast<std::size_t>(ElementType::F16)][static_cast<std::size_t>(ReduceOp::Sum)];
        k.accumulate = &accumulate_f16c;
        k.narrow = &narrow_f16c;
        return k;
    }();
    static const bool f16c = cpu_has_f16c();
    if (f16c && op == ReduceOp::Sum) return hardware;
#endif
    return portable[static_cast<std::size_t>(op)];
}

}  // namespace

const ReduceKernels &kernels_for(ElementType type, ReduceOp op) {
    if (!is_sparse_capable(type, op)) throw std::logic_error("kernels_for: not sparse-capable");
    if (type == ElementType::F16) return float16_kernels(op);
    return kKernels[static_cast<std::size_t>(type)][static_cast<std::size_t>(op)];
}

}  // namespace mpix::sparse::detail
