#include "transport/ucx/ucx_worker.h"

#include <sched.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <optional>

#include "core/debug.h"
#include "core/fnv1a.h"
#include "transport/shared_allocations.h"
#include "transport/ucx/ucx_status.h"

namespace mpix::sparse::detail {
namespace {

constexpr unsigned kActiveMessageId = 0x5a;

// kShared: the data lies in a peer's shared segment (nothing to release).
enum Storage : std::uint8_t { kNoPayload = 0, kUcxData = 1, kHeapCopy = 2, kRendezvous = 3, kShared = 4 };

// Payloads at least this large are copied into the segment to travel by reference; smaller ones
// go as UCX eager messages (a copy into its shared FIFO and one out). Payloads already in the
// segment always go by reference.

void on_send_done(void *request, ucs_status_t status, void *user_data) {
    auto *done = static_cast<Completion *>(user_data);
    if (status != UCS_OK) {
        done->failed = true;
        done->failure = ucs_status_string(status);
    }
    --done->pending;
    ucp_request_free(request);
}

void on_reference_sent(void *request, ucs_status_t status, void *user_data) {
    auto *m = static_cast<ReferenceMessage *>(user_data);
    --m->pending;
    on_send_done(request, status, m->outer);  // frees the request
}

void on_recv_done(void *request, ucs_status_t status, std::size_t, void *user_data) {
    on_send_done(request, status, user_data);
}

// Starts tracking an operation's request: completed now, failed now, or pending until its callback.
void track(ucs_status_ptr_t request, Completion &done) {
    if (request == nullptr) return;
    if (UCS_PTR_IS_ERR(request)) {
        done.failed = true;
        done.failure = ucs_status_string(UCS_PTR_STATUS(request));
        return;
    }
    ++done.pending;
}

// True when process `pid` of this machine has exited (gone, or a zombie not yet reaped).
bool process_gone(std::int64_t pid) {
    if (pid <= 0) return false;
    if (kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const auto close = line.rfind(')');  // the state follows the command name, which may hold spaces
    return close != std::string::npos && close + 2 < line.size() && (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

}  // namespace

PeerIdentity local_identity() {
    static const PeerIdentity self = [] {
        PeerIdentity id;
        id.pid = static_cast<std::int64_t>(getpid());
        std::ifstream boot("/proc/sys/kernel/random/boot_id");
        std::string boot_id;
        struct stat ns {};
        if (!std::getline(boot, boot_id) || stat("/proc/self/ns/pid", &ns) != 0) return id;
        Fnv1a h;  // of the boot id and the pid namespace
        h.add(boot_id + "/" + std::to_string(ns.st_ino));
        id.machine = h.value() == 0 ? 1 : h.value();
        return id;
    }();
    return self;
}

UcxWorker::UcxWorker(Router router) : router_(std::move(router)) {
    ucp_config_t *config = nullptr;
    check_ucx(ucp_config_read("MPIX_SPARSE", nullptr, &config), "ucp_config_read");
    std::unique_ptr<ucp_config_t, void (*)(ucp_config_t *)> config_guard(config, ucp_config_release);

    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    if (ucp_init(&params, config, &context_) != UCS_OK) {
        // Some transport sets cannot wake a worker: run without events (and yield while idle).
        params.features = UCP_FEATURE_AM;
        check_ucx(ucp_init(&params, config, &context_), "ucp_init");
    }

    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (ucs_status_t s = ucp_worker_create(context_, &worker_params, &worker_); s != UCS_OK) {
        ucp_cleanup(context_);
        check_ucx(s, "ucp_worker_create");
    }
    try {
        ucp_address_t *address = nullptr;
        std::size_t length = 0;
        check_ucx(ucp_worker_get_address(worker_, &address, &length), "ucp_worker_get_address");
        address_.assign(reinterpret_cast<const char *>(address), reinterpret_cast<const char *>(address) + length);
        ucp_worker_release_address(worker_, address);

        ucp_am_handler_param_t handler{};
        handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                             UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
        handler.id = kActiveMessageId;
        handler.cb = &UcxWorker::on_active_message;
        handler.arg = this;
        handler.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
        check_ucx(ucp_worker_set_am_recv_handler(worker_, &handler), "ucp_worker_set_am_recv_handler");

        if ((params.features & UCP_FEATURE_WAKEUP) && ucp_worker_get_efd(worker_, &event_fd_) != UCS_OK) event_fd_ = -1;
    } catch (...) {
        ucp_worker_destroy(worker_);
        ucp_cleanup(context_);
        throw;
    }
}

UcxWorker::~UcxWorker() {
    // Endpoints are not closed one by one: a flushing close needs the peer alive, and at
    // MPI_Finalize peers may already be gone (TCP then times out, loudly). Every operation completed
    // before this point (ranks leave each operation together), so the worker discards them safely.
    for (void *data : deferred_releases_)
        ucp_am_data_release(worker_, data);
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
}

ucp_ep_h UcxWorker::endpoint(const std::string &address, bool report_failure) {
    auto it = endpoints_.find(address);
    if (it != endpoints_.end()) return it->second;
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    params.address = reinterpret_cast<const ucp_address_t *>(address.data());
    if (report_failure) {
        params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        params.err_handler.cb = &UcxWorker::on_endpoint_error;
        params.err_handler.arg = this;
    }
    ucp_ep_h ep = nullptr;
    check_ucx(ucp_ep_create(worker_, &params, &ep), "ucp_ep_create");
    endpoints_.emplace(address, ep);
    return ep;
}

void UcxWorker::on_endpoint_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
    // Inside progress, under the engine lock. The endpoint stays (requests on it complete with
    // errors); the communicators using it see it in unreachable_peer().
    auto *self = static_cast<UcxWorker *>(arg);
    self->failed_endpoints_.emplace(ep, status);
    if (debug_enabled()) std::cerr << "mpix_sparse: UCX endpoint failed: " << ucs_status_string(status) << "\n";
}

const char *UcxWorker::endpoint_failure(ucp_ep_h ep) const {
    auto it = failed_endpoints_.find(ep);
    return it == failed_endpoints_.end() ? nullptr : ucs_status_string(it->second);
}

ucs_status_t UcxWorker::on_active_message(void *arg, const void *header, std::size_t header_length, void *data,
                                          std::size_t length, const ucp_am_recv_param_t *param) {
    auto *self = static_cast<UcxWorker *>(arg);
    const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    if (header_length != sizeof(WireHeader)) {
        // Not ours to parse: drop (a rendezvous sender then completes).
        if (debug_enabled()) std::cerr << "mpix_sparse: dropped a message with a bad header size\n";
        return UCS_OK;
    }
    InboundMessage message;
    std::memcpy(&message.header, header, sizeof(WireHeader));
    if (message.header.magic == kWireMagic && message.header.kind == MessageKind::WarmUp) {
        if (auto it = self->warm_ups_.find(message.header.context); it != self->warm_ups_.end()) ++it->second->received;
        return UCS_OK;
    }
    message.bytes = length;
    ucs_status_t keep = UCS_OK;
    if (message.header.flags & kByReference) {
        // Resolved here; one that cannot be (not a reference, a segment this process cannot open, a
        // range outside it) arrives without its payload, which the receiver reports as malformed.
        message.header.flags = static_cast<std::uint8_t>(message.header.flags & ~kByReference);
        SegmentRef ref;
        const std::byte *at = nullptr;
        if (!rendezvous && length == sizeof ref) {
            std::memcpy(&ref, data, sizeof ref);
            at = self->peer_segments_.resolve(ref, message.header.context);
        }
        message.data = at;
        message.bytes = at != nullptr ? static_cast<std::size_t>(ref.bytes) : 0;
        message.sender_writable = at != nullptr;
        message.storage = kShared;
    } else if (rendezvous) {
        message.rendezvous = true;
        message.handle = data;
        message.storage = kRendezvous;
        keep = UCS_INPROGRESS;
    } else if (length == 0) {
        message.storage = kNoPayload;
    } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
        message.data = static_cast<const std::byte *>(data);
        message.handle = data;
        message.storage = kUcxData;
        keep = UCS_INPROGRESS;
    } else {
        // The data only lives during this callback: keep a copy.
        auto *copy = new (std::nothrow) std::byte[length];
        if (copy == nullptr) {
            if (debug_enabled()) std::cerr << "mpix_sparse: out of memory for a message; dropped\n";
            return UCS_OK;
        }
        std::memcpy(copy, data, length);
        message.data = copy;
        message.handle = copy;
        message.storage = kHeapCopy;
    }
    // Nothing may unwind through UCX's C frames: the router reports failures to the operation it
    // routes to; anything else escaping it is logged and the message given back.
    struct Depth {
        int &d;
        explicit Depth(int &depth) : d(depth) { ++d; }
        ~Depth() { --d; }
    } depth(self->callback_depth_);
    try {
        self->router_(std::move(message));
    } catch (...) {
        // The sinks catch their own failures, so this is a last resort: UCX takes its data back
        // (UCS_OK) and our copy, if any, is freed.
        if (debug_enabled()) std::cerr << "mpix_sparse: routing a message failed; dropped\n";
        if (message.storage == kHeapCopy) delete[] static_cast<std::byte *>(message.handle);
        return UCS_OK;
    }
    return keep;
}

void UcxWorker::send(ucp_ep_h ep, const WireHeader &header, const void *payload, std::size_t bytes, Completion &done) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = &on_send_done;
    param.user_data = &done;
    track(ucp_am_send_nbx(ep, kActiveMessageId, &header, sizeof(WireHeader), payload, bytes, &param), done);
}

int UcxWorker::warm_up_messages() {
    // Twice the FIFO (UCX 1.13's default of 64 slots, or what UCX_POSIX_FIFO_SIZE sets), as the
    // peers of one receiver share its slots and interleave.
    static const int messages = [] {
        const char *fifo = std::getenv("UCX_POSIX_FIFO_SIZE");
        const long slots = fifo != nullptr ? std::strtol(fifo, nullptr, 10) : 0;
        return 2 * static_cast<int>(slots > 0 && slots <= 4096 ? slots : 64);
    }();
    return messages;
}

void UcxWorker::begin_warm_up(std::uint32_t context) {
    auto w = std::make_unique<WarmUp>();
    w->header.kind = MessageKind::WarmUp;
    w->header.context = context;
    warm_ups_[context] = std::move(w);
}

void UcxWorker::send_warm_ups(std::uint32_t context, ucp_ep_h ep) {
    auto it = warm_ups_.find(context);
    if (it == warm_ups_.end()) return;
    WarmUp &w = *it->second;
    for (int i = warm_up_messages(); i > 0; --i)
        send(ep, w.header, &w.payload, sizeof w.payload, w.sent);
}

bool UcxWorker::warmed_up(std::uint32_t context, int expected) const {
    auto it = warm_ups_.find(context);
    return it == warm_ups_.end() || (it->second->sent.done() && it->second->received >= expected);
}

void UcxWorker::end_warm_up(std::uint32_t context) {
    auto it = warm_ups_.find(context);
    if (it == warm_ups_.end()) return;
    // Sends UCX has not completed (a peer that stopped waiting) still read the header: left behind.
    if (!it->second->sent.done()) (void)it->second.release();
    warm_ups_.erase(it);
}

void UcxWorker::send_reference(ucp_ep_h ep, ReferenceMessage &m) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = &on_reference_sent;
    param.user_data = &m;
    const ucs_status_ptr_t request =
        ucp_am_send_nbx(ep, kActiveMessageId, &m.header, sizeof(WireHeader), &m.ref, sizeof m.ref, &param);
    track(request, *m.outer);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) ++m.pending;
}

