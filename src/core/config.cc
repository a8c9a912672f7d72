#include "core/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

#include "core/block_layout.h"
#include "core/error.h"
#include "core/fnv1a.h"

namespace mpix::sparse::detail {
namespace {

constexpr SettingName kBlockSize{"mpix_sparse_block_size", "MPIX_SPARSE_BLOCK_SIZE"};
constexpr SettingName kAggregators{"mpix_sparse_aggregators", "MPIX_SPARSE_AGGREGATORS"};
constexpr SettingName kMode{"mpix_sparse_aggregator_mode", "MPIX_SPARSE_AGGREGATOR_MODE"};
constexpr SettingName kAlgorithm{"mpix_sparse_algorithm", "MPIX_SPARSE_ALGORITHM"};
constexpr SettingName kPlacement{"mpix_sparse_placement", "MPIX_SPARSE_PLACEMENT"};
constexpr SettingName kHierarchical{"mpix_sparse_hierarchical", "MPIX_SPARSE_HIERARCHICAL"};
constexpr SettingName kDenseBelow{"mpix_sparse_dense_below", "MPIX_SPARSE_DENSE_BELOW"};
constexpr SettingName kTestFail{"mpix_sparse_test_fail", nullptr};
constexpr SettingName kTimeout{"mpix_sparse_timeout", "MPIX_SPARSE_TIMEOUT"};
constexpr SettingName kProgressThread{"mpix_sparse_progress_thread", "MPIX_SPARSE_PROGRESS_THREAD"};
constexpr SettingName kProfile{"mpix_sparse_profile", "MPIX_SPARSE_PROFILE"};
constexpr SettingName kNodeMulticast{"mpix_sparse_node_multicast", "MPIX_SPARSE_NODE_MULTICAST"};
constexpr SettingName kTune{"mpix_sparse_tune", "MPIX_SPARSE_TUNE"};
// Tuning knobs: environment only (no info key).
constexpr SettingName kMessageBytes{nullptr, "MPIX_SPARSE_MESSAGE_BYTES"};
constexpr SettingName kWindow{nullptr, "MPIX_SPARSE_WINDOW"};
constexpr SettingName kSharedMemory{nullptr, "MPIX_SPARSE_SHARED_MEMORY_BYTES"};
constexpr SettingName kDenseTable{nullptr, "MPIX_SPARSE_COST_DENSE_TABLE"};

struct CostSetting {
    SettingName name;
    double CostParams::*field;
};
const CostSetting kCostSettings[] = {
    {{nullptr, "MPIX_SPARSE_COST_DENSE_ALPHA_US"}, &CostParams::dense_alpha_us},
    {{nullptr, "MPIX_SPARSE_COST_SPARSE_ALPHA_US"}, &CostParams::sparse_alpha_us},
    {{nullptr, "MPIX_SPARSE_COST_SPARSE_BETA_NS"}, &CostParams::sparse_beta_ns},
    {{nullptr, "MPIX_SPARSE_COST_SPARSE_COPY_NS"}, &CostParams::sparse_copy_ns},
    {{nullptr, "MPIX_SPARSE_COST_SPARSE_BLOCK_NS"}, &CostParams::sparse_block_ns},
    {{nullptr, "MPIX_SPARSE_COST_SHARED_CORE_GAP_NS"}, &CostParams::shared_core_gap_ns},
    {{nullptr, "MPIX_SPARSE_COST_ALLGATHER_BLOCK_NS"}, &CostParams::allgather_block_ns},
    {{nullptr, "MPIX_SPARSE_COST_MEMORY_NS"}, &CostParams::memory_ns},
    {{nullptr, "MPIX_SPARSE_COST_PCIE_NS"}, &CostParams::pcie_ns},
    {{nullptr, "MPIX_SPARSE_COST_LINK_NS"}, &CostParams::link_ns},
    {{nullptr, "MPIX_SPARSE_COST_ALLGATHER_ALPHA_US"}, &CostParams::allgather_alpha_us},
    {{nullptr, "MPIX_SPARSE_COST_ALLGATHER_BETA_NS"}, &CostParams::allgather_beta_ns},
    {{nullptr, "MPIX_SPARSE_COST_SPARSE_MARGIN"}, &CostParams::sparse_margin},
};

std::string trimmed_lower(const std::string &raw) {
    auto first = std::find_if_not(raw.begin(), raw.end(), [](unsigned char c) { return std::isspace(c); });
    auto last = std::find_if_not(raw.rbegin(), raw.rend(), [](unsigned char c) { return std::isspace(c); }).base();
    std::string s = first < last ? std::string(first, last) : std::string();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// A whole-string unsigned integer in [lo, hi].
std::optional<std::uint64_t> parse_unsigned(const std::string &raw, std::uint64_t lo, std::uint64_t hi) {
    const std::string s = trimmed_lower(raw);
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
    errno = 0;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno != 0 || end == nullptr || *end != '\0' || v < lo || v > hi) return std::nullopt;
    return static_cast<std::uint64_t>(v);
}

std::optional<double> parse_positive(const std::string &raw) {
    const std::string s = trimmed_lower(raw);
    if (s.empty()) return std::nullopt;
    errno = 0;
    char *end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || end == nullptr || *end != '\0' || !(v > 0.0) || v > 1e12) return std::nullopt;
    return v;
}

// "mib:ns,mib:ns,...", sizes strictly increasing, all positive.
// Seconds: a number in [0, 10^7]; 0 means none.
std::optional<double> parse_seconds(const std::string &raw) {
    const std::string s = trimmed_lower(raw);
    if (s.empty()) return std::nullopt;
    char *end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !(v >= 0) || v > 1e7) return std::nullopt;
    return v;
}

