#include "core/pair_sort.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace mpix::sparse::detail {
namespace {

constexpr int kDigitBits = 11;  // 2048 buckets: three passes cover 33 bits, enough for most vectors

// Stable LSD radix sort of `order` by keys; keys only use `bits` bits.
void radix_sort(PairSortScratch &s, std::size_t n, int bits) {
    s.keys_tmp.resize(n);
    s.order_tmp.resize(n);
    std::vector<std::size_t> counts(std::size_t{1} << kDigitBits);
    for (int shift = 0; shift < bits; shift += kDigitBits) {
        std::fill(counts.begin(), counts.end(), 0);
        const std::uint64_t mask = (std::uint64_t{1} << kDigitBits) - 1;
        for (std::size_t i = 0; i < n; ++i)
            ++counts[(s.keys[i] >> shift) & mask];
        std::size_t sum = 0;
        for (std::size_t &c : counts) {
            const std::size_t here = c;
            c = sum;
            sum += here;
        }
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t at = counts[(s.keys[i] >> shift) & mask]++;
            s.keys_tmp[at] = s.keys[i];
            s.order_tmp[at] = s.order[i];
        }
        s.keys.swap(s.keys_tmp);
        s.order.swap(s.order_tmp);
    }
}

}  // namespace

bool sort_pairs(const std::int64_t *indices, const std::byte *values, std::size_t nnz, std::size_t elem_size,
                std::uint64_t count, const ReduceKernels &kernels, PairSortScratch &s, SortedPairs &out) {
    bool sorted_unique = true;
    for (std::size_t i = 0; i < nnz; ++i) {
        if (indices[i] < 0 || static_cast<std::uint64_t>(indices[i]) >= count) return false;
        if (i > 0 && indices[i] <= indices[i - 1]) sorted_unique = false;
    }
    if (sorted_unique) {
        out = SortedPairs{indices, values, nnz};
        return true;
    }
    // Positions travel as uint32: the caller limits nnz to 2^32 - 1.
    s.keys.resize(nnz);
    s.order.resize(nnz);
    for (std::size_t i = 0; i < nnz; ++i)
        s.keys[i] = static_cast<std::uint64_t>(indices[i]);
    std::iota(s.order.begin(), s.order.end(), 0u);
    const int bits = count <= 1 ? 1 : 64 - __builtin_clzll(count - 1);
    radix_sort(s, nnz, bits);
    s.indices.resize(nnz);
    s.values.resize(nnz * elem_size);
    std::size_t unique = 0;
    for (std::size_t i = 0; i < nnz; ++i) {
        const std::byte *v = values + static_cast<std::size_t>(s.order[i]) * elem_size;
        if (unique > 0 && static_cast<std::uint64_t>(s.indices[unique - 1]) == s.keys[i]) {
            kernels.combine(s.values.data() + (unique - 1) * elem_size, v, 1);
        } else {
            s.indices[unique] = static_cast<std::int64_t>(s.keys[i]);
            kernels.init(s.values.data() + unique * elem_size, v, 1);
            ++unique;
        }
    }
    out = SortedPairs{s.indices.data(), s.values.data(), unique};
    return true;
}

}  // namespace mpix::sparse::detail
