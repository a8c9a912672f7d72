// Where a communicator's time goes (mpix_sparse_profile): wall time this rank spent in each phase of
// its calls, summed. Phases are timed at their boundaries only (stage changes, one reduced window,
// one result message), so profiling adds a few clock reads per message, and nothing when off.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace mpix::sparse::detail {

enum class Phase : int {
    Scan,           // finding the non-zero blocks (or sorting pairs) before the agreement
    Agreement,      // the MPI_Iallreduce that agrees on arguments, counts and the plan
    Dense,          // the dense path (MPI_Iallreduce), from start to completion
    Allgather,      // the allgather path: MPI_Iallgather and reducing the gathered records
    Stream,         // the aggregators' stream, from start to completion (Reduce and ResultWrite inside)
    Reduce,         // aggregators reducing windows of contributions (inside Stream)
    ResultWrite,    // workers writing result messages and the zeros between them into the output (inside Stream)
    Barrier,        // the MPI_Ibarrier after a stream
    NodeBroadcast,  // hierarchical calls: the node leader's broadcast of the result to its node
    Count
};
constexpr std::size_t kPhases = static_cast<std::size_t>(Phase::Count);

inline std::int64_t profile_clock_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct PhaseProfile {
    std::array<std::int64_t, kPhases> ns{};
    std::int64_t calls = 0;

    void add(Phase phase, std::int64_t elapsed_ns) { ns[static_cast<std::size_t>(phase)] += elapsed_ns; }
};

// Adds the duration of a scope to one phase (nothing when the profile is null, i.e. off).
class PhaseTimer {
  public:
    PhaseTimer(PhaseProfile *profile, Phase phase)
        : profile_(profile), phase_(phase), start_(profile != nullptr ? profile_clock_ns() : 0) {}
    ~PhaseTimer() {
        if (profile_ != nullptr) profile_->add(phase_, profile_clock_ns() - start_);
    }
    PhaseTimer(const PhaseTimer &) = delete;
    PhaseTimer &operator=(const PhaseTimer &) = delete;

  private:
    PhaseProfile *profile_;
    Phase phase_;
    std::int64_t start_;
};

}  // namespace mpix::sparse::detail
