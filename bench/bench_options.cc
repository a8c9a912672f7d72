#include "bench_options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace po = boost::program_options;

namespace bench {

namespace {

constexpr std::size_t kLargeMessage = std::size_t{16} << 20;
constexpr int kLargeIterations = 20;

std::size_t parse_size(const std::string &s) {
    std::size_t used = 0;
    const unsigned long long v = std::stoull(s, &used);
    if (used != s.size() || v == 0) throw std::invalid_argument("bad size '" + s + "'");
    return static_cast<std::size_t>(v);
}

// "MAX", "MIN:MAX", "MIN:" or ":MAX", as OSU's -m.
void parse_size_range(const std::string &s, BenchOptions &opts) {
    const std::size_t colon = s.find(':');
    if (colon == std::string::npos) {
        opts.max_size = parse_size(s);
    } else {
        if (colon > 0) opts.min_size = parse_size(s.substr(0, colon));
        if (colon + 1 < s.size()) opts.max_size = parse_size(s.substr(colon + 1));
    }
    if (opts.min_size > opts.max_size)
        throw std::invalid_argument("-m: minimum size " + std::to_string(opts.min_size) + " exceeds maximum " +
                                    std::to_string(opts.max_size));
}

std::vector<double> parse_densities(const std::string &s) {
    std::vector<double> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        std::size_t used = 0;
        double d = -1;
        try {
            d = std::stod(item, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used != item.size() || item.empty() || !(d >= 0 && d <= 1))
            throw std::invalid_argument("--density: '" + item + "' is not a fraction in [0, 1]");
        out.push_back(d);
    }
    if (out.empty()) throw std::invalid_argument("--density: empty list");
    return out;
}

std::string join_command_line(int argc, char **argv) {
    std::string out;
    for (int i = 0; i < argc; ++i) {
        std::string arg = argv[i];
        if (i) out += ' ';
        if (arg.find_first_of(" \t'\"") != std::string::npos || arg.empty())
            out += '\'' + arg + '\'';  // readable, not a full shell quoting
        else
            out += arg;
    }
    return out;
}

}  // namespace

const char *variant_name(Variant v) {
    return v == Variant::Block ? "block" : "elements";
}

int BenchOptions::iterations_for(std::size_t bytes) const {
    return bytes > kLargeMessage ? std::min(iterations, kLargeIterations) : iterations;
}

ParseResult parse_options(int argc, char **argv, BenchOptions &opts, std::string &message) {
    std::string sizes, densities = "0.01", pattern = "random", type = "float", variant = "block", device = "host";
    po::options_description desc(
        "Usage: osu_sparse_allreduce [options]\n"
        "Latency of MPIX_Sparse_allreduce against MPI_Allreduce (and, with --variant elements, against an\n"
        "allgather of (index, value) pairs), interleaved call by call. Options");
    // clang-format off
    desc.add_options()
        ("help,h", "print this help and exit")
        ("message-size,m", po::value(&sizes),
         "MIN:MAX message sizes in bytes, doubling from MIN (MAX alone: MIN = 4) [4:67108864]")
        ("iterations,i", po::value(&opts.iterations)->default_value(opts.iterations),
         "timed iterations per row (at most 20 above 16 MiB)")
        ("warmup,x", po::value(&opts.warmup)->default_value(opts.warmup), "untimed warm-up iterations per row")
        ("full,f", po::bool_switch(&opts.full), "also print min and max latency across ranks, and iterations")
        ("density", po::value(&densities)->default_value(densities),
         "fraction of non-zero blocks (elements) per rank; a comma list sweeps densities")
        ("pattern", po::value(&pattern)->default_value(pattern),
         "non-zero placement: random | identical | disjoint | clustered | zipf")
        ("block-size", po::value(&opts.block_size)->default_value(opts.block_size),
         "elements per block, for the inputs and the library (mpix_sparse_block_size)")
        ("type", po::value(&type)->default_value(type), "element type: float | double | int | float16 | bfloat16 (MPIX_FLOAT16 / MPIX_BFLOAT16; MPI_Allreduce gets a float16 sum op)")
        ("variant", po::value(&variant)->default_value(variant),
         "block: dense buffers with zero blocks; elements: (index, value) pairs")
        ("device,d", po::value(&device)->default_value(device),
         "where the buffers live: host | cuda (block variant; OSU's -d cuda)")
        ("alloc-mem", po::bool_switch(&opts.alloc_mem),
         "buffers from MPIX_Sparse_alloc_mem, which the ranks of a machine read in place (block variant, host); "
         "the floor copies between such buffers too")
        ("validate", po::bool_switch(&opts.validate), "check every result bitwise against MPI_Allreduce")
        ("no-mpi", po::bool_switch(&opts.no_mpi),
         "neither time nor run MPI_Allreduce (block variant, host; not with --validate): for links so slow that "
         "its calls would take minutes; the Union column then counts the library's first result")
        ("profile", po::bool_switch(&opts.profile),
         "time the library's phases (mpix_sparse_profile=on): us per timed call, mean over ranks")
        ("keep-heap", po::bool_switch(&opts.keep_heap),
         "malloc keeps freed blocks of up to 1 GiB (glibc mallopt), so a temporary buffer MPI_Allreduce "
         "allocates per call is not a fresh mapping faulted in page by page every call (Open MPI 4.1 from 32 MiB)")
        ("forced", po::bool_switch(&opts.forced),
         "also time the library with each algorithm forced (dense, aggregator, allgather; one communicator "
         "each), interleaved with the rest: columns BestForced (the fastest) and Auto/Best (block variant)")
        ("json", po::value(&opts.json_path), "rank 0 writes all rows and the run's metadata to this file")
        ("seed", po::value(&opts.seed)->default_value(opts.seed), "seed of all random inputs")
        ("zipf-s", po::value(&opts.zipf_s)->default_value(opts.zipf_s), "exponent s of the zipf pattern")
        ("time-limit", po::value(&opts.time_limit)->default_value(opts.time_limit),
         "seconds a row may take; fewer iterations are timed if warm-up predicts more (0: no limit)");
    // clang-format on
    opts.command_line = join_command_line(argc, argv);
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::ostringstream out;
            out << desc;
            message = out.str();
            return ParseResult::Help;
        }
        if (!sizes.empty()) parse_size_range(sizes, opts);
        opts.densities = parse_densities(densities);
        if (!parse_pattern(pattern, opts.pattern)) throw std::invalid_argument("--pattern: unknown '" + pattern + "'");
        if (!parse_element_type(type, opts.type)) throw std::invalid_argument("--type: unknown '" + type + "'");
        if (variant == "block")
            opts.variant = Variant::Block;
        else if (variant == "elements")
            opts.variant = Variant::Elements;
        else
            throw std::invalid_argument("--variant: unknown '" + variant + "'");
        if (device != "host" && device != "cuda") throw std::invalid_argument("-d: unknown '" + device + "'");
        opts.cuda = device == "cuda";
        if (opts.cuda && opts.variant != Variant::Block) throw std::invalid_argument("-d cuda: block variant only");
        if (opts.alloc_mem && (opts.cuda || opts.variant != Variant::Block))
            throw std::invalid_argument("--alloc-mem: block variant with host buffers only");
        if (opts.no_mpi && (opts.cuda || opts.variant != Variant::Block || opts.validate))
            throw std::invalid_argument("--no-mpi: block variant with host buffers, without --validate");
        if (opts.forced && (opts.cuda || opts.variant != Variant::Block))
            throw std::invalid_argument("--forced: block variant with host buffers only");
        // The baseline's 16-bit sum is a host function: MPI could not call it on device memory.
        if (opts.cuda && element_size(opts.type) == 2)
            throw std::invalid_argument("-d cuda: float, double or int (the 16-bit baseline op runs on the host)");
        if (opts.iterations < 1) throw std::invalid_argument("-i: must be at least 1");
        if (opts.warmup < 0) throw std::invalid_argument("-x: must not be negative");
        if (opts.block_size < 1 || opts.block_size > (1 << 20))
            throw std::invalid_argument("--block-size: must be in 1..1048576");
        if (!(opts.zipf_s > 0)) throw std::invalid_argument("--zipf-s: must be positive");
        if (!(opts.time_limit >= 0)) throw std::invalid_argument("--time-limit: must not be negative");
    } catch (const std::exception &e) {
        message = e.what();
        return ParseResult::Error;
    }
    return ParseResult::Run;
}

}  // namespace bench
