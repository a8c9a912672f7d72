// The streaming protocol end to end, without MPI or UCX: workers and aggregators (colocated or
// dedicated) in one thread over the loopback fabric, which reorders messages, misaligns eager payloads
// and holds rendezvous payloads at the sender until fetched. Every output must equal the reference
// reduction bit for bit, and every payload must be consumed.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include "algo/contribution_source.h"
#include "algo/coverage.h"
#include "algo/device_staging.h"
#include "algo/result_sink.h"
#include "algo/streaming_operation.h"
#include "core/block_scan.h"
#include "core/error.h"
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
    bool staged = false;      // the scan stages the blocks to send (core/send_staging.h)
    bool pairs = false;       // element variant: sorted (index, value) pairs, block size 1
    bool collecting = false;  // element variant with sparse output
    // Node multicast: > 1 puts ranks on random nodes (or on `node` when given) and results are
    // forwarded within them (core/result_fanout.h).
    int nodes = 1;
    std::vector<int> node;
    // The longest range a packed message may cover (0: the wire's limit, 2^32 - 1 blocks, too long
    // to reach here); every packed message is checked against it.
    std::uint64_t max_packed_span = 0;
    unsigned seed = 1;

    std::string describe() const {
        std::ostringstream s;
        s << "workers=" << workers << " aggregators=" << aggregators << (dedicated ? " dedicated" : " colocated")
          << " B=" << block_elems << " count=" << count << " density=" << density << " " << testing::name_of(pattern)
          << " " << name_of(type) << " " << name_of(op) << " msg=" << message_bytes << " window=" << window
          << " eager=" << eager_limit << (in_place ? " in-place" : "") << (zeros_present ? " zeros-present" : "")
          << (staged ? " staged" : "") << (pairs ? " pairs" : "") << (collecting ? " sparse-output" : "")
          << " nodes=" << nodes << " seed=" << seed;
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
    if (sc.max_packed_span != 0) base.max_packed_span = sc.max_packed_span;
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
    std::vector<SendStaging> staging(static_cast<std::size_t>(ranks));
    std::vector<std::vector<std::byte>> staging_memory(static_cast<std::size_t>(ranks));
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
            SendStaging *staged = nullptr;
            if (sc.staged) {
                const std::uint64_t chunk = blocks_per_message(sc.message_bytes, layout);
                staging_memory[ur].assign(SendStaging::bytes_needed(layout, chunk), std::byte{0xCD});
                staging[ur].begin(staging_memory[ur].data(), layout, chunk);
                staged = &staging[ur];
            }
            scan_blocks(in, layout, bitmaps[ur], staged);
            sources[ur] = std::make_unique<BitmapSource>(in, layout, bitmaps[ur], nullptr, staged);
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
        fabric.set_sink(r, [op = ops[ur].get(), span = base.max_packed_span](InboundMessage &&m) {
            const WireHeader &h = m.header;
            if (h.nblocks > 0 && !(h.flags & kDenseRun)) {
                EXPECT_LE(h.end - h.begin, span) << "a packed message covers more than it may";
            }
            op->on_message(std::move(m));
        });
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
    for (double density : {0.05, 0.5, 1.0}) {
        Scenario staged;  // blocks of 16 floats, messages of 64 blocks: many chunks, cut by the shards
        staged.staged = true;
        staged.count = 40000;
        staged.density = density;
        run_scenario(staged);
    }
}

// An aggregator that reduces several windows in one step packs their results into one message until
// it is full, so a run of adjacent union blocks can straddle two messages and must be cut there: 256
// KiB messages with two credits put two 256 KiB windows ahead of it, and at 50% density the union of
// two workers (75%) goes packed, in runs of a few blocks.
TEST(StreamingProtocol, PackedRunsAreCutWhereAResultMessageFills) {
    Scenario sc;
    sc.workers = 2;
    sc.aggregators = 1;
    sc.count = 1 << 20;
    sc.density = 0.5;
    sc.message_bytes = 256 << 10;
    sc.eager_limit = 1 << 20;
    for (int window : {2, 4}) {
        sc.window = window;
        run_scenario(sc);
    }
}

