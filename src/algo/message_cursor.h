// Walks the blocks a message carries, in ascending order, handing them out as batches below a
// moving limit: the aggregator consumes each worker's messages window by window.
#pragma once

#include <cstdint>
#include <limits>

#include "algo/block_batch.h"
#include "core/block_layout.h"
#include "transport/wire_format.h"

namespace mpix::sparse::detail {

class MessageCursor {
  public:
    static constexpr std::uint64_t kEnd = std::numeric_limits<std::uint64_t>::max();

    MessageCursor() = default;
    MessageCursor(const MessageView &view, const BlockLayout &layout)
        : view_(view), block_bytes_(layout.block_bytes()) {
        skip_gaps();
    }

    // The next carried block, or kEnd.
    std::uint64_t peek() const {
        if (pos_ >= view_.n) return kEnd;
        return view_.dense ? view_.first + pos_ : view_.first + view_.index[pos_];
    }

    // Calls fn(const BlockBatch&) for the carried blocks numbered below limit, then moves past them.
    template <class Fn>
    void take_until(std::uint64_t limit, Fn &&fn) {
        while (pos_ < view_.n && peek() < limit) {
            if (!view_.dense) {
                std::uint64_t j = pos_;
                while (j < view_.n && view_.first + view_.index[j] < limit)
                    ++j;
                fn(BlockBatch{view_.first, view_.index + pos_, view_.data + pos_ * block_bytes_,
                              static_cast<std::size_t>(j - pos_)});
                pos_ = j;
                return;
            }
            // Dense: a run of present blocks, cut at the limit.
            std::uint64_t j = pos_;
            const std::uint64_t stop = limit - view_.first < view_.n ? limit - view_.first : view_.n;
            while (j < stop && present(j))
                ++j;
            fn(BlockBatch{view_.first + pos_, nullptr, view_.data + pos_ * block_bytes_,
                          static_cast<std::size_t>(j - pos_)});
            pos_ = j;
            skip_gaps();
        }
    }

  private:
    bool present(std::uint64_t i) const {
        return view_.presence == nullptr || ((view_.presence[i >> 5] >> (i & 31)) & 1u);
    }
    void skip_gaps() {
        if (!view_.dense) return;
        while (pos_ < view_.n && !present(pos_))
            ++pos_;
    }

    MessageView view_{};
    std::size_t block_bytes_ = 0;
    std::uint64_t pos_ = 0;
};

}  // namespace mpix::sparse::detail