void UcxWorker::fetch(InboundMessage &message, void *dest, Completion &done) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.recv_am = &on_recv_done;
    param.user_data = &done;
    void *handle = message.handle;
    message.handle = nullptr;  // UCX owns the descriptor from here on
    message.storage = kNoPayload;
    track(ucp_am_recv_data_nbx(worker_, handle, dest, message.bytes, &param), done);
}

void UcxWorker::release(InboundMessage &message) {
    void *handle = message.handle;
    const std::uint8_t storage = message.storage;
    message.handle = nullptr;
    message.data = nullptr;
    message.storage = kNoPayload;
    if (handle == nullptr) return;
    if (storage == kHeapCopy) {
        delete[] static_cast<std::byte *>(handle);
    } else if (storage == kUcxData || storage == kRendezvous) {
        // Inside the callback UCX still owns the descriptor until we return: release afterwards.
        if (callback_depth_ > 0)
            deferred_releases_.push_back(handle);
        else
            ucp_am_data_release(worker_, handle);
    }
}

bool UcxWorker::progress() {
    const unsigned events = ucp_worker_progress(worker_);
    if (!deferred_releases_.empty()) {
        for (void *data : deferred_releases_)
            ucp_am_data_release(worker_, data);
        deferred_releases_.clear();
    }
    return events > 0;
}

