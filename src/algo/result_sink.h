// Where a worker's result goes: a dense output buffer (zeros everywhere no rank had data), or a
// collector of the union's (index, value) pairs for the element variant's sparse output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/block_layout.h"
#include "transport/wire_format.h"

namespace mpix::sparse::detail {

class ResultSink {
  public:
    virtual ~ResultSink() = default;
    // The output memory of blocks [first, first + n) when a result may be fetched straight into it
    // (write() then finds its data there), else null.
    virtual std::byte *in_place(std::uint64_t first, std::uint64_t n) = 0;
    // Whether blocks outside the union are zero bytes in the output before any result is written, so
    // that an aggregator may reduce into the output (in_place) and send runs with their gaps from it.
    virtual bool zeros_present() const { return false; }
    // The output memory of blocks [first, first + n) for a writer that overwrites all of it, zeros
    // included, when the output is a dense host vector (then a dense view may also carry zeros for
    // blocks outside the union); else null.
    virtual std::byte *overwrite(std::uint64_t, std::uint64_t) { return nullptr; }
    // Stores the blocks a result message carries. For a dense output, gap blocks of a dense run are
    // zero bytes and may be copied with the run.
    virtual void write(const MessageView &view) = 0;
};

class DenseResultSink final : public ResultSink {
  public:
    // Zeros: already in the output where no result lands (MPI_IN_PLACE, where this rank's zero
    // blocks are zero already), or written by the sink itself as the messages covering each range
    // arrive, so that every output byte is written once (zeros first and results over them would
    // write the union twice; results are then never reduced into the output in place).
    enum class Zeros { Present, Written };
    DenseResultSink(std::byte *out, const BlockLayout &layout, Zeros zeros = Zeros::Present)
        : out_(out), layout_(layout), write_zeros_(zeros == Zeros::Written) {}
    std::byte *in_place(std::uint64_t first, std::uint64_t) override { return out_ + layout_.offset_of(first); }
    bool zeros_present() const override { return !write_zeros_; }
    std::byte *overwrite(std::uint64_t first, std::uint64_t) override { return out_ + layout_.offset_of(first); }
    void write(const MessageView &view) override;

  private:
    void zero(std::uint64_t first, std::uint64_t end);  // blocks [first, end)

    std::byte *out_;
    BlockLayout layout_;
    bool write_zeros_;
};

// Collects (index, value) pairs of a block-size-1 layout. Results arrive per shard and message in
// any order; finish() sorts the pieces by index.
class CollectingResultSink final : public ResultSink {
  public:
    explicit CollectingResultSink(const BlockLayout &layout) : layout_(layout) {}
    std::byte *in_place(std::uint64_t, std::uint64_t) override { return nullptr; }
    void write(const MessageView &view) override;

    // Moves the union out, sorted by index.
    void finish(std::vector<std::int64_t> &indices, std::vector<std::byte> &values);

  private:
    struct Piece {
        std::uint64_t first_index;
        std::size_t offset;  // in indices_
        std::size_t n;
    };
    BlockLayout layout_;
    std::vector<Piece> pieces_;
    std::vector<std::int64_t> indices_;
    std::vector<std::byte> values_;
};

}  // namespace mpix::sparse::detail
