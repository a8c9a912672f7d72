// MPIX_SPARSE_DEBUG: error details and stall reports on stderr. Read once per process.
#pragma once

#include <cstdlib>

namespace mpix::sparse::detail {

inline bool debug_enabled() {
    static const bool on = [] {
        const char *v = std::getenv("MPIX_SPARSE_DEBUG");
        return v != nullptr && *v != '\0' && *v != '0';
    }();
    return on;
}

}  // namespace mpix::sparse::detail
