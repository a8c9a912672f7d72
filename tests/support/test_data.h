// Test inputs shared by unit and MPI tests: block patterns, integer-valued random values of every
// element type (sums stay exact in floating point, so results compare bit for bit), and a scalar
// reference reduction written independently of the library's kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/element_type.h"

namespace mpix::sparse::detail::testing {

enum class Pattern { Random, Identical, Disjoint, Clustered };
inline const char *name_of(Pattern p) {
    switch (p) {
    case Pattern::Random: return "random";
    case Pattern::Identical: return "identical";
    case Pattern::Disjoint: return "disjoint";
    default: return "clustered";
    }
}

// Which of `blocks` blocks are non-zero on `rank` of `ranks` for a density in [0, 1].
inline std::vector<bool> block_pattern(Pattern pattern, std::uint64_t blocks, double density, int rank, int ranks,
                                       unsigned seed) {
    std::vector<bool> on(blocks, false);
    const auto want = static_cast<std::uint64_t>(density * static_cast<double>(blocks) + 0.5);
    if (want == 0) return on;
    switch (pattern) {
    case Pattern::Identical: {
        std::mt19937_64 rng(seed);
        for (std::uint64_t k = 0; k < blocks; ++k)
            on[k] = std::uniform_real_distribution<>(0, 1)(rng) < density;
        break;
    }
    case Pattern::Random: {
        std::mt19937_64 rng(seed * 7919 + static_cast<unsigned>(rank));
        for (std::uint64_t k = 0; k < blocks; ++k)
            on[k] = std::uniform_real_distribution<>(0, 1)(rng) < density;
        break;
    }
    case Pattern::Disjoint: {
        // Rank r owns every ranks-th block starting at r, and takes a density share of all blocks.
        std::uint64_t taken = 0;
        for (std::uint64_t k = static_cast<std::uint64_t>(rank); k < blocks && taken < want;
             k += static_cast<std::uint64_t>(ranks), ++taken)
            on[k] = true;
        break;
    }
    case Pattern::Clustered: {
        std::mt19937_64 rng(seed * 104729 + static_cast<unsigned>(rank));
        const std::uint64_t run = 32;
        std::uint64_t taken = 0;
        while (taken < want) {
            const std::uint64_t start = std::uniform_int_distribution<std::uint64_t>(0, blocks - 1)(rng);
            for (std::uint64_t k = start; k < blocks && k < start + run && taken < want; ++k)
                if (!on[k]) {
                    on[k] = true;
                    ++taken;
                }
        }
        break;
    }
    }
    return on;
}

template <class T>
T small_value(std::mt19937_64 &rng, bool allow_negative) {
    const int lo = allow_negative ? -8 : 1;
    int v = 0;
    while (v == 0)
        v = std::uniform_int_distribution<int>(lo, 8)(rng);
    return static_cast<T>(v);
}

template <class T>
void write_small(std::byte *p, std::mt19937_64 &rng) {
    const T v = small_value<T>(rng, std::is_signed_v<T>);  // floats count as signed
    std::memcpy(p, &v, sizeof v);
}

// Writes a non-zero integer-valued element of `type` at p.
inline void write_value(ElementType type, std::byte *p, std::mt19937_64 &rng) {
    switch (type) {
    case ElementType::F32: write_small<float>(p, rng); break;
    case ElementType::F64: write_small<double>(p, rng); break;
    case ElementType::I32: write_small<std::int32_t>(p, rng); break;
    case ElementType::I64: write_small<std::int64_t>(p, rng); break;
    case ElementType::U32: write_small<std::uint32_t>(p, rng); break;
    case ElementType::U64: write_small<std::uint64_t>(p, rng); break;
    default: break;
    }
}

// A dense vector of `count` elements whose blocks follow the pattern; zero blocks are zero bytes and
// within a non-zero block some elements are zero too (a block is non-zero if any byte is).
inline std::vector<std::byte> make_vector(ElementType type, std::uint64_t count, std::uint32_t block_elems,
                                          const std::vector<bool> &blocks_on, unsigned seed) {
    const std::size_t s = element_size(type);
    std::vector<std::byte> v(count * s, std::byte{0});
    std::mt19937_64 rng(seed);
    for (std::uint64_t k = 0; k < blocks_on.size(); ++k) {
        if (!blocks_on[k]) continue;
        const std::uint64_t lo = k * block_elems, hi = std::min<std::uint64_t>(count, lo + block_elems);
        bool any = false;
        for (std::uint64_t i = lo; i < hi; ++i)
            if (std::uniform_int_distribution<int>(0, 3)(rng) != 0 || (!any && i + 1 == hi)) {
                write_value(type, v.data() + i * s, rng);
                any = true;
            }
    }
    return v;
}

// A rank's input of a randomized case: `count` elements in blocks of `block`, the blocks on where the
// pattern puts them for this rank (seeded by pattern_seed), their values seeded by value_seed.
inline std::vector<std::byte> rank_input(ElementType type, std::uint64_t count, std::uint32_t block, Pattern pattern,
                                         double density, int rank, int ranks, unsigned pattern_seed,
                                         unsigned value_seed) {
    const std::uint64_t blocks = (count + block - 1) / block;
    return make_vector(type, count, block, block_pattern(pattern, blocks, density, rank, ranks, pattern_seed),
                       value_seed);
}

namespace detail {
template <class T>
T apply(ReduceOp op, T a, T b) {
    switch (op) {
    case ReduceOp::Sum:
        if constexpr (std::is_integral_v<T>)
            return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
        else
            return a + b;
    case ReduceOp::Max: return a < b ? b : a;
    default: break;
    }
    if constexpr (std::is_integral_v<T>) {
        switch (op) {
        case ReduceOp::Bor: return a | b;
        case ReduceOp::Bxor: return a ^ b;
        case ReduceOp::Lor: return static_cast<T>((a != 0) || (b != 0));
        case ReduceOp::Lxor: return static_cast<T>((a != 0) != (b != 0));
        default: break;
        }
    }
    return a;
}

template <class T>
void reduce_into(ReduceOp op, std::vector<std::byte> &acc, const std::vector<std::byte> &x, bool first) {
    const std::size_t n = acc.size() / sizeof(T);
    for (std::size_t i = 0; i < n; ++i) {
        T a, b;
        std::memcpy(&a, acc.data() + i * sizeof(T), sizeof(T));
        std::memcpy(&b, x.data() + i * sizeof(T), sizeof(T));
        // MPI_Allreduce applies the op to every rank's element, zeros included.
        const T r = first ? b : apply<T>(op, a, b);
        std::memcpy(acc.data() + i * sizeof(T), &r, sizeof(T));
    }
}
}  // namespace detail

// Element-wise reduction over all inputs, as MPI_Allreduce defines it (for 2+ inputs).
inline std::vector<std::byte> reference_reduce(ElementType type, ReduceOp op,
                                               const std::vector<std::vector<std::byte>> &inputs) {
    std::vector<std::byte> acc(inputs.at(0).size());
    for (std::size_t r = 0; r < inputs.size(); ++r) {
        switch (type) {
        case ElementType::F32: detail::reduce_into<float>(op, acc, inputs[r], r == 0); break;
        case ElementType::F64: detail::reduce_into<double>(op, acc, inputs[r], r == 0); break;
        case ElementType::I32: detail::reduce_into<std::int32_t>(op, acc, inputs[r], r == 0); break;
        case ElementType::I64: detail::reduce_into<std::int64_t>(op, acc, inputs[r], r == 0); break;
        case ElementType::U32: detail::reduce_into<std::uint32_t>(op, acc, inputs[r], r == 0); break;
        case ElementType::U64: detail::reduce_into<std::uint64_t>(op, acc, inputs[r], r == 0); break;
        default: break;
        }
    }
    return acc;
}

// Index of the first differing element, or -1.
inline long long first_difference(const std::vector<std::byte> &a, const std::vector<std::byte> &b, std::size_t elem) {
    if (a.size() != b.size()) return 0;
    if (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0) return -1;
    for (std::size_t i = 0; i < a.size(); i += elem)
        if (std::memcmp(a.data() + i, b.data() + i, elem) != 0) return static_cast<long long>(i / elem);
    return -1;
}

}  // namespace mpix::sparse::detail::testing
