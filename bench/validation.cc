#include "validation.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace bench {

void poison(void *buf, std::size_t bytes) {
    std::memset(buf, 0xFF, bytes);
}

bool validate_result(ElementType type, const void *expected, const void *got, std::int64_t count,
                     std::int64_t block_size, const std::string &what, MPI_Comm comm) {
    const std::size_t esize = element_size(type);
    const auto *e = static_cast<const unsigned char *>(expected);
    const auto *g = static_cast<const unsigned char *>(got);
    int ok = std::memcmp(e, g, static_cast<std::size_t>(count) * esize) == 0;
    if (!ok) {
        std::int64_t first = -1, bad = 0;
        for (std::int64_t i = 0; i < count; ++i) {
            const std::size_t at = static_cast<std::size_t>(i) * esize;
            if (std::memcmp(e + at, g + at, esize) != 0) {
                if (first < 0) first = i;
                ++bad;
            }
        }
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        char where[64] = "";
        if (block_size > 0) std::snprintf(where, sizeof where, " (block %" PRId64 ")", first / block_size);
        std::fprintf(stderr,
                     "# VALIDATION FAILED on rank %d: %s: first bad index %" PRId64 "%s: expected %.17g, got "
                     "%.17g; %" PRId64 " of %" PRId64 " elements differ\n",
                     rank, what.c_str(), first, where,
                     element_as_double(type, expected, static_cast<std::size_t>(first)),
                     element_as_double(type, got, static_cast<std::size_t>(first)), bad, count);
        std::fflush(stderr);
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    return ok != 0;
}

}  // namespace bench
