// Where ranks run (core/node_layout.h): their nodes, and whether they take turns on cores. Each rank
// binds itself to chosen CPUs for a case, then restores its own mask. A node's cores are the union of
// its ranks' masks.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <vector>

#include "core/node_layout.h"
#include "mpi_test_util.h"

namespace mpix::sparse::detail::testing {
namespace {

// Binds the calling thread to one CPU for the scope of the object, then restores its mask.
class BoundTo {
  public:
    explicit BoundTo(int cpu) {
        ok_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        ok_ = ok_ && sched_setaffinity(0, sizeof one, &one) == 0;
    }
    ~BoundTo() { sched_setaffinity(0, sizeof saved_, &saved_); }
    BoundTo(const BoundTo &) = delete;
    BoundTo &operator=(const BoundTo &) = delete;
    bool ok() const { return ok_; }

  private:
    cpu_set_t saved_{};
    bool ok_ = false;
};

// The CPUs any rank of the world may run on (all ranks are on one machine in these tests).
std::vector<int> cpus_of_all_ranks() {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    cpu_set_t all;
    MPI_Allreduce(&mine, &all, static_cast<int>(sizeof all), MPI_UNSIGNED_CHAR, MPI_BOR, MPI_COMM_WORLD);
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &all)) cpus.push_back(c);
    return cpus;
}

bool ranks_share_cores(MPI_Comm comm) {
    return learn_node_layout(comm).cores_shared;
}

bool one_machine() {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int size = 0;
    MPI_Comm_size(node, &size);
    MPI_Comm_free(&node);
    return size == world_size();
}

TEST(NodeLayout, RanksOfOneMachineAreOnNodeZero) {
    const NodeLayout layout = learn_node_layout(MPI_COMM_WORLD);
    ASSERT_EQ(layout.node_of_rank.size(), static_cast<std::size_t>(world_size()));
    if (!one_machine()) GTEST_SKIP() << "needs its ranks on one machine";
    EXPECT_TRUE(std::all_of(layout.node_of_rank.begin(), layout.node_of_rank.end(), [](int n) { return n == 0; }));
}

TEST(CoreSharing, RanksBoundToOneCpuShareIt) {
    if (world_size() < 2 || !one_machine()) GTEST_SKIP() << "needs two ranks on one machine";
    const std::vector<int> cpus = cpus_of_all_ranks();
    ASSERT_FALSE(cpus.empty());
    const BoundTo bound(cpus.front());
    if (!everywhere(bound.ok())) GTEST_SKIP() << "a rank may not bind itself to CPU " << cpus.front();
    EXPECT_TRUE(ranks_share_cores(MPI_COMM_WORLD));
}

TEST(CoreSharing, RanksOnCpusOfTheirOwnDoNot) {
    if (!one_machine()) GTEST_SKIP() << "needs its ranks on one machine";
    const std::vector<int> cpus = cpus_of_all_ranks();
    ASSERT_FALSE(cpus.empty());
    // As many ranks as there are CPUs, each bound to another one.
    const int ranks = std::min(world_size(), static_cast<int>(cpus.size()));
    const bool in = world_rank() < ranks;
    MPI_Comm part = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, world_rank(), &part);
    if (in) {
        const BoundTo bound(cpus[static_cast<std::size_t>(world_rank())]);
        if (everywhere(bound.ok(), part)) {
            EXPECT_FALSE(ranks_share_cores(part));
        }
        MPI_Comm_free(&part);
    }
    // The same ranks unbound: their masks now cover the machine's CPUs, more ranks than those share.
    EXPECT_EQ(ranks_share_cores(MPI_COMM_WORLD), world_size() > static_cast<int>(cpus.size()));
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
