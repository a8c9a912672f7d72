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

    // Whether [begin, end) may be added: not empty, and overlapping nothing covered or pending. Each
    // message covers a range of its own; one overlapping another would keep the prefix from ever
    // getting past the other's end.
    bool can_add(std::uint64_t begin, std::uint64_t end) const {
        if (begin >= end || begin < prefix_) return false;
        for (const auto &p : pending_)
            if (begin < p.second && p.first < end) return false;
        return true;
    }

    // Marks [begin, end) covered; false, marking nothing, when can_add() says no.
    bool add(std::uint64_t begin, std::uint64_t end) {
        if (!can_add(begin, end)) return false;
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
            return true;
        }
        pending_.emplace_back(begin, end);
        return true;
    }

  private:
    std::uint64_t prefix_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pending_;
};

}  // namespace mpix::sparse::detail
