// Tracks which part of a block range [lo, hi) has been covered by messages that may complete in any
// order (rendezvous transfers finish out of order); prefix() is how far coverage is contiguous.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace mpix::sparse::detail {

class Coverage {
  public:
    void reset(std::uint64_t lo) {
        prefix_ = lo;
        pending_.clear();
    }
    std::uint64_t prefix() const { return prefix_; }

    // Marks [begin, end) covered. Ranges never overlap (each message covers its own range).
    void add(std::uint64_t begin, std::uint64_t end) {
        if (begin == prefix_) {
            prefix_ = end;
            // Absorb ranges that became contiguous.
            bool merged = true;
            while (merged && !pending_.empty()) {
                merged = false;
                for (std::size_t i = 0; i < pending_.size(); ++i) {
                    if (pending_[i].first == prefix_) {
                        prefix_ = pending_[i].second;
                        pending_[i] = pending_.back();
                        pending_.pop_back();
                        merged = true;
                        break;
                    }
                }
            }
            return;
        }
        pending_.emplace_back(begin, end);
    }

  private:
    std::uint64_t prefix_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pending_;
};

}  // namespace mpix::sparse::detail