std::optional<std::vector<DensePoint>> parse_dense_table(const std::string &raw) {
    std::vector<DensePoint> table;
    std::size_t at = 0;
    const std::string s = trimmed_lower(raw);
    while (at <= s.size()) {
        const std::size_t comma = std::min(s.find(',', at), s.size());
        const std::string item = s.substr(at, comma - at);
        const std::size_t colon = item.find(':');
        if (colon == std::string::npos) return std::nullopt;
        const auto mib = parse_positive(item.substr(0, colon));
        const auto ns = parse_positive(item.substr(colon + 1));
        if (!mib || !ns || (!table.empty() && *mib <= table.back().mib)) return std::nullopt;
        table.push_back({*mib, *ns});
        at = comma + 1;
    }
    if (table.empty()) return std::nullopt;
    return table;
}

template <class Enum>
struct Keyword {
    const char *word;
    Enum value;
};

template <class Enum, std::size_t N>
std::optional<Enum> parse_keyword(const std::string &raw, const Keyword<Enum> (&words)[N]) {
    const std::string s = trimmed_lower(raw);
    for (const auto &w : words)
        if (s == w.word) return w.value;
    return std::nullopt;
}

const Keyword<AggregatorMode> kModeWords[] = {{"colocated", AggregatorMode::Colocated},
                                              {"dedicated", AggregatorMode::Dedicated}};
const Keyword<AlgorithmChoice> kAlgorithmWords[] = {{"auto", AlgorithmChoice::Auto},
                                                    {"aggregator", AlgorithmChoice::Aggregator},
                                                    {"allgather", AlgorithmChoice::Allgather},
                                                    {"dense", AlgorithmChoice::Dense}};
const Keyword<Placement> kPlacementWords[] = {{"spread", Placement::Spread}, {"packed", Placement::Packed}};
const Keyword<Hierarchy> kHierarchyWords[] = {
    {"auto", Hierarchy::Auto}, {"on", Hierarchy::On}, {"off", Hierarchy::Off}};

const Keyword<ProgressThreadSetting> kProgressWords[] = {
    {"auto", ProgressThreadSetting::Auto}, {"on", ProgressThreadSetting::On}, {"off", ProgressThreadSetting::Off}};
const Keyword<TuneSetting> kTuneWords[] = {
    {"auto", TuneSetting::Auto}, {"on", TuneSetting::On}, {"off", TuneSetting::Off}};
