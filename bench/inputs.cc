#include "inputs.h"

#include "rng.h"

#include <algorithm>
#include <cstring>

namespace bench {

namespace {

template <class T>
void fill_values(T *out, std::int64_t n, Rng &rng) {
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = static_cast<T>(1 + (rng.next() >> 61));  // [1, 8]
}

}  // namespace

void fill_block_input(ElementType type, void *buf, std::int64_t count, std::int64_t block_size,
                      const std::vector<std::int64_t> &blocks, std::uint64_t seed) {
    std::memset(buf, 0, static_cast<std::size_t>(count) * element_size(type));
    Rng rng(seed);
    with_element_type(type, [&](auto zero) {
        using T = decltype(zero);
        T *data = static_cast<T *>(buf);
        for (std::int64_t b : blocks) {
            const std::int64_t begin = b * block_size, end = std::min(count, begin + block_size);
            fill_values(data + begin, end - begin, rng);
        }
    });
}

void fill_random_values(ElementType type, void *values, std::int64_t n, std::uint64_t seed) {
    Rng rng(seed);
    with_element_type(type, [&](auto zero) { fill_values(static_cast<decltype(zero) *>(values), n, rng); });
}

void densify_pairs(ElementType type, const std::int64_t *indices, const void *values, std::int64_t nnz, void *dense,
                   std::int64_t count) {
    std::memset(dense, 0, static_cast<std::size_t>(count) * element_size(type));
    with_element_type(type, [&](auto zero) {
        using T = decltype(zero);
        const T *v = static_cast<const T *>(values);
        T *d = static_cast<T *>(dense);
        for (std::int64_t i = 0; i < nnz; ++i)
            d[indices[i]] = v[i];
    });
}

}  // namespace bench
