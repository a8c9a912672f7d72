#include "transport/shared_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "core/fnv1a.h"

namespace mpix::sparse::detail {
namespace {

constexpr std::size_t kAlign = 64;
constexpr std::size_t kSmallest = std::size_t{1} << 20;
// At most this many segments are mapped (malformed references cannot pile up mappings). Each
// MPIX_Sparse_alloc_mem allocation a peer sends from is one per communicator; the kernel's default
// vm.max_map_count (65530) bounds all mappings of a process.
constexpr std::size_t kMaxPeerSegments = 16384;

std::size_t page_size() {
    static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return page;
}

std::size_t round_up(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
}

std::uint64_t namespace_inode(const char *path) {
    struct stat s {};
    return stat(path, &s) == 0 ? static_cast<std::uint64_t>(s.st_ino) : 0;
}

}  // namespace

std::uint64_t shared_memory_domain() {
    static const std::uint64_t domain = [] {
        std::ifstream boot("/proc/sys/kernel/random/boot_id");
        std::string key;
        const std::uint64_t pid_ns = namespace_inode("/proc/self/ns/pid");
        const std::uint64_t net_ns = namespace_inode("/proc/self/ns/net");
        if (!std::getline(boot, key) || pid_ns == 0 || net_ns == 0) return std::uint64_t{0};
        key += "/" + std::to_string(pid_ns) + "/" + std::to_string(net_ns);
        Fnv1a h;
        h.add(key);
        return h.value() == 0 ? std::uint64_t{1} : h.value();
    }();
    return domain;
}

std::unique_ptr<SharedSegment> SharedSegment::create(std::size_t max_bytes) {
    if (max_bytes < kSmallest) return nullptr;
    std::unique_ptr<SharedSegment> s = map_new(max_bytes, "mpix_sparse");
    if (s) s->used_ = s->header_bytes_ = kHeaderBytes;
    return s;
}

std::unique_ptr<SharedSegment> SharedSegment::create_whole(std::size_t bytes) {
    if (bytes > kMaxPeerSegmentBytes) return nullptr;  // no peer would map it
    std::unique_ptr<SharedSegment> s = map_new(std::max(bytes, std::size_t{1}), "mpix_sparse_user");
    if (s) s->used_ = s->size_;
    return s;
}

std::unique_ptr<SharedSegment> SharedSegment::map_new(std::size_t bytes, const char *name) {
    const std::uint64_t domain = shared_memory_domain();
    if (domain == 0) return nullptr;
    std::unique_ptr<SharedSegment> s(new SharedSegment);
    s->domain_ = domain;
    s->pid_ = static_cast<std::int64_t>(getpid());
    s->size_ = round_up(bytes, page_size());
    s->fd_ = memfd_create(name, MFD_CLOEXEC);
    if (s->fd_ < 0) return nullptr;
    struct stat st {};
    // Sized once, sparse: a page costs memory only once written.
    if (fstat(s->fd_, &st) != 0 || ftruncate(s->fd_, static_cast<off_t>(s->size_)) != 0) return nullptr;
    s->inode_ = static_cast<std::uint64_t>(st.st_ino);
    void *p = mmap(nullptr, s->size_, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd_, 0);
    if (p == MAP_FAILED) return nullptr;
    s->base_ = static_cast<std::byte *>(p);
    return s;
}

SharedSegment::~SharedSegment() {
    if (base_ != nullptr) munmap(base_, size_);
    if (fd_ >= 0) close(fd_);
}

std::byte *SharedSegment::allocate(std::size_t bytes) {
    const std::size_t at = round_up(used_, kAlign);
    if (bytes > size_ || at > size_ - bytes) return nullptr;
    last_ = at;
    used_ = at + bytes;
    return base_ + at;
}

void SharedSegment::release_pages() {
    if (fd_ >= 0) fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(size_));
}

void SharedSegment::trim(const std::byte *p, std::size_t used) {
    if (p == base_ + last_ && last_ + used <= used_) used_ = last_ + used;
}

bool SharedSegment::contains(const void *p, std::size_t bytes) const {
    const auto *b = static_cast<const std::byte *>(p);
    return b >= base_ && b <= base_ + size_ && bytes <= static_cast<std::size_t>(base_ + size_ - b);
}