int UcxWorker::arm() {
    if (event_fd_ < 0) return -1;
    const ucs_status_t armed = ucp_worker_arm(worker_);
    if (armed == UCS_ERR_BUSY) return kBusy;
    return armed == UCS_OK ? event_fd_ : -1;
}

UcxLinks::~UcxLinks() {
    worker_.peer_segments().forget(context_);
    // A message UCX still sends from is left behind rather than freed under it (as the operations'
    // drain lists do with theirs).
    for (auto &m : references_)
        if (m->pending > 0) (void)m.release();
}

ReferenceMessage *UcxLinks::by_reference(const WireHeader &header, const void *payload, std::size_t bytes,
                                         Completion &done) {
    const bool in_segment = segment_->contains(payload, bytes);
    if (!in_segment && bytes < kMinByReferenceBytes) return nullptr;
    std::optional<SegmentRef> ref;
    if (in_segment)
        ref = segment_->ref(payload, bytes);
    else
        ref = SharedAllocations::get().find(payload, bytes);
    if (!ref) {
        std::byte *copy = segment_->allocate(bytes);
        if (copy == nullptr) return nullptr;
        std::memcpy(copy, payload, bytes);
        ref = segment_->ref(copy, bytes);
    }
    auto free = std::find_if(references_.begin(), references_.end(), [](const auto &m) { return m->pending == 0; });
    if (free == references_.end()) {
        references_.push_back(std::make_unique<ReferenceMessage>());
        free = references_.end() - 1;
    }
    ReferenceMessage &m = **free;
    m.header = header;
    m.header.flags = static_cast<std::uint8_t>(header.flags | kByReference);
    m.ref = *ref;
    m.outer = &done;
    return &m;
}

