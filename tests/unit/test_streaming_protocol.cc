// The streaming protocol end to end, without MPI or UCX: workers and aggregators (colocated or
// dedicated) in one thread over the loopback fabric, which reorders messages, misaligns eager payloads
// and holds rendezvous payloads at the sender until fetched. Every output must equal the reference
// reduction bit for bit, and every payload must be consumed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include "algo/contribution_source.h"
#include "algo/device_staging.h"
#include "algo/result_sink.h"
#include "algo/streaming_operation.h"
#include "core/block_scan.h"
#include "core/result_fanout.h"
#include "loopback_fabric.h"
#include "test_data.h"

namespace mpix::sparse::detail {
namespace {

using testing::LoopbackFabric;
using testing::Pattern;

struct Scenario {
    int workers = 3;
    int aggregators = 3;
    bool dedicated = false;
    std::uint32_t block_elems = 16;
    std::uint64_t count = 1000;
    double density = 0.1;
    Pattern pattern = Pattern::Random;
    ElementType type = ElementType::F32;
    ReduceOp op = ReduceOp::Sum;
    std::size_t message_bytes = 4096;
    int window = 2;
    std::size_t eager_limit = 512;
    bool in_place = false;
    // The output's zeros written before the stream (a device input's host output), so aggregators
    // reduce into it in place; else the sink writes them with the results.
    bool zeros_present = false;
    bool pairs = false;       // element variant: sorted (index, value) pairs, block size 1
    bool collecting = false;  // element variant with sparse output
    // Node multicast: > 1 puts ranks on random nodes (or on `node` when given) and results are
    // forwarded within them (core/result_fanout.h).
    int nodes = 1;
    std::vector<int> node;
    unsigned seed = 1;

