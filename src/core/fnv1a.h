// FNV-1a, 64 bits: one hash for the keys ranks compare to learn what they share (the machine and its
// shared-memory domain) and for the digest of the settings they must share. Agreement checks, not
// security ones: equal inputs give equal values on every rank of one build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace mpix::sparse::detail {

class Fnv1a {
  public:
    void add_bytes(const void *data, std::size_t n) {
        const auto *p = static_cast<const unsigned char *>(data);
        for (std::size_t i = 0; i < n; ++i)
            h_ = (h_ ^ p[i]) * kPrime;
    }
    void add(std::string_view s) { add_bytes(s.data(), s.size()); }
    // A number's or an enumerator's bytes (types without padding: their bytes are their value).
    template <typename T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>, int> = 0>
    void add(T value) {
        unsigned char bytes[sizeof(T)];
        std::memcpy(bytes, &value, sizeof(T));
        add_bytes(bytes, sizeof(T));
    }
    std::uint64_t value() const { return h_; }

  private:
    static constexpr std::uint64_t kOffsetBasis = 14695981039346656037ull;
    static constexpr std::uint64_t kPrime = 1099511628211ull;
    std::uint64_t h_ = kOffsetBasis;
};

}  // namespace mpix::sparse::detail
