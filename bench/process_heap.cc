#include "process_heap.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace bench {

bool keep_freed_blocks_in_heap() {
#if defined(__GLIBC__)
    // mallopt takes an int; 1 GiB covers the temporary buffers of the largest rows the bench runs.
    constexpr int kKeptBytes = 1 << 30;
    return mallopt(M_MMAP_THRESHOLD, kKeptBytes) == 1 && mallopt(M_TRIM_THRESHOLD, kKeptBytes) == 1;
#else
    return false;
#endif
}

}  // namespace bench