const Keyword<bool> kOnOffWords[] = {{"on", true}, {"off", false}, {"1", true}, {"0", false}};
const Keyword<FailPoint> kFailWords[] = {{"none", FailPoint::None},
                                         {"scan", FailPoint::Scan},
                                         {"contribution", FailPoint::Contribution},
                                         {"aggregate", FailPoint::Aggregate},
                                         {"result", FailPoint::Result},
                                         {"corrupt", FailPoint::Corrupt},
                                         {"throw", FailPoint::Throw},
                                         {"stop", FailPoint::Stop},
                                         {"exit", FailPoint::Exit},
                                         {"connect", FailPoint::Connect},
                                         {"stream_memory", FailPoint::StreamMemory},
                                         {"download", FailPoint::Download}};

template <class T>
void set_or_fail(T &field, std::optional<T> parsed, ErrorId id, const SettingName &name, const std::string &raw) {
    if (!parsed) fail(id, std::string(name.info_key ? name.info_key : name.env_var) + "=\"" + raw + "\"");
    field = *parsed;
}

}  // namespace

Config apply_settings(Config c, const SettingLookup &lookup) {
    if (auto v = lookup(kBlockSize)) {
        auto n = parse_unsigned(*v, 1, kMaxBlockElems);
        set_or_fail(c.block_elems, n ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*n)) : std::nullopt,
                    ErrorId::InfoBlockSize, kBlockSize, *v);
    }
    if (auto v = lookup(kAggregators)) {
        auto n = parse_unsigned(*v, 1, 1u << 30);
        set_or_fail(c.aggregators, n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt,
                    ErrorId::InfoAggregators, kAggregators, *v);
    }
    if (auto v = lookup(kMode))
        set_or_fail(c.mode, parse_keyword(*v, kModeWords), ErrorId::InfoAggregatorMode, kMode, *v);
    if (auto v = lookup(kAlgorithm))
        set_or_fail(c.algorithm, parse_keyword(*v, kAlgorithmWords), ErrorId::InfoAlgorithm, kAlgorithm, *v);
    if (auto v = lookup(kProgressThread))
        set_or_fail(c.progress_thread, parse_keyword(*v, kProgressWords), ErrorId::InfoProgressThread, kProgressThread,
                    *v);
    if (auto v = lookup(kTimeout)) set_or_fail(c.timeout_s, parse_seconds(*v), ErrorId::InfoTimeout, kTimeout, *v);
    if (auto v = lookup(kProfile))
        set_or_fail(c.profile, parse_keyword(*v, kOnOffWords), ErrorId::InfoProfile, kProfile, *v);
    if (auto v = lookup(kTestFail))
        set_or_fail(c.fail_at, parse_keyword(*v, kFailWords), ErrorId::InfoTuning, kTestFail, *v);
    if (auto v = lookup(kPlacement))
        set_or_fail(c.placement, parse_keyword(*v, kPlacementWords), ErrorId::InfoPlacement, kPlacement, *v);
    if (auto v = lookup(kHierarchical))
        set_or_fail(c.hierarchical, parse_keyword(*v, kHierarchyWords), ErrorId::InfoHierarchical, kHierarchical, *v);
    if (auto v = lookup(kNodeMulticast))
        set_or_fail(c.node_multicast, parse_keyword(*v, kOnOffWords), ErrorId::InfoTuning, kNodeMulticast, *v);
    if (auto v = lookup(kTune)) set_or_fail(c.tune, parse_keyword(*v, kTuneWords), ErrorId::InfoTuning, kTune, *v);
    if (auto v = lookup(kDenseBelow))
        set_or_fail(c.dense_below_bytes, parse_unsigned(*v, 0, std::uint64_t{1} << 62), ErrorId::InfoDenseBelow,
                    kDenseBelow, *v);
    if (auto v = lookup(kMessageBytes)) {
        auto n = parse_unsigned(*v, 4096, std::uint64_t{1} << 30);
        set_or_fail(c.message_bytes, n ? std::optional<std::size_t>(*n) : std::nullopt, ErrorId::InfoTuning,
                    kMessageBytes, *v);
    }
    if (auto v = lookup(kWindow)) {
        auto n = parse_unsigned(*v, 1, 1024);
        set_or_fail(c.window, n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt, ErrorId::InfoTuning, kWindow,
                    *v);
    }
    if (auto v = lookup(kSharedMemory)) {
        auto n = parse_unsigned(*v, 0, std::uint64_t{1} << 40);
        set_or_fail(c.shared_memory_bytes, n ? std::optional<std::size_t>(*n) : std::nullopt, ErrorId::InfoTuning,
                    kSharedMemory, *v);
    }
    if (auto v = lookup(kDenseTable))
        set_or_fail(c.cost.dense_table, parse_dense_table(*v), ErrorId::InfoTuning, kDenseTable, *v);
    for (const CostSetting &s : kCostSettings)
        if (auto v = lookup(s.name)) set_or_fail(c.cost.*s.field, parse_positive(*v), ErrorId::InfoTuning, s.name, *v);
    return c;
}

