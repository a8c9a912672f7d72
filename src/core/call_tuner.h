// What each algorithm really takes on this communicator, learned from its own blocking calls, so the
// planner's choice follows measured times where the cost model cannot see the difference: round trips
// and transport behaviour across nodes, a machine other than the one the constants were fitted on.
//
// Every rank must reach the same choice. A call's time travels in the next call's agreement (each
// rank's own time; the agreement's maximum is the collective's time, the same number everywhere),
// so every rank updates the same table with the same numbers and chooses alike.
//
// Per call shape (buffer size and density, both in factors of two; variant), the model's choice and
// each other algorithm the model predicts within kExploreFactor of it (or of what its choice
// measured, when the model underestimated that) run in turn until each has kSamplesToCompare
// samples (an algorithm's first call at a shape is not one); from then on the fastest measured one runs, and
// every kReexploreCalls calls of the shape one of the others runs once more, in turn, so a choice
// made on noisy samples is not final; one that measured far slower than the fastest only on every
// few of its turns, so that running it again costs at most kReexploreBudget of the shape's time.
// An algorithm that becomes worth measuring only after that first choice (the one running measured
// slower than the model put it) is measured on those turns as well, within the same budget.
// The choice moves to another algorithm only when it measures kSwitchMargin faster than the one
// running and faster than the running one's lower quartile, a difference larger than the spread of
// the running one's own calls: otherwise between algorithms within the noise of single calls (about
// 40% over TCP between emulated nodes) the choice would move back and forth.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/planner.h"

namespace mpix::sparse::detail {

class CallTuner {
  public:
    // Far enough to reach what the model gets wrong across nodes: over the emulated 10 Gbit/s links at
    // 16 MiB 50% it predicted MPI_Allreduce at 133 ms, 2.0x the aggregator's 65, where it took 44-55
    // ms to the aggregator's 54-72 (at 1.5 it was never measured). Measuring a candidate 3x slower
    // costs (1 + kSamplesToCompare) * 2 of its shape's calls, once.
    static constexpr double kExploreFactor = 3.0;
    // Samples of each candidate before the fastest is chosen: one alone is too easily a slow outlier
    // (over TCP a small exchange takes 0.04 ms or 8 ms alike), and with two (of two, the lower) an
    // algorithm not running looked faster than the one running, which is judged by a median.
    static constexpr int kSamplesToCompare = 3;
    static constexpr int kReexploreCalls = 32;
    static constexpr double kReexploreBudget = 0.05;
    static constexpr double kSwitchMargin = 0.95;
    static constexpr int kAlgorithms = 3;

    static constexpr std::size_t kMaxShapes = 256;

    // The shape of a call: what its time is learned under (`allowed` as for choose).
    static std::uint32_t shape_of(const Demand &demand, unsigned allowed);

    // The report this rank contributes to the next agreement: (tag, nanoseconds) of its previous
    // learnable call, or (0, 0) when there is none; cleared by taking it.
    struct Report {
        std::int64_t tag = 0;
        std::int64_t ns = 0;
    };
    Report take_report();
    // The agreed report (the tag equal on every rank, ns their maximum).
    void learn(const Report &agreed);

    // The algorithm to run for `shape`: `model` is the cost model's choice and `cost` its estimates;
    // `allowed` has bit a set for each Algorithm a this call may take. Without `may_explore` (a call
    // whose time will not be reported) only what was measured competes with the model's choice.
    Algorithm choose(std::uint32_t shape, Algorithm model, const CostEstimate &cost, unsigned allowed,
                     bool may_explore);
    // True when choose() no longer measures candidates call after call for `shape` (same arguments
    // as choose): every one worth measuring has its samples, or the first choice was made and one
    // that became worth measuring later waits for re-exploration turns. Until then a dense plan
    // must not start a dense streak, which skips the agreement.
    bool settled(std::uint32_t shape, Algorithm model, const CostEstimate &cost, unsigned allowed) const;
    // True when the last choose() picked an algorithm only to measure it (not the model's choice
    // and not the fastest measured): such a dense call must not start a dense streak either.
    bool explored() const { return explored_; }

    // This rank's call of `shape` runs `algorithm` from `start_ns` (a steady clock): its report once
    // completed() gives it an end; a call that fails reports nothing.
    void expect(std::uint32_t shape, Algorithm algorithm, std::int64_t start_ns);
    void completed(std::int64_t end_ns);
    void discard();

    // Measured time of `algorithm` for `shape` in µs, or a negative number when never measured.
    double measured_us(std::uint32_t shape, Algorithm algorithm) const;

  private:
    // An algorithm's time at a shape: the median of its last kWindow samples (of an even number, the
    // lower middle one), so a few slow calls (a page fault storm, a retransmission, a busy core) do
    // not move it, and a machine that changes is followed once most of the window has seen it.
    struct Measured {
        static constexpr int kWindow = 7;
        std::array<double, kWindow> recent{};  // the last kWindow samples, overwritten in turn
        int samples = 0;                       // reports received, beyond the first
        bool warmed = false;                   // the first report came: the algorithm's first call at this shape
        void add(double us);
        double us() const { return rank_of(0.5); }
        // Below which a quarter of the samples lie: how fast this algorithm's good calls are.
        double lower_quartile() const { return rank_of(0.25); }

      private:
        // The sample at fraction q of the window's sorted samples, counted from below.
        double rank_of(double q) const;
    };
    struct ShapeRecord {
        std::uint32_t shape = 0;
        std::array<Measured, kAlgorithms> by_algorithm{};
        int calls = 0;
        int steady = -1;  // the algorithm the last steady (not exploring) choice ran
        // Every candidate of the first calls had its samples: one that becomes a candidate later is
        // measured on re-exploration turns, not call after call.
        bool first_choice_made = false;
    };
    // The candidate to measure next while some lack kSamplesToCompare samples (-1 when none do).
    static int next_to_measure(const ShapeRecord &r, int model, const double (&predicted)[kAlgorithms],
                               unsigned candidates);
    static unsigned worth_measuring(const ShapeRecord &r, Algorithm model, const CostEstimate &cost, unsigned allowed);
    ShapeRecord *record_of(std::uint32_t shape);
    const ShapeRecord *record_of(std::uint32_t shape) const;

    std::vector<ShapeRecord> records_;  // a few dozen shapes in practice: a linear search
    bool explored_ = false;
    // The call in flight or just completed on this rank.
    bool armed_ = false, complete_ = false;
    std::uint32_t shape_ = 0;
    Algorithm algorithm_ = Algorithm::Dense;
    std::int64_t start_ns_ = 0, elapsed_ns_ = 0;
};

}  // namespace mpix::sparse::detail
