// The device boundary (core/device_memory.h) against the host implementation: scan, compaction,
// write-back and whole-buffer copies, over random and adversarial data (partial last blocks, NaN,
// -0.0, block sizes from 1 to 1M elements, unaligned addresses). Each case runs on the emulated
// backend everywhere and on CUDA where a GPU is present (else SKIPPED). The packed contribution
// source and the staged result sink, the host side of the boundary, are checked here too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "algo/contribution_source.h"
#include "algo/device_staging.h"
#include "algo/message_cursor.h"
#include "algo/result_sink.h"
#include "core/block_scan.h"
#include "core/device_backends.h"
#include "core/env_switch.h"
#include "core/error.h"

namespace mpix::sparse::detail {
namespace {

std::unique_ptr<DeviceMemory> make_backend(const std::string &name) {
    return name == "cuda" ? make_cuda_device_memory() : make_emulated_device_memory();
}

// A host vector of `count` elements of elem_size bytes with a share `density` of non-zero blocks.
// Non-zero blocks hold random bytes with one adversarial value at a random place (NaN, -0.0 or a
// single set bit): each makes its block non-zero under the all-bytes-zero rule.
std::vector<std::byte> make_input(const BlockLayout &layout, double density, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::byte> v(layout.total_bytes(), std::byte{0});
    std::uniform_real_distribution<> coin(0, 1);
    for (std::uint64_t k = 0; k < layout.num_blocks(); ++k) {
        if (coin(rng) >= density) continue;
        std::byte *b = v.data() + layout.offset_of(k);
        const std::size_t bytes = layout.bytes_of(k);
        const std::size_t at = std::uniform_int_distribution<std::size_t>(0, bytes - 1)(rng);
        switch (rng() % 4) {
        case 0:
            for (std::size_t i = 0; i < bytes; ++i)
                b[i] = static_cast<std::byte>(rng());
            break;
        case 1:
            if (layout.elem_size == 4 && at + 4 <= bytes) {
                const float nan = std::numeric_limits<float>::quiet_NaN();
                std::memcpy(b + at / 4 * 4, &nan, 4);
                break;
            }
            [[fallthrough]];
        case 2:
            if (layout.elem_size == 8 && at + 8 <= bytes) {
                const double neg_zero = -0.0;
                std::memcpy(b + at / 8 * 8, &neg_zero, 8);
                break;
            }
            [[fallthrough]];
        default: b[at] = std::byte{0x10}; break;
        }
    }
    return v;
}

struct Case {
    std::uint64_t count;
    std::uint32_t block_elems;
    std::uint32_t elem_size;
    double density;
    std::size_t misalign;  // bytes added to the device address (a multiple of elem_size)
};

std::string name_of(const Case &c) {
    return std::to_string(c.count) + "x" + std::to_string(c.elem_size) + "B_block" + std::to_string(c.block_elems) +
           "_d" + std::to_string(c.density) + "_off" + std::to_string(c.misalign);
}

std::vector<Case> cases() {
    std::vector<Case> out;
    for (std::uint32_t block : {1u, 3u, 16u, 256u, 1000u, 4096u, 65536u, 1u << 20})
        for (double density : {0.0, 0.01, 0.3, 1.0}) {
            out.push_back({100003, block, 4, density, 0});  // partial last block for most sizes
            out.push_back({(std::uint64_t{1} << 18) + 7, block, 8, density, 8});
        }
    out.push_back({1, 1, 1, 1.0, 3});
    out.push_back({12345, 7, 2, 0.5, 2});
    out.push_back({1u << 21, 256, 4, 0.001, 4});
    return out;
}

class DeviceBoundary : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        device_ = make_backend(GetParam());
        if (!device_) GTEST_SKIP() << "no " << GetParam() << " device on this machine";
    }

    // A device copy of host bytes at `misalign` bytes past an aligned allocation.
    std::byte *to_device(const std::vector<std::byte> &host, std::size_t misalign) {
        auto *base = static_cast<std::byte *>(device_->allocate_device(host.size() + misalign));
        allocations_.push_back(base);
        device_->upload(host.data(), host.size(), base + misalign);
        return base + misalign;
    }
    std::vector<std::byte> to_host(const std::byte *dev, std::size_t bytes) {
        std::vector<std::byte> host(bytes);
        device_->download(dev, bytes, host.data());
        return host;
    }
    void TearDown() override {
        for (void *p : allocations_)
            device_->free_device(p);
    }

