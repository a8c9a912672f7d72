// MPIX_SPARSE_DEBUG: error details and stall reports on stderr (1), and the learned algorithm
// choice, call by call, on each communicator's rank 0 (2). Read once per process.
#pragma once

#include <cstdlib>

namespace mpix::sparse::detail {

inline int debug_level() {
    static const int level = [] {
        const char *v = std::getenv("MPIX_SPARSE_DEBUG");
        if (v == nullptr || *v == '\0') return 0;
        const int n = std::atoi(v);
        return n > 0 ? n : (*v == '0' ? 0 : 1);  // any other non-empty value: on
    }();
    return level;
}

inline bool debug_enabled() {
    return debug_level() > 0;
}

}  // namespace mpix::sparse::detail