// A packed message covers at most a span of blocks (on the wire, offsets below 2^32 from its begin):
// a contribution or a result whose blocks reach further is cut, and a result range that goes on
// past its last block (an empty stretch up to the frontier) ends in a coverage message. Exercised
// with spans of a few blocks: sparse blocks, one-element blocks (the element variant's pairs), and
// runs longer than the span.
TEST(StreamingProtocol, PackedMessagesStayWithinTheirSpan) {
    for (std::uint64_t span : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{50}})
        for (double density : {0.02, 0.5}) {
            Scenario sc;
            sc.count = 20000;
            sc.density = density;
            sc.max_packed_span = span;
            run_scenario(sc);
            sc.pairs = true;
            sc.block_elems = 1;
            run_scenario(sc);
            sc.pairs = false;
            sc.block_elems = 16;
            sc.message_bytes = 256 << 10;
            sc.window = 4;
            sc.eager_limit = 1 << 20;
            run_scenario(sc);
            ASSERT_FALSE(::testing::Test::HasFailure()) << "span " << span << ", density " << density;
        }
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
        sc.staged = rng() % 2 == 0;
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

// Coverage of results that arrive in any order: a range that is empty, or overlaps one covered or
// pending, is refused (an overlap would keep the prefix short of the end forever).
TEST(Coverage, RefusesEmptyAndOverlappingRanges) {
    Coverage c;
    c.reset(10);
    EXPECT_TRUE(c.add(20, 30));
    EXPECT_FALSE(c.add(25, 35)) << "overlaps the pending [20, 30)";
    EXPECT_FALSE(c.add(15, 21)) << "overlaps the pending [20, 30)";
    EXPECT_FALSE(c.add(20, 30)) << "the same range twice";
    EXPECT_FALSE(c.add(12, 12)) << "empty";
    EXPECT_EQ(c.prefix(), 10u);
    EXPECT_TRUE(c.add(10, 20));
    EXPECT_EQ(c.prefix(), 30u);
    EXPECT_FALSE(c.add(5, 12)) << "below the prefix";
    EXPECT_FALSE(c.add(29, 31)) << "overlaps the prefix";
    EXPECT_FALSE(c.add(30, 30)) << "empty, at the prefix";
    EXPECT_TRUE(c.add(30, 31));
    EXPECT_EQ(c.prefix(), 31u);
}

// One rank of a stream whose peers the test plays, over the loopback fabric: crafted messages go to
// its operation, as from a broken or hostile peer, and what it sends back is read. The vector: 400
// floats in 100 blocks of 4, one shard.
constexpr std::uint64_t kBlocks = 100;

// A rank's transport, with hooks called before each send (a peer's write landing between the rank's
// check of a message and its use of it) and before each fetch.
class InterposedTransport final : public Transport {
  public:
    explicit InterposedTransport(Transport &inner) : inner_(inner) {}
    void send(int peer, const WireHeader &header, const void *payload, std::size_t bytes, Completion &done) override {
        if (before_send) before_send();
        inner_.send(peer, header, payload, bytes, done);
    }
    void fetch(InboundMessage &message, void *dest, Completion &done) override {
        if (before_fetch) before_fetch();
        inner_.fetch(message, dest, done);
    }
    void release(InboundMessage &message) override { inner_.release(message); }
    bool progress() override { return inner_.progress(); }
    void wait() override {}

    std::function<void()> before_send, before_fetch;

  private:
    Transport &inner_;
};

struct RankUnderTest {
    // A dedicated aggregator (rank 2) of workers 0 and 1, or worker 0 (its input all zeros) of a
    // dedicated aggregator (rank 1), writing into `sink` when given; with `forwards`, a worker 2 is on
    // worker 0's node, which forwards it the results.
    enum class Role { Aggregator, Worker };

    explicit RankUnderTest(Role role, std::size_t eager_limit = std::size_t{1} << 20, ResultSink *sink = nullptr,
                           bool forwards = false)
        : layout{400, 4, 4}, rank(role == Role::Aggregator ? 2 : 0), input(layout.total_bytes()),
          output(layout.total_bytes()), fabric(role == Role::Aggregator || forwards ? 3 : 2, eager_limit, 1),
          transport(fabric.transport(rank)) {
        spec.context = 7;
        spec.seq = 3;
        spec.layout = layout;
        spec.shard_bounds = {0, kBlocks};
        if (role == Role::Aggregator) {
            spec.worker_peer = {0, 1};
            spec.aggregator_peer = {2};
            spec.my_aggregator = 0;
        } else {
            spec.worker_peer = {0};
            spec.aggregator_peer = {1};
            spec.my_worker = 0;
            if (forwards) {
                spec.worker_peer = {0, 2};
                fanout.forward = {{2}};
                spec.fanout = &fanout;
            }
            bitmap.reset(layout.num_blocks());
            source = std::make_unique<BitmapSource>(input.data(), layout, bitmap);
            dense_sink = std::make_unique<DenseResultSink>(output.data(), layout, DenseResultSink::Zeros::Written);
            if (sink == nullptr) sink = dense_sink.get();
        }
        op = std::make_unique<StreamingOperation>(spec, transport, resources, counters, source.get(), sink);
        fabric.set_sink(rank, [this](InboundMessage &&m) { op->on_message(std::move(m)); });
        // What the rank sends to rank 0 (a worker, when the rank aggregates) is kept.
        if (rank != 0)
            fabric.set_sink(0, [this](InboundMessage &&m) {
                std::vector<std::uint64_t> copy((m.bytes + 7) / 8);
                if (m.bytes > 0) std::memcpy(copy.data(), m.data, m.bytes);
                to_rank0.push_back({m.header, std::move(copy), m.bytes});
                fabric.transport(0).release(m);
            });
    }