SegmentRef SharedSegment::ref(const void *p, std::size_t bytes) const {
    SegmentRef r;
    r.domain = domain_;
    r.pid = pid_;
    r.fd = fd_;
    r.inode = inode_;
    r.offset = p == nullptr ? 0 : static_cast<std::uint64_t>(static_cast<const std::byte *>(p) - base_);
    r.bytes = bytes;
    return r;
}

PeerSegments::~PeerSegments() {
    for (const auto *list : {&maps_, &stale_})
        for (const Mapping &m : *list)
            munmap(const_cast<std::byte *>(m.base), m.size);
}

void PeerSegments::open_context(std::uint32_t context) {
    if (std::find(contexts_.begin(), contexts_.end(), context) == contexts_.end()) contexts_.push_back(context);
}

const PeerSegments::Mapping *PeerSegments::open(const SegmentRef &ref, std::uint32_t context) {
    if (ref.domain != shared_memory_domain() ||
        std::find(contexts_.begin(), contexts_.end(), context) == contexts_.end())
        return nullptr;
    for (const Mapping &m : maps_)
        if (m.pid == ref.pid && m.fd == ref.fd && m.inode == ref.inode && m.context == context) return &m;
    if (ref.pid <= 0 || ref.fd < 0) return nullptr;
    const std::string path = "/proc/" + std::to_string(ref.pid) + "/fd/" + std::to_string(ref.fd);
    // Non-blocking: a malformed reference may name a pipe. Only a regular file with the inode named is
    // mapped (a memfd is one).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return nullptr;
    struct stat st {};
    const bool valid = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                       static_cast<std::uint64_t>(st.st_ino) == ref.inode && st.st_size > 0 &&
                       static_cast<std::uint64_t>(st.st_size) <= kMaxPeerSegmentBytes;
    if (valid) {
        // The owner's descriptor now holds another inode than one mapped here: it closed that segment
        // (a freed user allocation, or a freed communicator's segment). Resolved no more, and unmapped
        // at the context's next closing barrier (release_stale), so that allocating and freeing in a
        // loop piles up no mappings.
        auto stale = std::stable_partition(maps_.begin(), maps_.end(), [&](const Mapping &m) {
            return m.pid != ref.pid || m.fd != ref.fd || m.inode == ref.inode;
        });
        stale_.insert(stale_.end(), stale, maps_.end());
        maps_.erase(stale, maps_.end());
    }
    void *p = MAP_FAILED;
    if (valid && maps_.size() + stale_.size() < kMaxPeerSegments)
        p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);  // the mapping keeps the segment
    if (p == MAP_FAILED) return nullptr;
    Mapping m;
    m.pid = ref.pid;
    m.fd = ref.fd;
    m.inode = ref.inode;
    m.context = context;
    m.base = static_cast<const std::byte *>(p);
    m.size = static_cast<std::size_t>(st.st_size);
    maps_.push_back(m);
    return &maps_.back();
}

const std::byte *PeerSegments::resolve(const SegmentRef &ref, std::uint32_t context) {
    const Mapping *m = open(ref, context);
    if (m == nullptr || ref.offset > m->size || ref.bytes > m->size - ref.offset) return nullptr;
    return m->base + ref.offset;
}

namespace {

// Unmaps and removes the mappings of `context` from `list`.
void unmap_context(std::vector<PeerSegments::Mapping> &list, std::uint32_t context) {
    auto gone = std::remove_if(list.begin(), list.end(), [context](const PeerSegments::Mapping &m) {
        if (m.context != context) return false;
        munmap(const_cast<std::byte *>(m.base), m.size);
        return true;
    });
    list.erase(gone, list.end());
}

}  // namespace

void PeerSegments::forget(std::uint32_t context) {
    contexts_.erase(std::remove(contexts_.begin(), contexts_.end(), context), contexts_.end());
    unmap_context(maps_, context);
    unmap_context(stale_, context);
}

void PeerSegments::release_stale(std::uint32_t context) {
    unmap_context(stale_, context);
}

}  // namespace mpix::sparse::detail
