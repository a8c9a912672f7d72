// The median of a few repeated timings (the upper middle one for an even count): what the
// standalone benchmarks report, as the machine's noise makes the mean and the best run misleading.
#ifndef MPIX_SPARSE_BENCH_MEDIAN_H
#define MPIX_SPARSE_BENCH_MEDIAN_H

#include <algorithm>
#include <vector>

namespace bench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace bench

#endif
