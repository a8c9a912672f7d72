// Configuration parsing: strict values, errors that name the key.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/config.h"
#include "core/error.h"

namespace mpix::sparse::detail {
namespace {

Config parse(const std::map<std::string, std::string> &values) {
    return apply_settings(Config{}, [&](const SettingName &name) -> std::optional<std::string> {
        for (const char *key : {name.info_key, name.env_var}) {
            if (key == nullptr) continue;
            auto it = values.find(key);
            if (it != values.end()) return it->second;
        }
        return std::nullopt;
    });
}

ErrorId parse_error(const std::map<std::string, std::string> &values) {
    try {
        parse(values);
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(describe(e.id()).message), std::string::npos);
        return e.id();
    }
    return ErrorId::Count_;
}

TEST(Config, DefaultsAndValidValues) {
    const Config d = parse({});
    EXPECT_EQ(d.block_elems, 256u);
    EXPECT_EQ(d.aggregators, 0);
    EXPECT_EQ(d.mode, AggregatorMode::Colocated);
    EXPECT_EQ(d.algorithm, AlgorithmChoice::Auto);
    EXPECT_EQ(d.timeout_s, 0.0) << "no timeout by default: MPI semantics";
    EXPECT_DOUBLE_EQ(parse({{"mpix_sparse_timeout", "2.5"}}).timeout_s, 2.5);
    EXPECT_DOUBLE_EQ(parse({{"MPIX_SPARSE_TIMEOUT", " 30 "}}).timeout_s, 30.0);
    EXPECT_FALSE(d.profile) << "profiling off by default";
    EXPECT_TRUE(parse({{"mpix_sparse_profile", "On"}}).profile);
    EXPECT_FALSE(parse({{"MPIX_SPARSE_PROFILE", "0"}}).profile);
    EXPECT_TRUE(d.node_multicast) << "node multicast on by default";
    EXPECT_FALSE(parse({{"mpix_sparse_node_multicast", "off"}}).node_multicast);
    EXPECT_FALSE(parse({{"MPIX_SPARSE_NODE_MULTICAST", "0"}}).node_multicast);
    EXPECT_EQ(d.tune, TuneSetting::Auto) << "learning times across nodes only, by default";
    EXPECT_EQ(parse({{"mpix_sparse_tune", "On"}}).tune, TuneSetting::On);
    EXPECT_EQ(parse({{"MPIX_SPARSE_TUNE", "off"}}).tune, TuneSetting::Off);
    const Config c = parse({{"mpix_sparse_block_size", " 64 "},
                            {"mpix_sparse_aggregators", "2"},
                            {"mpix_sparse_aggregator_mode", "Dedicated"},
                            {"mpix_sparse_algorithm", "allgather"},
                            {"mpix_sparse_placement", "packed"},
                            {"mpix_sparse_hierarchical", "off"},
                            {"mpix_sparse_dense_below", "0"},
                            {"MPIX_SPARSE_WINDOW", "8"},
                            {"MPIX_SPARSE_COST_DENSE_TABLE", "1:0.5, 16:2.5"}});
    EXPECT_EQ(c.block_elems, 64u);
    EXPECT_EQ(c.aggregators, 2);
    EXPECT_EQ(c.mode, AggregatorMode::Dedicated);
    EXPECT_EQ(c.algorithm, AlgorithmChoice::Allgather);
    EXPECT_EQ(c.placement, Placement::Packed);
    EXPECT_EQ(c.hierarchical, Hierarchy::Off);
    EXPECT_EQ(c.dense_below_bytes, 0u);
    EXPECT_EQ(c.window, 8);
    ASSERT_EQ(c.cost.dense_table.size(), 2u);
    EXPECT_DOUBLE_EQ(c.cost.dense_table[1].ns, 2.5);
}

TEST(Config, BadValuesAreErrorsNamingTheKey) {
    EXPECT_EQ(parse_error({{"mpix_sparse_block_size", "0"}}), ErrorId::InfoBlockSize);
    EXPECT_EQ(parse_error({{"mpix_sparse_block_size", "12abc"}}), ErrorId::InfoBlockSize);
    EXPECT_EQ(parse_error({{"mpix_sparse_block_size", "-4"}}), ErrorId::InfoBlockSize);
    EXPECT_EQ(parse_error({{"mpix_sparse_block_size", "99999999999999999999"}}), ErrorId::InfoBlockSize);
    EXPECT_EQ(parse_error({{"mpix_sparse_aggregators", "0"}}), ErrorId::InfoAggregators);
    EXPECT_EQ(parse_error({{"mpix_sparse_aggregator_mode", "both"}}), ErrorId::InfoAggregatorMode);
    EXPECT_EQ(parse_error({{"mpix_sparse_algorithm", ""}}), ErrorId::InfoAlgorithm);
    EXPECT_EQ(parse_error({{"mpix_sparse_placement", "random"}}), ErrorId::InfoPlacement);
    EXPECT_EQ(parse_error({{"mpix_sparse_hierarchical", "yes"}}), ErrorId::InfoHierarchical);
    EXPECT_EQ(parse_error({{"mpix_sparse_dense_below", "1k"}}), ErrorId::InfoDenseBelow);
    EXPECT_EQ(parse_error({{"mpix_sparse_timeout", "-1"}}), ErrorId::InfoTimeout);
    EXPECT_EQ(parse_error({{"mpix_sparse_timeout", "10s"}}), ErrorId::InfoTimeout);
    EXPECT_EQ(parse_error({{"mpix_sparse_timeout", "nan"}}), ErrorId::InfoTimeout);
    EXPECT_EQ(parse_error({{"mpix_sparse_profile", "yes"}}), ErrorId::InfoProfile);
    EXPECT_EQ(parse_error({{"mpix_sparse_node_multicast", "yes"}}), ErrorId::InfoTuning);
    EXPECT_EQ(parse_error({{"mpix_sparse_tune", "always"}}), ErrorId::InfoTuning);
    EXPECT_EQ(parse_error({{"MPIX_SPARSE_MESSAGE_BYTES", "12"}}), ErrorId::InfoTuning);
    EXPECT_EQ(parse_error({{"MPIX_SPARSE_COST_SPARSE_COPY_NS", "-1"}}), ErrorId::InfoTuning);
    EXPECT_EQ(parse_error({{"MPIX_SPARSE_COST_DENSE_TABLE", "4:1,2:1"}}), ErrorId::InfoTuning);
    EXPECT_EQ(parse_error({{"MPIX_SPARSE_COST_DENSE_TABLE", "4"}}), ErrorId::InfoTuning);
    for (ErrorId id : {ErrorId::InfoBlockSize, ErrorId::InfoAggregators, ErrorId::InfoAlgorithm})
        EXPECT_NE(std::string(describe(id).message).find("mpix_sparse_"), std::string::npos);
    // Open MPI refuses (fatally, at registration) an error string of 256 characters or more.
    for (int i = 0; i < static_cast<int>(ErrorId::Count_); ++i)
        EXPECT_LT(std::string(describe(static_cast<ErrorId>(i)).message).size(), 256u) << "error id " << i;
}

// Ranks compare digests at creation: a setting that decides collectives or plans must change it, one
// that changes a rank alone must not.
TEST(Config, SharedSettingsDigestFollowsTheSettingsRanksMustShare) {
    const std::uint64_t base = shared_settings_digest(parse({}));
    for (const auto &[key, value] : std::map<std::string, std::string>{{"mpix_sparse_block_size", "128"},
                                                                       {"mpix_sparse_aggregators", "1"},
                                                                       {"mpix_sparse_aggregator_mode", "dedicated"},
                                                                       {"mpix_sparse_algorithm", "dense"},
                                                                       {"mpix_sparse_placement", "packed"},
                                                                       {"mpix_sparse_hierarchical", "off"},
                                                                       {"mpix_sparse_dense_below", "1048576"},
                                                                       {"mpix_sparse_tune", "on"},
                                                                       {"mpix_sparse_timeout", "30"},
                                                                       {"MPIX_SPARSE_MESSAGE_BYTES", "1048576"},
                                                                       {"MPIX_SPARSE_WINDOW", "8"},
                                                                       {"MPIX_SPARSE_COST_LINK_NS", "0.5"},
                                                                       {"MPIX_SPARSE_COST_SPARSE_MARGIN", "1.5"},
                                                                       {"MPIX_SPARSE_COST_DENSE_TABLE", "1:0.5,64:1"}})
        EXPECT_NE(shared_settings_digest(parse({{key, value}})), base) << key;
    for (const auto &[key, value] : std::map<std::string, std::string>{{"mpix_sparse_progress_thread", "off"},
                                                                       {"mpix_sparse_profile", "on"},
                                                                       {"mpix_sparse_node_multicast", "off"},
                                                                       {"MPIX_SPARSE_SHARED_MEMORY_BYTES", "0"}})
        EXPECT_EQ(shared_settings_digest(parse({{key, value}})), base) << key;
    // Only whether a timeout is set: its length stays a rank's own.
    EXPECT_EQ(shared_settings_digest(parse({{"mpix_sparse_timeout", "30"}})),
              shared_settings_digest(parse({{"mpix_sparse_timeout", "60"}})));
}

}  // namespace
}  // namespace mpix::sparse::detail
