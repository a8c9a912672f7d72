// The link probe's pairing (every rank sends to a rank on another node whenever the layout allows)
// and its estimate from the rounds.
#include <gtest/gtest.h>

#include "core/link_probe.h"

namespace mpix::sparse::detail {
namespace {

TEST(LinkProbe, NothingToMeasureOnOneNode) {
    EXPECT_EQ(probe_shift({0, 0, 0, 0}), 0);
    EXPECT_EQ(probe_shift({0}), 0);
}

TEST(LinkProbe, EveryRankCrossesWhenTheLayoutAllows) {
    EXPECT_EQ(probe_shift({0, 1, 2, 3}), 1);        // one rank per node
    EXPECT_EQ(probe_shift({0, 0, 1, 1, 2, 2}), 2);  // by node: past the node's ranks
    EXPECT_EQ(probe_shift({0, 1, 0, 1}), 1);        // round robin
    EXPECT_EQ(probe_shift({0, 0, 0, 1, 1, 1}), 3);
}

TEST(LinkProbe, UnevenNodesCrossAsMuchAsTheyCan) {
    // No shift takes all four ranks off their node; the first of the best (two crossing) is chosen.
    EXPECT_EQ(probe_shift({0, 0, 0, 1}), 1);
}

TEST(LinkProbe, TheEstimateIsTheMedianRound) {
    // One round slowed by the machine and one that caught the link idle decide nothing.
    EXPECT_EQ(link_ns_of_rounds({3.1, 9.0, 3.4, 1.2, 3.3}), 3.3);
    EXPECT_EQ(link_ns_of_rounds({4.0, 2.0}), 3.0);
    EXPECT_EQ(link_ns_of_rounds({5.0}), 5.0);
    EXPECT_EQ(link_ns_of_rounds({}), 0.0);
}

}  // namespace
}  // namespace mpix::sparse::detail