    WireHeader header(MessageKind kind, std::uint32_t sender, std::uint64_t begin, std::uint64_t end) const {
        WireHeader h;
        h.kind = kind;
        h.elem_type = static_cast<std::uint8_t>(spec.type);
        h.reduce_op = static_cast<std::uint8_t>(spec.op);
        h.context = spec.context;
        h.sender = sender;
        h.block_elems = layout.block_elems;
        h.num_workers = static_cast<std::uint32_t>(spec.workers());
        h.seq = spec.seq;
        h.count = layout.count;
        h.shard_lo = 0;
        h.shard_hi = kBlocks;
        h.begin = begin;
        h.end = end;
        return h;
    }

    // A message as the transport hands it over, its payload where the test keeps it.
    void deliver(const WireHeader &h, const void *payload = nullptr, std::size_t bytes = 0,
                 bool sender_writable = false) {
        InboundMessage m;
        m.header = h;
        m.data = static_cast<const std::byte *>(payload);
        m.bytes = bytes;
        m.sender_writable = sender_writable;
        op->on_message(std::move(m));
    }

    // Advances the rank (as its communicator does, failing the operation on an exception) until it
    // is done; false if it is not within `rounds` rounds.
    bool run(int rounds = 1000) {
        for (int i = 0; i < rounds && !op->done(); ++i) {
            try {
                fabric.transport(rank).progress();
                op->advance();
            } catch (const Error &e) {
                op->fail({e.id(), e.detail()});
            }
        }
        if (rank != 0)  // what it sent to rank 0, into to_rank0
            while (fabric.transport(0).progress()) {
            }
        return op->done();
    }

    ErrorId error() const { return op->error().id; }

    // The blocks the results kept from rank 0 carry.
    std::vector<std::uint64_t> result_blocks() const {
        std::vector<std::uint64_t> blocks;
        for (const Received &r : to_rank0) {
            if (r.header.kind != MessageKind::Result) continue;
            MessageView view;
            const char *bad =
                check_payload(r.header, layout, reinterpret_cast<const std::byte *>(r.payload.data()), r.bytes, &view);
            EXPECT_EQ(bad, nullptr) << bad;
            if (bad != nullptr) continue;
            MessageCursor(view, layout).take_until(MessageCursor::kEnd, [&](const BlockBatch &b) {
                for (std::size_t i = 0; i < b.n; ++i)
                    blocks.push_back(b.block(i));
            });
        }
        return blocks;
    }

    struct Received {
        WireHeader header;
        std::vector<std::uint64_t> payload;  // 8-byte aligned for check_payload
        std::size_t bytes;
    };

    BlockLayout layout;
    StreamSpec spec;
    ResultFanout fanout;
    int rank;
    std::vector<std::byte> input, output;
    BlockBitmap bitmap;
    std::unique_ptr<BitmapSource> source;
    std::unique_ptr<DenseResultSink> dense_sink;
    StreamResources resources;
    OpCounters counters;
    std::vector<Received> to_rank0;
    LoopbackFabric fabric;  // after what its queued messages refer to: destroyed first
    InterposedTransport transport;
    std::unique_ptr<StreamingOperation> op;
};

// One packed block, number `block`, of ones: 16 bytes of data, then its number.
struct PackedBlock {
    explicit PackedBlock(std::uint32_t block) {
        const float one = 1.0f;
        for (int i = 0; i < 4; ++i)
            std::memcpy(&words[static_cast<std::size_t>(i)], &one, 4);
        words[4] = block;
    }
    static constexpr std::size_t kBytes = 20;
    alignas(8) std::array<std::uint32_t, 5> words{};
};