    std::string describe() const {
        std::ostringstream s;
        s << "workers=" << workers << " aggregators=" << aggregators << (dedicated ? " dedicated" : " colocated")
          << " B=" << block_elems << " count=" << count << " density=" << density << " " << testing::name_of(pattern)
          << " " << name_of(type) << " " << name_of(op) << " msg=" << message_bytes << " window=" << window
          << " eager=" << eager_limit << (in_place ? " in-place" : "") << (zeros_present ? " zeros-present" : "")
          << (pairs ? " pairs" : "") << (collecting ? " sparse-output" : "") << " nodes=" << nodes << " seed=" << seed;
        return s.str();
    }
};

// Random shard boundaries (empty shards included) so that no particular cut is assumed.
std::vector<std::uint64_t> random_bounds(std::uint64_t blocks, int aggregators, std::mt19937_64 &rng) {
    std::vector<std::uint64_t> b(static_cast<std::size_t>(aggregators) + 1, 0);
    for (int a = 1; a < aggregators; ++a)
        b[static_cast<std::size_t>(a)] = std::uniform_int_distribution<std::uint64_t>(0, blocks)(rng);
    b.back() = blocks;
    std::sort(b.begin(), b.end());
    return b;
}

void run_scenario(const Scenario &sc, std::vector<OpCounters> *counters_out = nullptr) {
    SCOPED_TRACE(sc.describe());
    std::mt19937_64 rng(sc.seed);
    const int ranks = sc.dedicated ? sc.workers + sc.aggregators : sc.workers;
    const BlockLayout layout{sc.count, sc.block_elems, static_cast<std::uint32_t>(element_size(sc.type))};

    StreamSpec base;
    base.context = 7;
    base.seq = 3;
    base.layout = layout;
    base.type = sc.type;
    base.op = sc.op;
    for (int w = 0; w < sc.workers; ++w)
        base.worker_peer.push_back(w);
    if (sc.dedicated) {
        for (int a = 0; a < sc.aggregators; ++a)
            base.aggregator_peer.push_back(sc.workers + a);
    } else {
        std::vector<int> all(static_cast<std::size_t>(sc.workers));
        for (int w = 0; w < sc.workers; ++w)
            all[static_cast<std::size_t>(w)] = w;
        std::shuffle(all.begin(), all.end(), rng);
        base.aggregator_peer.assign(all.begin(), all.begin() + sc.aggregators);
        std::sort(base.aggregator_peer.begin(), base.aggregator_peer.end());
    }
    base.shard_bounds = random_bounds(layout.num_blocks(), sc.aggregators, rng);
    base.message_bytes = sc.message_bytes;
    base.window = sc.window;
    std::vector<int> node = sc.node;
    if (sc.nodes > 1 && node.empty())
        for (int r = 0; r < ranks; ++r)
            node.push_back(static_cast<int>(rng() % static_cast<unsigned>(sc.nodes)));
    std::vector<ResultFanout> fanouts(static_cast<std::size_t>(ranks));

    std::vector<std::vector<std::byte>> inputs, outputs;
    std::vector<BlockBitmap> bitmaps(static_cast<std::size_t>(sc.workers));
    // Element variant: each worker's pairs are its non-zero elements plus a few explicit zeros, which
    // belong to the union too.
    std::vector<std::vector<std::int64_t>> pair_index(static_cast<std::size_t>(sc.workers));
    std::vector<std::vector<std::byte>> pair_value(static_cast<std::size_t>(sc.workers));
    std::vector<bool> in_union(sc.count, false);
    for (int w = 0; w < sc.workers; ++w) {
        const auto on = testing::block_pattern(sc.pattern, layout.num_blocks(), sc.density, w, sc.workers, sc.seed);
        inputs.push_back(
            testing::make_vector(sc.type, sc.count, sc.block_elems, on, sc.seed * 31 + static_cast<unsigned>(w)));
        // The output starts as garbage: everything the reduction does not write must be caught (the
        // sink writes the zeros with the results).
        outputs.emplace_back(inputs.back().size(), std::byte{0xAB});
        if (sc.in_place) outputs.back() = inputs.back();
        if (sc.pairs) {
            const std::size_t s = layout.elem_size;
            for (std::uint64_t i = 0; i < sc.count; ++i) {
                const bool nonzero = !bytes_are_zero(inputs.back().data() + i * s, s);
                if (nonzero || rng() % 50 == 0) {
                    pair_index[static_cast<std::size_t>(w)].push_back(static_cast<std::int64_t>(i));
                    auto &v = pair_value[static_cast<std::size_t>(w)];
                    v.insert(v.end(), inputs.back().begin() + static_cast<std::ptrdiff_t>(i * s),
                             inputs.back().begin() + static_cast<std::ptrdiff_t>((i + 1) * s));
                    in_union[i] = true;
                }
            }
        }
    }
    const auto expected = testing::reference_reduce(sc.type, sc.op, inputs);
    std::vector<std::unique_ptr<PairsSource>> pair_sources(static_cast<std::size_t>(ranks));
    std::vector<std::unique_ptr<CollectingResultSink>> collectors(static_cast<std::size_t>(ranks));

    LoopbackFabric fabric(ranks, sc.eager_limit, sc.seed);
    std::vector<StreamSpec> specs(static_cast<std::size_t>(ranks), base);
    std::vector<std::unique_ptr<BitmapSource>> sources(static_cast<std::size_t>(ranks));
    std::vector<std::unique_ptr<DenseResultSink>> sinks(static_cast<std::size_t>(ranks));
    std::vector<StreamResources> resources(static_cast<std::size_t>(ranks));
    std::vector<OpCounters> counters(static_cast<std::size_t>(ranks));
    std::vector<std::unique_ptr<StreamingOperation>> ops(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        StreamSpec &spec = specs[ur];
        spec.my_worker = r < sc.workers ? r : -1;
        auto it = std::find(spec.aggregator_peer.begin(), spec.aggregator_peer.end(), r);
        spec.my_aggregator =
            it == spec.aggregator_peer.end() ? -1 : static_cast<int>(it - spec.aggregator_peer.begin());
        if (!node.empty()) {
            fanouts[ur] = plan_result_fanout(spec.worker_peer, spec.aggregator_peer, node, r);
            spec.fanout = &fanouts[ur];
        }
        const ContributionSource *source = nullptr;
        ResultSink *sink = nullptr;
        if (spec.my_worker >= 0 && sc.pairs) {
            pair_sources[ur] = std::make_unique<PairsSource>(pair_index[ur].data(), pair_value[ur].data(),
                                                             pair_index[ur].size(), layout.elem_size);
            source = pair_sources[ur].get();
            if (sc.collecting) {
                collectors[ur] = std::make_unique<CollectingResultSink>(layout);
                sink = collectors[ur].get();
            } else {
                sinks[ur] =
                    std::make_unique<DenseResultSink>(outputs[ur].data(), layout, DenseResultSink::Zeros::Written);
                sink = sinks[ur].get();
            }
        } else if (spec.my_worker >= 0) {
            bitmaps[ur].reset(layout.num_blocks());
            const std::byte *in = sc.in_place ? outputs[ur].data() : inputs[ur].data();
            scan_blocks(in, layout, bitmaps[ur]);
            sources[ur] = std::make_unique<BitmapSource>(in, layout, bitmaps[ur]);
            // As the block variant does: in place this rank's zero blocks are zero already; a device
            // input's host output gets them before the stream; else the sink writes them.
            if (sc.zeros_present) zero_absent_blocks(outputs[ur].data(), layout, bitmaps[ur]);
            const bool present = sc.in_place || sc.zeros_present;
            sinks[ur] = std::make_unique<DenseResultSink>(outputs[ur].data(), layout,
                                                          present ? DenseResultSink::Zeros::Present
                                                                  : DenseResultSink::Zeros::Written);
            source = sources[ur].get();
            sink = sinks[ur].get();
        }
        ops[ur] =
            std::make_unique<StreamingOperation>(spec, fabric.transport(r), resources[ur], counters[ur], source, sink);
        fabric.set_sink(r, [op = ops[ur].get()](InboundMessage &&m) { op->on_message(std::move(m)); });
    }
    // Round-robin all ranks until done; a livelock shows up as the iteration cap.
    bool all_done = false;
    for (long it = 0; it < 20'000'000 && !all_done; ++it) {
        all_done = true;
        for (int r = 0; r < ranks; ++r) {
            auto &op = *ops[static_cast<std::size_t>(r)];
            if (op.done()) continue;
            all_done = false;
            fabric.transport(r).progress();
            op.advance();
        }
    }
    ASSERT_TRUE(all_done) << "the protocol did not finish";
    for (int r = 0; r < ranks; ++r)
        EXPECT_FALSE(ops[static_cast<std::size_t>(r)]->error())
            << "rank " << r << ": " << ops[static_cast<std::size_t>(r)]->error().detail;
    EXPECT_EQ(fabric.outstanding(), 0u) << "payloads neither fetched nor released";
    for (int w = 0; w < sc.workers; ++w) {
        const auto uw = static_cast<std::size_t>(w);
        if (sc.collecting) {
            // The sparse output holds exactly the union, sorted, with the reduced values.
            std::vector<std::int64_t> idx;
            std::vector<std::byte> val;
            collectors[uw]->finish(idx, val);
            std::vector<std::int64_t> want;
            for (std::uint64_t i = 0; i < sc.count; ++i)
                if (in_union[i]) want.push_back(static_cast<std::int64_t>(i));
            ASSERT_EQ(idx, want) << "worker " << w << ": union differs";
            for (std::size_t j = 0; j < idx.size(); ++j)
                ASSERT_EQ(std::memcmp(val.data() + j * layout.elem_size,
                                      expected.data() + static_cast<std::size_t>(idx[j]) * layout.elem_size,
                                      layout.elem_size),
                          0)
                    << "worker " << w << ": value of index " << idx[j];
            continue;
        }
        const long long bad = testing::first_difference(outputs[uw], expected, layout.elem_size);
        EXPECT_EQ(bad, -1) << "worker " << w << " differs first at element " << bad;
    }
    if (counters_out != nullptr) *counters_out = counters;
}

TEST(StreamingProtocol, SmallFixedCases) {
    run_scenario(Scenario{});
    Scenario one_block;
    one_block.count = 1;
    run_scenario(one_block);
    Scenario all_zero;
    all_zero.density = 0;
    run_scenario(all_zero);
    Scenario all_dense;
    all_dense.density = 1;
    run_scenario(all_dense);
}

// Node multicast: one dedicated aggregator on node 0 with workers 0 and 1, workers 2 and 3 on node 1.
// The aggregator sends each result to three workers instead of four, and the node-1 worker that
// receives them passes each on once; every output is still exact (run_scenario checks).
TEST(StreamingProtocol, NodeMulticastSendsOneCopyPerNode) {
    Scenario sc;
    sc.workers = 4;
    sc.aggregators = 1;
    sc.dedicated = true;
    sc.count = 20000;
    sc.density = 0.3;
    for (std::size_t eager : {std::size_t{0}, std::size_t{1} << 20}) {  // every payload rendezvous, then eager
        sc.eager_limit = eager;
        std::vector<OpCounters> flat, multicast;
        run_scenario(sc, &flat);
        sc.nodes = 2;
        sc.node = {0, 0, 1, 1, 0};  // ranks 0-3 are the workers, 4 the aggregator
        run_scenario(sc, &multicast);
        sc.nodes = 1;
        sc.node.clear();
        ASSERT_FALSE(::testing::Test::HasFailure());
        // How many result messages the aggregator cuts depends on arrival order, so each run is
        // compared with itself; contributions depend on the data only.
        EXPECT_EQ(flat[4].messages_sent % 4, 0u);
        const std::uint64_t results = multicast[4].messages_sent / 3;
        ASSERT_GT(results, 0u);
        EXPECT_EQ(multicast[4].messages_sent, 3 * results);
        // Worker 2 (the first of node 1) receives each result and forwards it; worker 3 gets it from 2.
        EXPECT_EQ(multicast[2].messages_received, results);
        EXPECT_EQ(multicast[2].messages_sent, flat[2].messages_sent + results);
        EXPECT_EQ(multicast[3].messages_received, results);
        EXPECT_EQ(multicast[3].messages_sent, flat[3].messages_sent);
    }
}

TEST(StreamingProtocol, RandomizedScenarios) {
    std::mt19937_64 rng(2024);
    const ElementType types[] = {ElementType::F32, ElementType::F64, ElementType::I32,
                                 ElementType::I64, ElementType::U32, ElementType::U64};
    const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Bor, ReduceOp::Bxor, ReduceOp::Lor, ReduceOp::Lxor, ReduceOp::Max};
    const Pattern patterns[] = {Pattern::Random, Pattern::Identical, Pattern::Disjoint, Pattern::Clustered};
    const double densities[] = {0.0, 0.01, 0.3, 1.0};
    for (int i = 0; i < 1000; ++i) {
        Scenario sc;
        sc.seed = static_cast<unsigned>(i + 1);
        sc.dedicated = rng() % 3 == 0;
        sc.workers = static_cast<int>(2 + rng() % 4);
        sc.aggregators = static_cast<int>(1 + rng() % (sc.dedicated ? 3 : static_cast<unsigned>(sc.workers)));
        sc.block_elems = std::array<std::uint32_t, 5>{1, 3, 16, 64, 256}[rng() % 5];
        sc.count = 1 + rng() % 20000;
        sc.density = densities[rng() % 4];
        sc.pattern = patterns[rng() % 4];
        sc.type = types[rng() % 6];
        do {
            sc.op = ops[rng() % 6];
        } while (!is_sparse_capable(sc.type, sc.op));
        sc.message_bytes = std::array<std::size_t, 3>{64, 4096, 65536}[rng() % 3];
        sc.window = static_cast<int>(1 + rng() % 4);
        sc.eager_limit = std::array<std::size_t, 3>{0, 256, 1u << 20}[rng() % 3];
        sc.in_place = !sc.dedicated && rng() % 2 == 0;
        sc.zeros_present = !sc.in_place && rng() % 3 == 0;
        if (rng() % 3 == 0) sc.nodes = static_cast<int>(2 + rng() % 3);
        if (rng() % 4 == 0) {
            sc.pairs = true;
            sc.block_elems = 1;
            sc.in_place = false;
            sc.zeros_present = false;
            sc.collecting = rng() % 2 == 0;
        }
        run_scenario(sc);
        if (::testing::Test::HasFailure()) break;
    }
}

}  // namespace
}  // namespace mpix::sparse::detail