    std::unique_ptr<DeviceMemory> device_;
    std::vector<void *> allocations_;
};

TEST_P(DeviceBoundary, ScanCompactAndWriteBackMatchTheHost) {
    unsigned seed = 1;
    for (const Case &c : cases()) {
        SCOPED_TRACE(name_of(c));
        const BlockLayout layout{c.count, c.block_elems, c.elem_size};
        const std::vector<std::byte> input = make_input(layout, c.density, seed++);
        // Host reference.
        BlockBitmap expected;
        expected.reset(layout.num_blocks());
        const std::uint64_t expected_n = scan_blocks(input.data(), layout, expected);
        // Scan on the device.
        const std::byte *dev = to_device(input, c.misalign);
        BlockBitmap bitmap;
        bitmap.reset(layout.num_blocks());
        ASSERT_EQ(device_->scan(dev, layout, bitmap), expected_n);
        for (std::uint64_t k = 0; k < layout.num_blocks(); ++k)
            ASSERT_EQ(bitmap.test(k), expected.test(k)) << "block " << k;
        // Compaction: the non-zero blocks back to back, in order.
        std::vector<std::byte> packed(static_cast<std::size_t>(expected_n) * layout.block_bytes() + 1, std::byte{0xee});
        device_->download_blocks(dev, layout, bitmap, expected_n, packed.data());
        std::size_t at = 0;
        for (std::uint64_t k = bitmap.next_set(0, layout.num_blocks()); k < layout.num_blocks();
             k = bitmap.next_set(k + 1, layout.num_blocks())) {
            ASSERT_EQ(std::memcmp(packed.data() + at, input.data() + layout.offset_of(k), layout.bytes_of(k)), 0)
                << "block " << k;
            at += layout.block_bytes();
        }
        // Write-back into a dirty device vector: the listed blocks in reverse order, zeros elsewhere.
        std::vector<std::uint64_t> list;
        for (std::uint64_t k = bitmap.next_set(0, layout.num_blocks()); k < layout.num_blocks();
             k = bitmap.next_set(k + 1, layout.num_blocks()))
            list.push_back(k);
        std::reverse(list.begin(), list.end());
        std::vector<std::byte> reversed(packed.size());
        for (std::size_t i = 0; i < list.size(); ++i)
            std::memcpy(reversed.data() + i * layout.block_bytes(),
                        packed.data() + (list.size() - 1 - i) * layout.block_bytes(), layout.block_bytes());
        std::byte *out = to_device(std::vector<std::byte>(input.size(), std::byte{0x5a}), c.misalign);
        device_->write_blocks(out, layout, reversed.data(), list.data(), list.size(), bitmap);
        ASSERT_EQ(to_host(out, input.size()), input);
    }
}

TEST_P(DeviceBoundary, WritesOnlyInsideTheVector) {
    const BlockLayout layout{1000, 64, 4};  // partial last block: 40 elements
    const std::vector<std::byte> guard(layout.total_bytes() + 256, std::byte{0x77});
    std::byte *dev = to_device(guard, 0);
    BlockBitmap none;
    none.reset(layout.num_blocks());
    device_->write_blocks(dev, layout, nullptr, nullptr, 0, none);
    const std::vector<std::byte> after = to_host(dev, guard.size());
    for (std::size_t i = 0; i < layout.total_bytes(); ++i)
        ASSERT_EQ(after[i], std::byte{0}) << i;
    for (std::size_t i = layout.total_bytes(); i < guard.size(); ++i)
        ASSERT_EQ(after[i], std::byte{0x77}) << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceBoundary, ::testing::Values("emulated", "cuda"),
                         [](const ::testing::TestParamInfo<std::string> &backend) { return backend.param; });