// A sender index is compared unsigned: one past INT_MAX, cast to int first, passed as negative and
// indexed far outside the rank's per-peer arrays.
TEST(CraftedMessages, SenderIndexOutOfRangeIsAProtocolViolation) {
    for (std::uint32_t sender : {2u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu}) {
        SCOPED_TRACE(sender);
        RankUnderTest aggregator(RankUnderTest::Role::Aggregator);
        aggregator.deliver(aggregator.header(MessageKind::Contribution, sender, 0, kBlocks));
        ASSERT_TRUE(aggregator.run());
        EXPECT_EQ(aggregator.error(), ErrorId::ProtocolViolation);
        RankUnderTest worker(RankUnderTest::Role::Worker);
        worker.deliver(worker.header(MessageKind::Result, sender == 2u ? 1u : sender, 0, kBlocks));
        ASSERT_TRUE(worker.run());
        EXPECT_EQ(worker.error(), ErrorId::ProtocolViolation);
    }
}

// Honest workers never send an empty range. One arriving after a kept piece that begins where it
// does sorts behind that piece, where nothing ever consumes it: the stream stalled until the timeout.
TEST(CraftedMessages, EmptyContributionIsAProtocolViolationNotAStall) {
    RankUnderTest t(RankUnderTest::Role::Aggregator);
    t.deliver(t.header(MessageKind::Contribution, 0, 0, 50));
    t.deliver(t.header(MessageKind::Contribution, 0, 0, 0));
    t.deliver(t.header(MessageKind::Contribution, 0, 50, kBlocks));
    t.deliver(t.header(MessageKind::Contribution, 1, 0, kBlocks));
    ASSERT_TRUE(t.run()) << "stalled: " << t.op->describe();
    EXPECT_EQ(t.error(), ErrorId::ProtocolViolation);
}

// Result ranges that overlap a pending one kept the worker's coverage short of the end forever.
TEST(CraftedMessages, OverlappingResultsAreAProtocolViolationNotAStall) {
    RankUnderTest t(RankUnderTest::Role::Worker);
    t.deliver(t.header(MessageKind::Result, 0, 10, 30));
    t.deliver(t.header(MessageKind::Result, 0, 20, 40));  // overlaps [10, 30), still pending
    t.deliver(t.header(MessageKind::Result, 0, 0, 10));
    t.deliver(t.header(MessageKind::Result, 0, 40, kBlocks));
    ASSERT_TRUE(t.run()) << "stalled: " << t.op->describe();
    EXPECT_EQ(t.error(), ErrorId::ProtocolViolation);
}

// An output whose writes fail (as a device output's copy can).
class FailingSink final : public ResultSink {
  public:
    std::byte *in_place(std::uint64_t, std::uint64_t) override { return nullptr; }
    void write(const MessageView &) override {
        ++writes;
        throw Error(ErrorId::DeviceFailure, "the test's output refuses writes");
    }
    int writes = 0;
};

// A fetched result that fails to be stored fails the operation once; it used to stay in the list of
// fetches and fail again at every later poll, so the failed operation never finished.
TEST(CraftedMessages, FetchedResultThatFailsToStoreFailsOnce) {
    FailingSink sink;
    RankUnderTest t(RankUnderTest::Role::Worker, /*eager_limit=*/0, &sink);  // every payload fetched
    const PackedBlock block(3);
    WireHeader h = t.header(MessageKind::Result, 0, 0, kBlocks);
    h.nblocks = 1;
    Completion sent;
    t.fabric.transport(1).send(0, h, block.words.data(), PackedBlock::kBytes, sent);
    ASSERT_TRUE(t.run()) << "never finished: " << t.op->describe();
    EXPECT_EQ(t.error(), ErrorId::DeviceFailure);
    EXPECT_EQ(sink.writes, 1);
    EXPECT_TRUE(sent.done());
}

// A role that takes a message and then cannot keep it (its fetch refused here; a buffer that cannot be
// had is the same path) fails the operation and gives the message back: the sender's send completes
// and the transport holds nothing for it. Both leaked the message's descriptor before.
TEST(CraftedMessages, MessageTakenButNotKeptGoesBack) {
    for (const auto role : {RankUnderTest::Role::Aggregator, RankUnderTest::Role::Worker}) {
        const bool aggregates = role == RankUnderTest::Role::Aggregator;
        SCOPED_TRACE(aggregates ? "aggregator" : "worker");
        RankUnderTest t(role, /*eager_limit=*/0);  // every payload fetched
        t.transport.before_fetch = [] { throw Error(ErrorId::TransportFailure, "the test refuses fetches"); };
        const PackedBlock block(3);
        WireHeader h = t.header(aggregates ? MessageKind::Contribution : MessageKind::Result, 0, 0, kBlocks);
        h.nblocks = 1;
        Completion sent;
        t.fabric.transport(aggregates ? 0 : 1).send(t.rank, h, block.words.data(), PackedBlock::kBytes, sent);
        ASSERT_TRUE(t.run()) << "never finished: " << t.op->describe();
        EXPECT_EQ(t.error(), ErrorId::TransportFailure);
        EXPECT_TRUE(sent.done());
        EXPECT_EQ(t.fabric.outstanding(), 0u) << "a payload neither fetched nor released";
    }
}

