#include "algo/node_broadcast.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "core/block_scan.h"
#include "core/error.h"
#include "core/index_checks.h"
#include "core/memory_ops.h"
#include "transport/wire_format.h"

namespace mpix::sparse::detail {
namespace {

// Blocks go packed only while the packed form (data + a uint32 number each) is under this share of
// the buffer: above it the traffic saved is small next to the extra pack and unpack passes.
constexpr double kPackedShare = 0.5;
constexpr std::uint64_t kDenseMarker = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kFailedMarker = kDenseMarker - 1;

}  // namespace

NodeBroadcast::NodeBroadcast(MPI_Comm comm, void *buf, const BlockLayout &layout, MPI_Datatype datatype,
                             BufferPool &pool, BlockBitmap &bitmap, DeviceMemory *device, DeviceStaging &staging)
    : comm_(comm), buf_(static_cast<std::byte *>(buf)), layout_(layout), datatype_(datatype), pool_(pool),
      bitmap_(bitmap), device_(device), staging_(staging) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    leader_ = rank == 0;
}

NodeBroadcast::~NodeBroadcast() {
    pool_.release(std::move(packed_));
}

// A device copy that fails leaves this rank's result unusable; the broadcast itself goes on (its peers
// are in it), and the error is this rank's.
template <class Copy>
void NodeBroadcast::device_copy(Copy copy) {
    try {
        copy();
    } catch (const Error &e) {
        if (!error_) error_ = OpError{e.id(), e.detail()};
    }
}

void NodeBroadcast::start(bool dense, bool failed) {
    // The leader finds the result's non-zero blocks and tells the node how many (or that the whole
    // buffer follows, or that it failed).
    const std::uint64_t blocks = layout_.num_blocks();
    n_ = kDenseMarker;
    if (leader_ && failed) {
        n_ = kFailedMarker;
    } else if (leader_ && !dense && blocks <= std::numeric_limits<std::uint32_t>::max()) {
        bitmap_.reset(blocks);
        if (device_ != nullptr)
            device_copy([&] { n_ = device_->scan(buf_, layout_, bitmap_); });
        else
            n_ = scan_blocks(buf_, layout_, bitmap_);
        if (error_)
            n_ = kFailedMarker;  // the scan failed: the node fails with its leader instead of waiting
        else if (static_cast<double>(n_) * static_cast<double>(layout_.block_bytes() + sizeof(std::uint32_t)) >=
                 kPackedShare * static_cast<double>(layout_.total_bytes()))
            n_ = kDenseMarker;
    }
    MPI_Request r = MPI_REQUEST_NULL;
    mpi_.add(MPI_Ibcast(&n_, 1, MPI_UINT64_T, 0, comm_, &r), r, "MPI_Ibcast");
    stage_ = Stage::Header;
}

void NodeBroadcast::start_payload() {
    if (n_ == kFailedMarker) {
        if (!leader_) error_ = OpError{ErrorId::RemoteFailure, "the node leader failed"};
        stage_ = Stage::Done;
        return;
    }
    if (n_ == kDenseMarker) {
        mpi_.ibcast(dense_host(), layout_.count, datatype_, comm_);
        bytes_ = layout_.total_bytes();
        stage_ = Stage::Payload;
        return;
    }
    const std::uint64_t blocks = layout_.num_blocks();
    if (n_ > blocks) {
        // Every non-leader rejects the same header, so none of them waits for a payload.
        error_ = OpError{ErrorId::ProtocolViolation, "node broadcast announces more blocks than the vector has"};
        stage_ = Stage::Done;
        return;
    }
    // Packed: the blocks back to back (the vector's final block may be partial), then their numbers.
    const std::size_t block_bytes = layout_.block_bytes();
    const std::size_t data_bytes = static_cast<std::size_t>(n_) * block_bytes;
    const std::size_t index_at = word_aligned(data_bytes);
    const std::size_t total = index_at + static_cast<std::size_t>(n_) * sizeof(std::uint32_t);
    packed_ = pool_.acquire(std::max<std::size_t>(total, 1));
    auto *index = reinterpret_cast<std::uint32_t *>(packed_.data() + index_at);
    if (leader_ && n_ > 0) {
        std::uint64_t k = 0;
        for (std::uint64_t b = bitmap_.next_set(0, blocks); b < blocks; b = bitmap_.next_set(b + 1, blocks))
            index[k++] = static_cast<std::uint32_t>(b);
        const std::size_t last_bytes = layout_.bytes_of(index[n_ - 1]);
        if (device_ != nullptr)
            device_copy([&] { device_->download_blocks(buf_, layout_, bitmap_, n_, packed_.data()); });
        else
            gather_blocks(packed_.data(), buf_, index, static_cast<std::size_t>(n_), 0, block_bytes, last_bytes);
        std::memset(packed_.data() + data_bytes - block_bytes + last_bytes, 0,
                    index_at - data_bytes + block_bytes - last_bytes);
    }
    mpi_.ibcast(packed_.data(), total, MPI_BYTE, comm_);
    bytes_ = total;
    stage_ = Stage::Payload;
}

std::byte *NodeBroadcast::dense_host() {
    if (device_ == nullptr) return buf_;
    std::byte *host = staging_.output.reserve(*device_, layout_.total_bytes());
    if (leader_) device_copy([&] { device_->download(buf_, layout_.total_bytes(), host); });
    return host;
}

void NodeBroadcast::finish_payload() {
    stage_ = Stage::Done;
    if (leader_) return;
    if (n_ == kDenseMarker) {
        if (device_ != nullptr)
            device_copy([&] { device_->upload(staging_.output.data(), layout_.total_bytes(), buf_); });
        return;
    }
    const std::uint64_t blocks = layout_.num_blocks();
    const std::size_t index_at = word_aligned(static_cast<std::size_t>(n_) * layout_.block_bytes());
    const auto *index = reinterpret_cast<const std::uint32_t *>(packed_.data() + index_at);
    if (!ascending_below(index, static_cast<std::size_t>(n_), blocks)) {
        error_ = OpError{ErrorId::ProtocolViolation, "node broadcast with bad block numbers"};
        return;
    }
    if (device_ != nullptr) {
        std::vector<std::uint64_t> &list = staging_.result_blocks;
        list.assign(index, index + n_);
        staging_.result_present.reset(blocks);
        for (std::uint64_t k : list)
            staging_.result_present.set(k);
        device_copy(
            [&] { device_->write_blocks(buf_, layout_, packed_.data(), list.data(), n_, staging_.result_present); });
        return;
    }
    write_covered(buf_, 0, layout_.total_bytes(), packed_.data(), index, static_cast<std::size_t>(n_),
                  layout_.block_bytes(), layout_.total_bytes() >= kStreamingFillBytes);
    store_fence();
}

bool NodeBroadcast::progress() {
    if (stage_ == Stage::Idle || stage_ == Stage::Done || !mpi_.test()) return false;
    if (stage_ == Stage::Header)
        start_payload();
    else
        finish_payload();
    return true;
}

}  // namespace mpix::sparse::detail