// 4 GiB and more of device memory: CUDA only (the host path's large counts: mpi_large_count_np2).
class CudaBoundary : public DeviceBoundary {};
TEST_P(CudaBoundary, CountsBeyond32Bits) {
    const BlockLayout layout{(std::uint64_t{1} << 32) + 1000, 1u << 16, 1};
    std::byte *dev = nullptr;
    try {
        dev = static_cast<std::byte *>(device_->allocate_device(layout.total_bytes()));
    } catch (const std::exception &e) {
        GTEST_SKIP() << "cannot allocate " << layout.total_bytes() << " bytes: " << e.what();
    }
    allocations_.push_back(dev);
    BlockBitmap none;
    none.reset(layout.num_blocks());
    device_->write_blocks(dev, layout, nullptr, nullptr, 0, none);  // zero it all
    const std::byte one{1};
    const std::uint64_t far = layout.count - 3;  // in the partial last block, past 2^32
    device_->upload(&one, 1, dev + far);
    BlockBitmap bitmap;
    bitmap.reset(layout.num_blocks());
    ASSERT_EQ(device_->scan(dev, layout, bitmap), 1u);
    EXPECT_TRUE(bitmap.test(layout.num_blocks() - 1));
    std::vector<std::byte> packed(layout.block_bytes());
    device_->download_blocks(dev, layout, bitmap, 1, packed.data());
    EXPECT_EQ(packed[far - layout.offset_of(layout.num_blocks() - 1)], one);
}

INSTANTIATE_TEST_SUITE_P(Backends, CudaBoundary, ::testing::Values("cuda"),
                         [](const ::testing::TestParamInfo<std::string> &backend) { return backend.param; });

// Whether a buffer can be device memory, which lets the API skip classifying each buffer. ctest runs
// each case in a process of its own, so no driver is loaded here until the CUDA backend loads one.
TEST(DeviceMemoryPossible, NotBeforeADriverIsLoaded) {
    if (env_is("MPIX_SPARSE_TEST_DEVICE", "emulated")) GTEST_SKIP() << "device memory is emulated";
    if (probe_driver_loaded()) GTEST_SKIP() << "this process loaded a CUDA driver already";
    std::vector<float> host(16);
    EXPECT_FALSE(device_memory_possible());
    EXPECT_EQ(classify_memory(host.data()), MemoryKind::Host);
}

// Once the CUDA backend is up, device memory must be possible and recognised (a wrong "no" would
// hand device memory to the CPU as host memory).
TEST(DeviceMemoryPossible, OnceTheCudaBackendIsUp) {
    std::unique_ptr<DeviceMemory> cuda = make_cuda_device_memory();
    if (!cuda) GTEST_SKIP() << "no cuda device on this machine";
    EXPECT_TRUE(device_memory_possible());
    std::vector<float> host(16);
    void *device = cuda->allocate_device(64);
    EXPECT_EQ(classify_memory(device), MemoryKind::Device);
    EXPECT_EQ(classify_memory(host.data()), MemoryKind::Host);
    cuda->free_device(device);
}

// The packed source serves the same messages as the dense one over the same data.
TEST(PackedSource, SameMessagesAsTheDenseSource) {
    const BlockLayout layout{5000, 7, 4};  // 715 blocks, the last partial
    for (double density : {0.02, 0.5, 0.95}) {
        const std::vector<std::byte> input = make_input(layout, density, 42);
        BlockBitmap bitmap;
        bitmap.reset(layout.num_blocks());
        const std::uint64_t n = scan_blocks(input.data(), layout, bitmap);
        std::vector<std::byte> packed(static_cast<std::size_t>(n) * layout.block_bytes());
        auto device = make_emulated_device_memory();
        device->download_blocks(input.data(), layout, bitmap, n, packed.data());
        std::vector<std::uint64_t> ranks;
        rank_words(bitmap, ranks);
        const BitmapSource dense(input.data(), layout, bitmap);
        const BitmapSource staged(packed.data(), layout, bitmap, ranks.data());
        for (std::uint64_t max_blocks : {1u, 5u, 64u, 1000u}) {
            std::uint64_t from = 0;
            const std::uint64_t limit = layout.num_blocks();
            std::vector<std::uint32_t> ia(max_blocks), ib(max_blocks);
            std::vector<std::byte> pa(max_packed_bytes(max_blocks, layout.block_bytes()) + 64), pb(pa.size());
            while (from < limit) {
                const MessagePlan a = dense.plan(from, limit, max_blocks, ia.data(), false);
                const MessagePlan b = staged.plan(from, limit, max_blocks, ib.data(), false);
                ASSERT_EQ(a.end, b.end);
                ASSERT_EQ(a.n, b.n);
                ASSERT_EQ(a.dense, b.dense);
                if (a.n > 0) {
                    const std::size_t la = dense.pack(a, from, ia.data(), pa.data());
                    const std::size_t lb = staged.pack(b, from, ib.data(), pb.data());
                    ASSERT_EQ(la, lb);
                    ASSERT_EQ(std::memcmp(pa.data(), pb.data(), la), 0) << "from " << from;
                    // A gap-free dense run is sent from where it lies (callers ask for dense plans only).
                    const std::byte *ra = a.dense ? dense.dense_run(a) : nullptr;
                    const std::byte *rb = b.dense ? staged.dense_run(b) : nullptr;
                    ASSERT_EQ(ra == nullptr, rb == nullptr);
                    if (ra != nullptr) {
                        ASSERT_EQ(std::memcmp(ra, rb, layout.run_bytes(a.first, a.span())), 0);
                    }
                }
                from = a.end;
            }
            // visit: the same blocks with the same bytes.
            std::vector<std::byte> va, vb;
            auto collect = [&](std::vector<std::byte> &to) {
                return [&](const BlockBatch &batch) {
                    for (std::size_t i = 0; i < batch.n; ++i) {
                        const std::byte *p = batch.data + i * layout.block_bytes();
                        to.insert(to.end(), p, p + layout.bytes_of(batch.block(i)));
                    }
                };
            };
            dense.visit(0, limit, collect(va));
            staged.visit(0, limit, collect(vb));
            ASSERT_EQ(va, vb);
        }
    }
}