// A payload in its sender's shared segment may be rewritten after the aggregator checked it (a bug,
// or corrupted memory, in that process). The block numbers it reduces, which decide where it writes,
// are the ones it checked: here block 3, not the 5 written later (nor anything out of range).
TEST(CraftedMessages, AggregatorUsesTheBlockNumbersItChecked) {
    RankUnderTest t(RankUnderTest::Role::Aggregator);
    PackedBlock block(3);
    WireHeader h = t.header(MessageKind::Contribution, 0, 0, kBlocks);
    h.nblocks = 1;
    t.deliver(h, block.words.data(), PackedBlock::kBytes, /*sender_writable=*/true);
    block.words[4] = 5;
    t.deliver(t.header(MessageKind::Contribution, 1, 0, kBlocks));
    ASSERT_TRUE(t.run());
    ASSERT_FALSE(t.op->error()) << t.op->error().detail;
    EXPECT_EQ(t.result_blocks(), std::vector<std::uint64_t>{3});
}

// The same at a worker: between its check of a result and its write into the output, it forwards the
// result to a worker of its node, and the sender rewrites the block number meanwhile. The block
// written is the one checked.
TEST(CraftedMessages, WorkerWritesTheBlockNumbersItChecked) {
    RankUnderTest t(RankUnderTest::Role::Worker, std::size_t{1} << 20, nullptr, /*forwards=*/true);
    PackedBlock block(3);
    WireHeader h = t.header(MessageKind::Result, 0, 0, kBlocks);
    h.nblocks = 1;
    t.transport.before_send = [&] { block.words[4] = 5; };
    t.deliver(h, block.words.data(), PackedBlock::kBytes, /*sender_writable=*/true);
    t.transport.before_send = nullptr;
    ASSERT_TRUE(t.run());
    ASSERT_FALSE(t.op->error()) << t.op->error().detail;
    float at3 = 0, at5 = 0;
    std::memcpy(&at3, t.output.data() + t.layout.offset_of(3), 4);
    std::memcpy(&at5, t.output.data() + t.layout.offset_of(5), 4);
    EXPECT_EQ(at3, 1.0f);
    EXPECT_EQ(at5, 0.0f);
}

TEST(InboundMessage, MovingHandsOverThePayload) {
    // A container's message handed on by move (held messages replayed into a stream) owns nothing
    // afterwards: releasing what remains of the container (after a step threw) frees nothing twice.
    LoopbackFabric fabric(2, 1024, 1);
    std::vector<InboundMessage> held;
    fabric.set_sink(1, [&](InboundMessage &&m) { held.push_back(std::move(m)); });
    const std::uint32_t payload[4] = {1, 2, 3, 4};
    Completion sent;
    WireHeader h;
    h.seq = 5;
    fabric.transport(0).send(1, h, payload, sizeof payload, sent);
    while (fabric.transport(1).progress()) {
    }
    ASSERT_EQ(held.size(), 1u);
    ASSERT_NE(held[0].handle, nullptr);
    held[0].sender_writable = true;  // as a payload in a peer's segment: the flag must travel too
    InboundMessage taken(std::move(held[0]));
    EXPECT_TRUE(taken.sender_writable);
    EXPECT_EQ(held[0].handle, nullptr);
    EXPECT_EQ(held[0].storage, 0);
    EXPECT_EQ(held[0].header.seq, 5u);  // what it said stays readable
    EXPECT_EQ(taken.bytes, sizeof payload);
    EXPECT_EQ(std::memcmp(taken.data, payload, sizeof payload), 0);
    InboundMessage again;
    again = std::move(taken);
    EXPECT_EQ(taken.handle, nullptr);
    fabric.transport(1).release(again);
    for (InboundMessage &m : held)
        fabric.transport(1).release(m);
    EXPECT_EQ(fabric.outstanding(), 0u);
}

}  // namespace
}  // namespace mpix::sparse::detail