const Config &environment_defaults() {
    // Parsed on first use; a parse error is kept and rethrown, so every call reports it.
    static const auto parsed = []() -> std::pair<Config, std::exception_ptr> {
        try {
            return {apply_settings(Config{},
                                   [](const SettingName &name) -> std::optional<std::string> {
                                       if (name.env_var == nullptr) return std::nullopt;
                                       const char *v = std::getenv(name.env_var);
                                       if (v == nullptr) return std::nullopt;
                                       return std::string(v);
                                   }),
                    nullptr};
        } catch (...) {
            return {Config{}, std::current_exception()};
        }
    }();
    if (parsed.second) std::rethrow_exception(parsed.second);
    return parsed.first;
}

Config config_from_info(MPI_Info info) {
    const Config &base = environment_defaults();
    if (info == MPI_INFO_NULL) return base;
    return apply_settings(base, [info](const SettingName &name) -> std::optional<std::string> {
        if (name.info_key == nullptr) return std::nullopt;
        int len = 0, flag = 0;
        if (MPI_Info_get_valuelen(info, name.info_key, &len, &flag) != MPI_SUCCESS || !flag) return std::nullopt;
        std::vector<char> value(static_cast<std::size_t>(len) + 1, '\0');
        if (MPI_Info_get(info, name.info_key, len, value.data(), &flag) != MPI_SUCCESS || !flag) return std::nullopt;
        return std::string(value.data());
    });
}

std::uint64_t shared_settings_digest(const Config &c) {
    Fnv1a d;
    d.add(c.block_elems);
    d.add(c.aggregators);
    d.add(c.mode);
    d.add(c.algorithm);
    d.add(c.placement);
    d.add(c.hierarchical);
    d.add(c.dense_below_bytes);
    d.add(c.message_bytes);
    d.add(c.window);
    d.add(c.tune);
    d.add(c.timeout_s > 0);  // a timeout makes blocking dense calls non-blocking ones
    for (const CostSetting &setting : kCostSettings)
        d.add(c.cost.*setting.field);
    d.add(c.cost.dense_table.size());
    for (const DensePoint &p : c.cost.dense_table) {
        d.add(p.mib);
        d.add(p.ns);
    }
    return d.value();
}

Config agree_on_config(MPI_Comm comm, const std::function<Config()> &read) {
    std::unique_ptr<Error> local;
    Config config;
    try {
        config = read();
    } catch (const Error &e) {
        local = std::make_unique<Error>(e);
    }
    // The digest's 63 low bits as h and -h: one MAX tells whether all ranks hold the same value.
    const auto h = static_cast<long long>(shared_settings_digest(config) >> 1);
    long long v[3] = {local ? 1 : 0, h, -h};
    check_mpi(PMPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, comm), "MPI_Allreduce");
    if (local) throw *local;
    if (v[0] != 0) fail(ErrorId::RemoteArgument, "another rank's configuration is invalid");
    if (v[1] != -v[2]) fail(ErrorId::InfoMismatch);
    return config;
}

}  // namespace mpix::sparse::detail