// The staged sink writes what the dense sink writes, whatever order the messages come in, and
// refuses a block delivered twice.
TEST(StagedResultSink, MatchesTheDenseSinkAndRejectsDuplicates) {
    const BlockLayout layout{3001, 10, 4};
    const std::vector<std::byte> result = make_input(layout, 0.3, 7);
    BlockBitmap bitmap;
    bitmap.reset(layout.num_blocks());
    const std::uint64_t n = scan_blocks(result.data(), layout, bitmap);
    const BitmapSource source(result.data(), layout, bitmap);
    // Cut the result into messages of at most 9 blocks, then deliver them last first.
    struct Message {
        std::vector<std::byte> payload;
        WireHeader header;
    };
    std::vector<Message> messages;
    std::vector<std::uint32_t> index(9);
    for (std::uint64_t from = 0; from < layout.num_blocks();) {
        const MessagePlan p = source.plan(from, layout.num_blocks(), 9, index.data(), false);
        Message m;
        m.payload.resize(max_packed_bytes(9, layout.block_bytes()) + 64);
        m.header.count = layout.count;
        m.header.block_elems = layout.block_elems;
        m.header.begin = from;
        m.header.end = p.end;
        m.header.nblocks = static_cast<std::uint32_t>(p.dense ? p.span() : p.n);
        m.header.first = p.first;
        m.header.flags = static_cast<std::uint8_t>((p.dense ? kDenseRun : 0) | (p.presence ? kPresence : 0));
        if (p.n > 0)
            m.payload.resize(source.pack(p, from, index.data(), m.payload.data()));
        else
            m.payload.clear();
        messages.push_back(std::move(m));
        from = p.end;
    }
    auto device = make_emulated_device_memory();
    DeviceStaging staging;
    StagedResultSink sink(*device, staging, layout);
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
        MessageView view;
        ASSERT_EQ(check_payload(it->header, layout, it->payload.data(), it->payload.size(), &view), nullptr);
        sink.write(view);
    }
    EXPECT_EQ(staging.result_blocks.size(), n);
    auto *out = static_cast<std::byte *>(device->allocate_device(result.size()));
    std::memset(out, 0x33, result.size());
    sink.finish(out);
    EXPECT_EQ(std::memcmp(out, result.data(), result.size()), 0);
    device->free_device(out);
    // The first message again: its blocks are there already.
    for (const Message &m : messages) {
        MessageView view;
        ASSERT_EQ(check_payload(m.header, layout, m.payload.data(), m.payload.size(), &view), nullptr);
        if (view.n == 0) continue;
        EXPECT_THROW(sink.write(view), Error);
        break;
    }
}

}  // namespace
}  // namespace mpix::sparse::detail
