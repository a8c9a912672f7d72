// Fuzz target: everything a receiver does with bytes from a peer. The input is
//   [8 bytes: the receiver's own parameters][96 bytes: a WireHeader][payload]
// The receiver's vector (count, block size, element type and op) comes from the first bytes, so
// the fuzzer explores messages that disagree with it. The header goes through check_header and the
// payload through check_payload, as the roles do; an accepted message is then walked by the message
// cursor, reduced into an accumulator window by window (the aggregator's intake) and written by
// every result sink (dense, dense writing zeros, collecting, staged for device outputs). Another flag
// bit puts the payload where its sender can still write it: its block numbers are checked in a copy,
// as the roles do, and every payload byte is then rewritten before it is used. In the other mode (a
// flag bit) the payload is taken as allgather records of 1-4 ranks and reduced.
// Everything must either be rejected (MPIX_ERR_SPARSE_PROTOCOL: an Error or a check's message) or
// processed without reading or writing outside its buffers (ASan/UBSan builds).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "algo/allgather_allreduce.h"
#include "algo/device_staging.h"
#include "algo/message_cursor.h"
#include "algo/result_sink.h"
#include "algo/stream_resources.h"
#include "algo/window_reducer.h"
#include "core/device_backends.h"
#include "core/element_type.h"
#include "core/error.h"
#include "core/reduce_kernels.h"
#include "transport/wire_format.h"

using namespace mpix::sparse::detail;

namespace {

struct Receiver {
    BlockLayout layout;
    ElementType type;
    ReduceOp op;
    bool records;  // the payload is allgather records
    int ranks;
    bool rewritten;  // the sender rewrites the payload after the receiver checked it
};

Receiver receiver_of(const std::uint8_t *p) {
    Receiver r;
    const std::uint32_t raw = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                              static_cast<std::uint32_t>(p[2] & 0x3f) << 16;
    const std::uint32_t block = 1 + (static_cast<std::uint32_t>(p[3]) | static_cast<std::uint32_t>(p[4] & 3) << 8);
    r.type = static_cast<ElementType>(p[5] % static_cast<unsigned>(ElementType::Count_));
    r.op = static_cast<ReduceOp>(p[6] % static_cast<unsigned>(ReduceOp::Count_));
    if (!is_sparse_capable(r.type, r.op)) r.op = ReduceOp::Sum;
    if (!is_sparse_capable(r.type, r.op)) r.type = ElementType::F32;
    r.layout = BlockLayout{raw % 65536 + 1, block, static_cast<std::uint32_t>(element_size(r.type))};
    r.records = (p[7] & 1) != 0;
    r.ranks = 1 + ((p[7] >> 1) & 3);
    r.rewritten = (p[7] & 8) != 0;
    return r;
}

// The payload in a buffer of exactly its size (8-aligned, as receivers guarantee), so that ASan
// sees any read past its end.
std::unique_ptr<std::byte[]> exact_copy(const std::uint8_t *p, std::size_t n) {
    std::unique_ptr<std::byte[]> b(new std::byte[n == 0 ? 1 : n]);
    if (n > 0) std::memcpy(b.get(), p, n);
    return b;
}

void feed_message(const Receiver &r, const WireHeader &h, std::byte *payload, std::size_t bytes) {
    MessageView view;
    std::vector<std::uint32_t> index_copy(r.rewritten ? packed_index_bytes(h, bytes) / sizeof(std::uint32_t) : 0);
    if (check_payload(h, r.layout, payload, bytes, &view, index_copy.empty() ? nullptr : index_copy.data()) != nullptr)
        return;  // rejected
    if (r.rewritten)
        for (std::size_t i = 0; i < bytes; ++i)
            payload[i] = ~payload[i];
    const std::size_t total = r.layout.total_bytes();
    // The aggregator's intake: batches of the message reduced window by window.
    StreamResources resources;
    const ReduceKernels &kernels = kernels_for(r.type, r.op);
    const std::uint64_t span = window_blocks(r.layout, 1);
    WindowReducer reducer(r.layout, kernels, resources, span);
    std::vector<std::byte> acc(static_cast<std::size_t>(span) * r.layout.block_bytes());
    MessageCursor cursor(view, r.layout);
    for (std::uint64_t base = view.cover_begin; base < view.cover_end && cursor.peek() != MessageCursor::kEnd;) {
        const std::uint64_t end = std::min(view.cover_end, base + span);
        reducer.begin(base, end - base, acc.data());
        cursor.take_until(end, [&](const BlockBatch &b) { reducer.add(b); });
        reducer.finish(2);
        base = end;
    }
    // Every sink.
    std::vector<std::byte> out(total);
    DenseResultSink present(out.data(), r.layout);
    present.write(view);
    DenseResultSink zeros(out.data(), r.layout, DenseResultSink::Zeros::Written);
    zeros.write(view);
    if (r.layout.block_elems == 1) {
        CollectingResultSink collecting(r.layout);
        collecting.write(view);
        std::vector<std::int64_t> indices;
        std::vector<std::byte> values;
        collecting.finish(indices, values);
    }
    static const auto device = make_emulated_device_memory();
    DeviceStaging staging;
    StagedResultSink staged(*device, staging, r.layout);
    try {
        staged.write(view);
        staged.write(view);  // the same blocks again: a protocol violation
    } catch (const Error &) {
    }
    auto *dev = static_cast<std::byte *>(device->allocate_device(total));
    staged.finish(dev);
    device->free_device(dev);
}

void feed_records(const Receiver &r, const std::byte *payload, std::size_t bytes) {
    const std::uint64_t max_blocks = 1 + bytes % 7;
    const auto record = static_cast<std::size_t>(allgather_record_bytes(r.layout, max_blocks));
    if (record == 0 || bytes < record * static_cast<std::size_t>(r.ranks)) return;
    StreamResources resources;
    std::vector<std::byte> out(r.layout.total_bytes());
    DenseResultSink sink(out.data(), r.layout);
    try {
        reduce_gathered(payload, r.ranks, record, r.layout, r.type, r.op, max_blocks, resources, sink);
    } catch (const Error &) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 8 + sizeof(WireHeader)) return 0;
    const Receiver r = receiver_of(data);
    WireHeader h;
    std::memcpy(&h, data + 8, sizeof h);
    const std::size_t bytes = size - 8 - sizeof h;
    auto payload = exact_copy(data + 8 + sizeof h, bytes);
    if (r.records) {
        feed_records(r, payload.get(), bytes);
        return 0;
    }
    if (check_header(h, sizeof h) != nullptr) return 0;  // rejected
    feed_message(r, h, payload.get(), bytes);
    return 0;
}
