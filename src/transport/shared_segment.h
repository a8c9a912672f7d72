// Payloads by reference between ranks of one machine. A sender writes a payload into its segment
// (or packs it there in the first place) and sends only where it is; the receiver reads it in place.
// Through UCX's shared-memory transports every large payload is copied once more by the kernel
// (a CMA rendezvous pins the sender's pages and copies them into the receiver's buffer), and a
// result sent to three workers is copied three times.
//
// A segment is a memfd sized to its largest size up front (sparse: pages cost memory only once
// written) and mapped whole, so memory handed out never moves. Peers open it through
// /proc/<pid>/fd/<fd> (the ptrace permission CMA needs too), map it read-only whole and close the
// descriptor. Segment memory is reused only after every peer has read it: the operation's closing
// barrier says so (Transport::recycle_shared). UCX never reads it (a by-reference message itself
// lives outside it), so unmapping it never races a send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mpix::sparse::detail {

// Payloads smaller than this travel through UCX: a reference saves nothing on them.
inline constexpr std::size_t kMinByReferenceBytes = 8192;
// The largest segment a peer maps (a reference may claim any size).
inline constexpr std::size_t kMaxPeerSegmentBytes = std::size_t{64} << 30;

// The payload of a by-reference message (WireHeader flag kByReference).
struct SegmentRef {
    std::uint64_t domain = 0;  // shared_memory_domain() of the sender
    std::int64_t pid = 0;
    std::int64_t fd = 0;
    std::uint64_t inode = 0;  // tells the segment from a later one that reuses the fd number
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

// Processes that can share segments have the same value: one kernel boot, one pid namespace (pids
// name the same processes) and one network namespace (a namespace is a separate node to MPI, and
// to the emulated cluster). 0 when unknown (never shared).
std::uint64_t shared_memory_domain();

class SharedSegment {
  public:
    // Bytes at the start of a segment from create() that are never handed out: words its owner
    // publishes to the peers that map it (Transport::published_words).
    static constexpr std::size_t kHeaderBytes = 4096;

    // A segment of at most max_bytes, or null where memfd or mmap are not available.
    static std::unique_ptr<SharedSegment> create(std::size_t max_bytes);
    // A segment of exactly `bytes` (rounded up to pages), all of it handed out: a user allocation
    // (MPIX_Sparse_alloc_mem). Null where segments are not available.
    static std::unique_ptr<SharedSegment> create_whole(std::size_t bytes);
    std::byte *base() const { return base_; }
    // The kHeaderBytes at base(), or null for a segment from create_whole().
    std::byte *header() const { return header_bytes_ != 0 ? base_ : nullptr; }
    ~SharedSegment();
    SharedSegment(const SharedSegment &) = delete;
    SharedSegment &operator=(const SharedSegment &) = delete;

    // `bytes` of segment memory, 64-byte aligned, or null when the segment is full.
    std::byte *allocate(std::size_t bytes);
    // Gives back what the most recent allocation, at p, did not use (nothing for an older one).
    void trim(const std::byte *p, std::size_t used);
    bool contains(const void *p, std::size_t bytes) const;
    // Where [p, p + bytes) of this segment is, for a peer (p null: the segment itself).
    SegmentRef ref(const void *p, std::size_t bytes) const;
    // Everything handed out may be overwritten: no peer reads it any more.
    void recycle() { used_ = header_bytes_; }
    // Gives the memory back to the system even while peers still map it (they read zeros then).
    void release_pages();

  private:
    SharedSegment() = default;
    static std::unique_ptr<SharedSegment> map_new(std::size_t bytes, const char *name);

    int fd_ = -1;
    std::byte *base_ = nullptr;
    std::size_t size_ = 0;
    std::size_t used_ = 0;
    std::size_t header_bytes_ = 0;  // the header, never handed out
    std::size_t last_ = 0;          // offset of the most recent allocation
    std::uint64_t inode_ = 0;
    std::uint64_t domain_ = 0;
    // The creator's pid, kept: ref() is called once per message sent by reference, and getpid() is a
    // system call (about 1.5% of the samples of a 2-rank loop at 50% density, kernel side included).
    std::int64_t pid_ = 0;
};

// The segments of peers, mapped read-only; each is kept for the communicator (context) that uses
// it, and only while that communicator is open here.
class PeerSegments {
  public:
    PeerSegments() = default;
    ~PeerSegments();
    PeerSegments(const PeerSegments &) = delete;
    PeerSegments &operator=(const PeerSegments &) = delete;

    // References for `context` are resolved from now on (its communicator's links exist).
    void open_context(std::uint32_t context);
    // Where ref's bytes are in this process, or null when its context is not open, its segment
    // cannot be opened here or the range lies outside it (never trusted: checked against the
    // segment's real size).
    const std::byte *resolve(const SegmentRef &ref, std::uint32_t context);
    // Unmaps the segments used by `context` and resolves no more for it (its communicator is freed).
    void forget(std::uint32_t context);
    // Unmaps the mappings of `context` found stale (their owner closed them): called where no
    // operation of the context reads anything any more (its closing barrier passed).
    void release_stale(std::uint32_t context);
    // Segments mapped now, stale ones included (tests).
    std::size_t mapped() const { return maps_.size() + stale_.size(); }

    struct Mapping {
        std::int64_t pid = 0, fd = 0;
        std::uint64_t inode = 0;
        std::uint32_t context = 0;
        const std::byte *base = nullptr;
        std::size_t size = 0;
    };

  private:
    const Mapping *open(const SegmentRef &ref, std::uint32_t context);

    std::vector<std::uint32_t> contexts_;
    std::vector<Mapping> maps_;
    // Mappings whose (pid, fd) came back with another inode: not unmapped at once, since a failed or
    // abandoned operation may still hold messages that point into them.
    std::vector<Mapping> stale_;
};

}  // namespace mpix::sparse::detail
