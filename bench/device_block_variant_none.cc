// -d cuda in a benchmark built without CUDA.
#include "row_benchmark.h"

#include <stdexcept>

namespace bench {

std::unique_ptr<RowBenchmark> make_device_block_variant(const BenchContext &) {
    throw std::runtime_error("-d cuda: this benchmark was built without CUDA (configure with the CUDA toolkit)");
}

}  // namespace bench