void UcxLinks::send(int peer, const WireHeader &header, const void *payload, std::size_t bytes, Completion &done) {
    send_to(&peer, 1, header, payload, bytes, done);
}

void UcxLinks::send_to(const int *peers, std::size_t n, const WireHeader &header, const void *payload,
                       std::size_t bytes, Completion &done) {
    ReferenceMessage *reference = nullptr;
    bool tried = false;
    for (std::size_t i = 0; i < n; ++i) {
        const auto p = static_cast<std::size_t>(peers[i]);
        const bool shared = bytes > 0 && shares_with(peers[i]);
        if (shared && !tried) {
            reference = by_reference(header, payload, bytes, done);  // stored once for all of them
            tried = true;
        }
        if (shared && reference != nullptr)
            worker_.send_reference(endpoints_[p], *reference);
        else
            worker_.send(endpoints_[p], header, payload, bytes, done);
    }
}

static_assert(kPublishedWords * sizeof(std::uint64_t) <= SharedSegment::kHeaderBytes,
              "published words live in the segment's header");

std::uint64_t *UcxLinks::published_words() {
    return segment_ ? reinterpret_cast<std::uint64_t *>(segment_->header()) : nullptr;
}

const std::uint64_t *UcxLinks::peer_published_words(int peer) {
    if (!shares_with(peer)) return nullptr;
    return reinterpret_cast<const std::uint64_t *>(peer_headers_[static_cast<std::size_t>(peer)]);
}

bool UcxLinks::shares_with_all(const int *peers, std::size_t n) const {
    if (!segment_ || n == 0) return false;
    for (std::size_t i = 0; i < n; ++i)
        if (!shares_with(peers[i])) return false;
    return true;
}

std::byte *UcxLinks::shared_buffer(const int *peers, std::size_t n, std::size_t bytes) {
    return shares_with_all(peers, n) ? segment_->allocate(bytes) : nullptr;
}

bool UcxLinks::shares_in_place(const int *peers, std::size_t n, const void *payload, std::size_t bytes) {
    return shares_with_all(peers, n) && in_place_memory(payload, bytes);
}

bool UcxLinks::in_place_memory(const void *payload, std::size_t bytes) const {
    return segment_ && bytes >= kMinByReferenceBytes && SharedAllocations::get().find(payload, bytes).has_value();
}

void UcxLinks::wait() {
    sched_yield();
}

int UcxLinks::unreachable_peer() {
    for (std::size_t p = 0; p < endpoints_.size(); ++p) {
        if (endpoints_[p] == nullptr) continue;  // this rank
        const PeerIdentity &peer = p < peers_.size() ? peers_[p] : PeerIdentity{};
        const bool here = peer.machine != 0 && peer.machine == self_.machine;
        if ((here && process_gone(peer.pid)) || worker_.endpoint_failure(endpoints_[p]) != nullptr)
            return static_cast<int>(p);
    }
    return -1;
}

std::string UcxLinks::describe_peer(int peer) const {
    const auto p = static_cast<std::size_t>(peer);
    if (p >= endpoints_.size()) return {};
    if (const char *failure = worker_.endpoint_failure(endpoints_[p]))
        return std::string("UCX endpoint error: ") + failure;
    return "process " + std::to_string(p < peers_.size() ? peers_[p].pid : 0) + " on this machine exited";
}

}  // namespace mpix::sparse::detail
