// Command-line options of osu_sparse_allreduce (OSU micro-benchmark conventions where they exist).
#ifndef MPIX_SPARSE_BENCH_BENCH_OPTIONS_H
#define MPIX_SPARSE_BENCH_BENCH_OPTIONS_H

#include "element_type.h"
#include "patterns.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

enum class Variant { Block, Elements };
const char *variant_name(Variant v);

struct BenchOptions {
    std::size_t min_size = 4;  // bytes
    std::size_t max_size = std::size_t{64} << 20;
    int iterations = 50;
    int warmup = 5;
    bool full = false;
    std::vector<double> densities{0.01};
    Pattern pattern = Pattern::Random;
    std::int64_t block_size = 256;
    ElementType type = ElementType::Float;
    Variant variant = Variant::Block;
    bool cuda = false;       // -d cuda: device buffers (block variant)
    bool alloc_mem = false;  // --alloc-mem: buffers from MPIX_Sparse_alloc_mem (block variant, host)
    bool validate = false;
    bool no_mpi = false;     // --no-mpi: MPI_Allreduce neither timed nor run (block variant, host)
    bool profile = false;    // --profile: mpix_sparse_profile=on, phase columns
    bool keep_heap = false;  // --keep-heap: malloc keeps freed large blocks (see process_heap.h)
    bool forced = false;     // --forced: also each algorithm forced, interleaved (block variant, host)
    std::string json_path;
    std::uint64_t seed = 1;
    double zipf_s = 1.05;
    double time_limit = 10;  // seconds per row; 0 = no limit
    std::string command_line;

    // Timed iterations at this message size before the time limit: sizes above 16 MiB run at most
    // 20, like OSU's separate large-message count, so a row stays near the time limit.
    int iterations_for(std::size_t bytes) const;
};

enum class ParseResult { Run, Help, Error };

// Parses argv into opts. On Help, message is the usage text; on Error, a one-line explanation.
ParseResult parse_options(int argc, char **argv, BenchOptions &opts, std::string &message);

}  // namespace bench

#endif
