#include "core/call_tuner.h"

#include <algorithm>
#include <cmath>

namespace mpix::sparse::detail {
namespace {

constexpr std::uint32_t kDensityClasses = 12;
// A report's tag: shape and algorithm, never 0 (0 says "no report").
std::int64_t tag_of(std::uint32_t shape, Algorithm a) {
    return static_cast<std::int64_t>(shape) * CallTuner::kAlgorithms + static_cast<int>(a) + 1;
}
bool has(unsigned allowed, int a) {
    return ((allowed >> a) & 1u) != 0;
}

}  // namespace

std::uint32_t CallTuner::shape_of(const Demand &d, unsigned allowed) {
    const std::uint64_t bytes = d.layout.total_bytes();
    const auto size_class = static_cast<std::uint32_t>(bytes == 0 ? 0 : 64 - __builtin_clzll(bytes));
    // Density in factors of two from 1/1024 (class 1) to 1 (class 11); below 1/1024, class 0. In
    // integers (saturating): the class decides the plan, and every rank must compute the same one.
    const auto times = [](std::uint64_t a, std::uint64_t b) {
        std::uint64_t r = 0;
        return __builtin_mul_overflow(a, b, &r) ? ~std::uint64_t{0} : r;
    };
    const std::uint64_t cells = times(static_cast<std::uint64_t>(d.workers), d.layout.num_blocks());
    std::uint32_t density_class = 0;  // density >= 2^(k-10) <=> nonzero_sum * 2^(10-k) >= cells
    while (density_class < kDensityClasses - 1 && cells > 0 &&
           times(d.nonzero_sum, std::uint64_t{1} << (kDensityClasses - 1 - 1 - density_class)) >= cells)
        ++density_class;
    // What kind of call: its costs differ though size and density match.
    // (Buffers read in place: 64 MiB at 100% on 4 ranks took 28 ms against 41 from the heap; mixed
    // in one shape, the samples of either would decide for the other.)
    const std::uint32_t variant = (d.output_to_zero ? 1u : 0u) | (d.device ? 2u : 0u) |
                                  (has(allowed, static_cast<int>(Algorithm::Dense)) ? 0u : 4u) | (d.in_place ? 8u : 0u);
    return (size_class * kDensityClasses + density_class) * 16 + variant;
}

CallTuner::Report CallTuner::take_report() {
    Report r;
    if (armed_ && complete_) r = Report{tag_of(shape_, algorithm_), std::max<std::int64_t>(1, elapsed_ns_)};
    armed_ = complete_ = false;
    return r;
}

void CallTuner::learn(const Report &agreed) {
    if (agreed.tag <= 0 || agreed.ns <= 0) return;
    const std::int64_t code = agreed.tag - 1;
    const auto a = static_cast<int>(code % kAlgorithms);
    const auto shape = static_cast<std::uint32_t>(code / kAlgorithms);
    ShapeRecord *r = record_of(shape);
    if (r == nullptr) return;  // every rank chose for this shape before it reported
    // An algorithm's first call at a shape pays its first use at that size (connections, buffers and
    // registrations that grow, page faults): not a sample. Counted per communicator instead, one
    // such call at a larger size than before weighed as much as the next sample and kept its
    // algorithm last for good (32 MiB at 50% over 10 Gbit/s: the allgather's first 1090 ms, then
    // 160, against the aggregator's 130-157).
    Measured &m = r->by_algorithm[static_cast<std::size_t>(a)];
    if (!m.warmed) {
        m.warmed = true;
        return;
    }
    m.add(static_cast<double>(agreed.ns) / 1e3);
}

void CallTuner::Measured::add(double us) {
    recent[static_cast<std::size_t>(samples % kWindow)] = us;
    ++samples;
}

double CallTuner::Measured::rank_of(double q) const {
    const int n = std::min(samples, kWindow);
    if (n <= 0) return 0.0;
    std::array<double, kWindow> sorted = recent;
    const auto at = static_cast<std::ptrdiff_t>(q * (n - 1));  // of an even count, the lower middle
    std::nth_element(sorted.begin(), sorted.begin() + at, sorted.begin() + n);
    return sorted[static_cast<std::size_t>(at)];
}

// Worth measuring: the model's choice, and what the model predicts within kExploreFactor of it, or of
// what its choice measured when the model underestimated it; a mask like `allowed`.
unsigned CallTuner::worth_measuring(const ShapeRecord &r, Algorithm model, const CostEstimate &cost, unsigned allowed) {
    const double predicted[kAlgorithms] = {cost.dense_us, cost.aggregator_us, cost.allgather_us};
    const int m = static_cast<int>(model);
    const Measured &measured = r.by_algorithm[static_cast<std::size_t>(m)];
    const double model_us = measured.samples > 0 ? std::max(predicted[m], measured.us()) : predicted[m];
    unsigned mask = 0;
    for (int a = 0; a < kAlgorithms; ++a)
        if (has(allowed, a) && (a == m || predicted[a] <= kExploreFactor * model_us)) mask |= 1u << a;
    return mask;
}

CallTuner::ShapeRecord *CallTuner::record_of(std::uint32_t shape) {
    for (ShapeRecord &r : records_)
        if (r.shape == shape) return &r;
    return nullptr;
}

const CallTuner::ShapeRecord *CallTuner::record_of(std::uint32_t shape) const {
    return const_cast<CallTuner *>(this)->record_of(shape);
}

Algorithm CallTuner::choose(std::uint32_t shape, Algorithm model, const CostEstimate &cost, unsigned allowed,
                            bool may_explore) {
    explored_ = false;
    ShapeRecord *found = record_of(shape);
    if (found == nullptr) {
        // Room for kMaxShapes, taken once: calls allocate nothing after their first. Beyond it new
        // shapes keep the model's choice (every rank sees the same shapes in the same order).
        if (records_.capacity() < kMaxShapes) records_.reserve(kMaxShapes);
        if (records_.size() == kMaxShapes) return model;
        records_.push_back(ShapeRecord{});
        records_.back().shape = shape;
        found = &records_.back();
    }
    ShapeRecord &r = *found;
    const int call = r.calls++;
    const auto &by = r.by_algorithm;
    const int m = static_cast<int>(model);
    const unsigned candidates = worth_measuring(r, model, cost, allowed);
    const double predicted[kAlgorithms] = {cost.dense_us, cost.aggregator_us, cost.allgather_us};
    // The candidates in turn, the one with the fewest measured calls first (on a tie the model's
    // choice, then the lower prediction), until each has its samples: a slow period of the machine
    // falls on all of them alike, not on whichever was being measured then. -1 once all have them.
    const auto measure_next = [&] {
        const int a = next_to_measure(r, m, predicted, candidates);
        if (a >= 0) explored_ = a != m;
        return a;
    };
    if (may_explore && !r.first_choice_made) {
        if (const int a = measure_next(); a >= 0) return static_cast<Algorithm>(a);
        r.first_choice_made = true;
    }
    // The fastest of those compared on kSamplesToCompare samples; before any is, of those measured
    // at all (calls that do not report use what there is).
    const auto fastest = [&](int least_samples) {
        int f = -1;
        for (int a = 0; a < kAlgorithms; ++a)
            if (has(candidates, a) && by[a].samples >= least_samples && (f < 0 || by[a].us() < by[f].us())) f = a;
        return f;
    };
    int best = fastest(kSamplesToCompare);
    if (best < 0 && may_explore) {
        // Nothing left compared (the model's choice changed to an algorithm never measured): measure
        // again in turn.
        if (const int a = measure_next(); a >= 0) return static_cast<Algorithm>(a);
    }
    if (best < 0) best = fastest(1);
    if (best < 0) return model;
    const int steady = r.steady;
    if (steady >= 0 && steady != best && has(candidates, steady) && by[steady].samples > 0 &&
        (by[best].us() > kSwitchMargin * by[steady].us() || by[best].us() >= by[steady].lower_quartile()))
        best = steady;
    r.steady = best;
    if (may_explore && call % kReexploreCalls == kReexploreCalls - 1) {
        // The others in turn, not only the runner-up: one slow sample must not keep an algorithm out
        // for good. A candidate that became worth measuring after the first choice (the running one
        // measured slower than the model put it) is measured on these turns too, not call after
        // call: a settled loop would otherwise take its first kSamplesToCompare + 1 calls in a row
        // (over 1 Gbit/s at 2 MiB 1%, MPI_Allreduce at 3.9x the aggregator's time, in the bench's
        // timed calls).
        int others[kAlgorithms - 1] = {}, count = 0;
        for (int a = 0; a < kAlgorithms; ++a)
            if (a != best && has(candidates, a)) others[count++] = a;
        if (count > 0) {
            // Running again an algorithm measured (or, not yet measured, predicted) r times the
            // best's time costs r - 1 of the best's time: it runs only on every stride-th of its
            // turns, so re-measuring costs at most kReexploreBudget of the shape's time however slow
            // it is (in test_call_tuner one 12x slower, run again on every 32nd call, added 35% to
            // the shape's time).
            const int turn = call / kReexploreCalls;
            const int other = others[turn % count];
            const double other_us = by[other].samples > 0 ? by[other].us() : predicted[other];
            const double ratio = other_us / by[best].us();
            const double stride = std::ceil((ratio - 1) / (kReexploreCalls * kReexploreBudget));
            const int every = stride > 1 ? static_cast<int>(std::min(stride, 1024.0)) : 1;
            if ((turn / count) % every == every - 1) {
                explored_ = true;
                return static_cast<Algorithm>(other);
            }
        }
    }
    return static_cast<Algorithm>(best);
}

int CallTuner::next_to_measure(const ShapeRecord &r, int model, const double (&predicted)[kAlgorithms],
                               unsigned candidates) {
    const auto &by = r.by_algorithm;
    const auto runs = [&by](int a) { return by[a].samples + (by[a].warmed ? 1 : 0); };
    const auto goes_before = [&](int a, int b) {
        if (runs(a) != runs(b)) return runs(a) < runs(b);
        if (a == model || b == model) return a == model;
        return predicted[a] < predicted[b];
    };
    int next = -1;
    for (int a = 0; a < kAlgorithms; ++a)
        if (has(candidates, a) && by[a].samples < kSamplesToCompare && (next < 0 || goes_before(a, next))) next = a;
    return next;
}

bool CallTuner::settled(std::uint32_t shape, Algorithm model, const CostEstimate &cost, unsigned allowed) const {
    const ShapeRecord *r = record_of(shape);
    if (r == nullptr) return false;
    const unsigned candidates = worth_measuring(*r, model, cost, allowed);
    bool compared = false, all_compared = true;
    for (int a = 0; a < kAlgorithms; ++a) {
        if (!has(candidates, a)) continue;
        const bool enough = r->by_algorithm[static_cast<std::size_t>(a)].samples >= kSamplesToCompare;
        compared |= enough;
        all_compared &= enough;
    }
    // After the first choice, a candidate still to be measured waits for re-exploration turns
    // (choose()), as the measured ones do.
    return all_compared || (r->first_choice_made && compared);
}

void CallTuner::expect(std::uint32_t shape, Algorithm algorithm, std::int64_t start_ns) {
    armed_ = true;
    complete_ = false;
    shape_ = shape;
    algorithm_ = algorithm;
    start_ns_ = start_ns;
}

void CallTuner::completed(std::int64_t end_ns) {
    if (!armed_) return;
    complete_ = true;
    elapsed_ns_ = end_ns - start_ns_;
}

void CallTuner::discard() {
    armed_ = complete_ = false;
}

double CallTuner::measured_us(std::uint32_t shape, Algorithm algorithm) const {
    const ShapeRecord *r = record_of(shape);
    if (r == nullptr) return -1.0;
    const Measured &m = r->by_algorithm[static_cast<std::size_t>(algorithm)];
    return m.samples > 0 ? m.us() : -1.0;
}

}  // namespace mpix::sparse::detail
