// Validation of block-number lists that arrive from other ranks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpix::sparse::detail {

// True when idx[0, n) strictly ascends and its last entry is below `limit` (so all are). No early
// exit: the loop vectorizes, and lists here are long (element-sparse data lists every element).
template <class T>
bool ascending_below(const T *idx, std::size_t n, std::uint64_t limit) {
    if (n == 0) return true;
    bool descending = false;
    for (std::size_t i = 1; i < n; ++i)
        descending |= idx[i] <= idx[i - 1];
    return !descending && static_cast<std::uint64_t>(idx[n - 1]) < limit;
}

}  // namespace mpix::sparse::detail
