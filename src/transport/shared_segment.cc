#include "transport/shared_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace mpix::sparse::detail {
namespace {

constexpr std::size_t kAlign = 64;
constexpr std::size_t kFirstSize = std::size_t{1} << 20;
// A peer's segment may claim any size; this process reserves at most this much address space for one,
// and maps at most this many (malformed references cannot pile up reservations).
constexpr std::size_t kMaxPeerReservation = std::size_t{64} << 30;
constexpr std::size_t kMaxPeerSegments = 1024;

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

// Address space held for a mapping that grows: no memory, no access until mapped over.
std::byte *reserve(std::size_t bytes) {
    void *p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<std::byte *>(p);
}

// Maps the file's bytes [from, to) at base + from, inside the reservation.
bool map_range(std::byte *base, int fd, std::size_t from, std::size_t to, int protection) {
    if (to <= from) return true;
    void *p = mmap(base + from, to - from, protection, MAP_SHARED | MAP_FIXED, fd, static_cast<off_t>(from));
    return p != MAP_FAILED;
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
        std::uint64_t h = 1469598103934665603ull;  // FNV-1a
        for (char c : key)
            h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        return h == 0 ? std::uint64_t{1} : h;
    }();
    return domain;
}

std::unique_ptr<SharedSegment> SharedSegment::create(std::size_t max_bytes) {
    const std::uint64_t domain = shared_memory_domain();
    if (domain == 0 || max_bytes < kFirstSize) return nullptr;
    std::unique_ptr<SharedSegment> s(new SharedSegment);
    s->domain_ = domain;
    s->reserved_ = round_up(max_bytes, page_size());
    s->fd_ = memfd_create("mpix_sparse", MFD_CLOEXEC);
    if (s->fd_ < 0) return nullptr;
    struct stat st {};
    if (fstat(s->fd_, &st) != 0) return nullptr;
    s->inode_ = static_cast<std::uint64_t>(st.st_ino);
    s->base_ = reserve(s->reserved_);
    if (s->base_ == nullptr) return nullptr;
    return s;
}

SharedSegment::~SharedSegment() {
    if (base_ != nullptr) munmap(base_, reserved_);
    if (fd_ >= 0) close(fd_);
}

std::byte *SharedSegment::allocate(std::size_t bytes) {
    const std::size_t at = round_up(used_, kAlign);
    if (bytes > reserved_ || at > reserved_ - bytes) return nullptr;
    const std::size_t end = at + bytes;
    if (end > mapped_) {
        // Grown by doubling; pages cost memory only once written.
        const std::size_t size = std::min(reserved_, round_up(std::max({end, 2 * mapped_, kFirstSize}), page_size()));
        if (ftruncate(fd_, static_cast<off_t>(size)) != 0) return nullptr;
        if (!map_range(base_, fd_, mapped_, size, PROT_READ | PROT_WRITE)) return nullptr;
        mapped_ = size;
    }
    last_ = at;
    used_ = end;
    return base_ + at;
}

void SharedSegment::trim(const std::byte *p, std::size_t used) {
    if (p == base_ + last_ && last_ + used <= used_) used_ = last_ + used;
}

bool SharedSegment::contains(const void *p, std::size_t bytes) const {
    const auto *b = static_cast<const std::byte *>(p);
    return b >= base_ && b <= base_ + mapped_ && bytes <= static_cast<std::size_t>(base_ + mapped_ - b);
}

SegmentRef SharedSegment::ref(const void *p, std::size_t bytes) const {
    SegmentRef r;
    r.domain = domain_;
    r.pid = static_cast<std::int64_t>(getpid());
    r.fd = fd_;
    r.inode = inode_;
    r.reserved = reserved_;
    r.offset = p == nullptr ? 0 : static_cast<std::uint64_t>(static_cast<const std::byte *>(p) - base_);
    r.bytes = bytes;
    return r;
}

PeerSegments::~PeerSegments() {
    for (Mapping &m : maps_)
        unmap(m);
}

void PeerSegments::unmap(Mapping &m) {
    if (m.base != nullptr) munmap(m.base, m.reserved);
    if (m.local_fd >= 0) close(m.local_fd);
    m.base = nullptr;
    m.local_fd = -1;
}

PeerSegments::Mapping *PeerSegments::open(const SegmentRef &ref, std::uint32_t context) {
    if (ref.domain != shared_memory_domain()) return nullptr;
    for (Mapping &m : maps_)
        if (m.pid == ref.pid && m.fd == ref.fd && m.inode == ref.inode && m.context == context) return &m;
    if (ref.pid <= 0 || ref.fd < 0 || maps_.size() >= kMaxPeerSegments) return nullptr;
    Mapping m;
    m.pid = ref.pid;
    m.fd = ref.fd;
    m.inode = ref.inode;
    m.context = context;
    const std::string path = "/proc/" + std::to_string(ref.pid) + "/fd/" + std::to_string(ref.fd);
    // Non-blocking: a malformed reference may name a pipe. Only a regular file (a memfd) is mapped.
    m.local_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st {};
    if (m.local_fd < 0 || fstat(m.local_fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<std::uint64_t>(st.st_ino) != ref.inode) {
        unmap(m);
        return nullptr;
    }
    m.reserved =
        round_up(static_cast<std::size_t>(std::min<std::uint64_t>(ref.reserved, kMaxPeerReservation)), page_size());
    m.base = reserve(m.reserved);
    if (m.base == nullptr) {
        unmap(m);
        return nullptr;
    }
    maps_.push_back(m);
    return &maps_.back();
}

const std::byte *PeerSegments::resolve(const SegmentRef &ref, std::uint32_t context) {
    Mapping *m = open(ref, context);
    if (m == nullptr || ref.offset > m->reserved || ref.bytes > m->reserved - ref.offset) return nullptr;
    const std::size_t end = static_cast<std::size_t>(ref.offset + ref.bytes);
    if (end > m->mapped) {
        // The owner grew it since: map what the file has now (never past it: reading beyond a
        // file's end faults).
        struct stat st {};
        if (fstat(m->local_fd, &st) != 0) return nullptr;
        const std::size_t size =
            std::min(m->reserved, static_cast<std::size_t>(st.st_size) / page_size() * page_size());
        if (size < end || !map_range(m->base, m->local_fd, m->mapped, size, PROT_READ)) return nullptr;
        m->mapped = size;
    }
    return m->base + ref.offset;
}

void PeerSegments::forget(std::uint32_t context) {
    auto gone = std::remove_if(maps_.begin(), maps_.end(), [context](Mapping &m) {
        if (m.context != context) return false;
        unmap(m);
        return true;
    });
    maps_.erase(gone, maps_.end());
}

}  // namespace mpix::sparse::detail
