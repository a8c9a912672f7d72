#include "core/library.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <utility>

#include "core/comm_state.h"
#include "core/debug.h"
#include "core/env_switch.h"
#include "core/error.h"
#include "core/error_registry.h"
#include "core/progress_thread.h"
#include "transport/ucx/ucx_worker.h"

namespace mpix::sparse::detail {
namespace {

// Atomic so that every call finds the library without taking g_init_lock (set and cleared under it).
std::atomic<Library *> g_library{nullptr};
std::mutex g_init_lock;

// Idle backoff of a waiting thread: poll a while (a reply is often about to land), then yield the
// core to the ranks sharing it (the oversubscribed case), then sleep on the worker's event fd in
// short slices, so an idle rank burns no CPU. A slice is short because MPI requests (agreement,
// barrier) cannot wake the fd: they are tested after every slice.
constexpr int kSpinPolls = 64;
constexpr std::chrono::milliseconds kYieldFor{2};
constexpr int kSleepMs = 1;

}  // namespace

std::recursive_mutex &Library::engine_lock() {
    static std::recursive_mutex m;
    return m;
}

Library &Library::get() {
    if (Library *library = g_library.load(std::memory_order_acquire)) return *library;
    std::lock_guard<std::mutex> guard(g_init_lock);
    if (Library *library = g_library.load(std::memory_order_relaxed)) return *library;
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) throw Error(ErrorId::MpiFailure, MPI_ERR_OTHER, "MPI is not initialized");
    auto *library = new Library();
    g_library.store(library, std::memory_order_release);
    return *library;
}

Library::Library() {
    register_error_classes();
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &Library::on_comm_delete, &state_keyval_, nullptr),
              "MPI_Comm_create_keyval");
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &Library::on_finalize, &finalize_keyval_, nullptr),
              "MPI_Comm_create_keyval");
    // MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works: our teardown hook.
    check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval_, this), "MPI_Comm_set_attr");
    agreement_ = std::make_unique<AgreementOp>();
    half_types_ = std::make_unique<HalfTypes>();
}

// Parked memory outlives the library: MPI or UCX may still write it (see Library::park). Reachable
// from here until exit, so leak checkers do not report it.
namespace {
std::vector<std::shared_ptr<void>> *g_graveyard = nullptr;
}  // namespace

Library::~Library() {
    // Never freed, nor destroyed: an abandoned operation's destructor would wait for requests that
    // never complete.
    if (parked_.empty()) return;
    if (g_graveyard == nullptr) g_graveyard = new std::vector<std::shared_ptr<void>>();
    for (auto &p : parked_)
        g_graveyard->push_back(std::move(p));
}

int Library::on_comm_delete(MPI_Comm comm, int, void *attribute, void *) {
    auto *state = static_cast<CommState *>(attribute);
    if (Library *library = g_library.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> guard(library->registry_lock_);
        library->states_.erase(comm);
    }
    delete state;
    return MPI_SUCCESS;
}

int Library::on_finalize(MPI_Comm, int, void *attribute, void *) {
    auto *library = static_cast<Library *>(attribute);
    library->shutdown();
    std::lock_guard<std::mutex> guard(g_init_lock);
    g_library.store(nullptr, std::memory_order_release);
    delete library;
    return MPI_SUCCESS;
}

void Library::shutdown() {
    progress_thread_.reset();  // joins: it takes the engine lock
    // Release every communicator's state while MPI still works, in context order: contexts are
    // agreed by all ranks of a communicator, so every rank releases its states in the same order
    // (handle values, which order a map by MPI_Comm, can differ between ranks).
    std::vector<std::pair<std::uint32_t, MPI_Comm>> order;
    {
        std::lock_guard<std::mutex> guard(registry_lock_);
        for (auto &[comm, state] : states_)
            order.emplace_back(state->context(), comm);
    }
    std::sort(order.begin(), order.end());
    for (auto &[context, comm] : order) {
        if (debug_enabled()) std::fprintf(stderr, "mpix_sparse: finalize releases context %u\n", context);
        MPI_Comm_delete_attr(comm, state_keyval_);
    }
    {
        std::lock_guard<std::mutex> guard(registry_lock_);
        states_.clear();
    }
    std::lock_guard<std::recursive_mutex> engine(engine_lock());
    busy_.clear();
    busy_count_.store(0, std::memory_order_release);
    sinks_.clear();
    ucx_.reset();
    agreement_.reset();
    half_types_.reset();
    MPI_Comm_free_keyval(&state_keyval_);
    MPI_Comm_free_keyval(&finalize_keyval_);
}

CommState *Library::find(MPI_Comm comm) const {
    std::lock_guard<std::mutex> guard(registry_lock_);
    auto it = states_.find(comm);
    return it == states_.end() ? nullptr : it->second;
}

CommState &Library::state_for(MPI_Comm comm) {
    if (CommState *s = find(comm)) return *s;
    // Collective set-up, outside every lock: another thread may be in a collective on another
    // communicator that this one's peers need this rank to progress.
    return attach(comm, std::make_unique<CommState>(comm, agree_on_config(comm, environment_defaults)));
}

CommState &Library::attach(MPI_Comm comm, std::unique_ptr<CommState> state) {
    check_mpi(MPI_Comm_set_attr(comm, state_keyval_, state.get()), "MPI_Comm_set_attr");
    CommState *raw = state.release();
    std::lock_guard<std::mutex> guard(registry_lock_);
    states_[comm] = raw;
    return *raw;
}

CommState *Library::check_comm(MPI_Comm comm) const {
    if (comm == MPI_COMM_NULL) fail(ErrorId::CommNull);
    if (CommState *s = find(comm)) return s;
    // An unknown handle. Converting it to a Fortran handle and back is an identity only for a live
    // communicator in Open MPI (it answers -1 for an invalid one, which converts back to
    // MPI_COMM_NULL, and clears a freed one's table slot), and raises no error on the way, unlike
    // any call that takes the handle itself. MPICH's handles are integers that convert to themselves
    // (negative ones included): a stale copy of a freed one is not caught there.
    if (MPI_Comm_f2c(MPI_Comm_c2f(comm)) != comm) fail(ErrorId::CommInvalid);
    int inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) fail(ErrorId::CommInvalid);
    if (inter) fail(ErrorId::CommInter);
    return nullptr;
}

UcxWorker &Library::ucx() {
    if (!ucx_) ucx_ = std::make_unique<UcxWorker>([this](InboundMessage &&m) { route(std::move(m)); });
    return *ucx_;
}

std::uint32_t Library::agree_context(MPI_Comm comm, MessageSink *sink) {
    // Round one agrees on the largest proposal; round two checks that no rank already uses it (two
    // threads may set up communicators at once). Each rank registers the id for `sink` before it
    // answers round two, and peers send nothing before round two completes.
    std::uint32_t floor = 0;
    for (;;) {
        unsigned proposal = 0;
        {
            std::lock_guard<std::recursive_mutex> engine(engine_lock());
            proposal = std::max(next_context_, floor);
            next_context_ = proposal + 1;
        }
        check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &proposal, 1, MPI_UNSIGNED, MPI_MAX, comm), "MPI_Allreduce");
        const std::uint32_t context = proposal;
        int collides = 0;
        {
            std::lock_guard<std::recursive_mutex> engine(engine_lock());
            next_context_ = std::max(next_context_, context + 1);
            if (sinks_.count(context) != 0)
                collides = 1;
            else
                sinks_[context] = sink;
        }
        int any = collides;
        check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
        if (!any) return context;
        if (!collides) unregister_sink(context);
        floor = context + 1;
    }
}

void Library::register_sink(std::uint32_t context, MessageSink *sink) {
    std::lock_guard<std::recursive_mutex> engine(engine_lock());
    sinks_[context] = sink;
}

void Library::unregister_sink(std::uint32_t context) {
    std::lock_guard<std::recursive_mutex> engine(engine_lock());
    sinks_.erase(context);
}

void Library::route(InboundMessage &&message) {
    // Only the context is needed to route; the sink checks the rest and reports what is malformed to
    // the operation waiting for it (a silent drop would leave it waiting forever). A context with no
    // sink is one already gone here (contexts are registered before peers learn them): dropped.
    if (message.header.magic == kWireMagic) {
        if (auto it = sinks_.find(message.header.context); it != sinks_.end() && it->second != nullptr) {
            it->second->on_message(std::move(message));
            return;
        }
    }
    ucx_->release(message);
}

namespace {

bool remote_peers_for_testing() {
    static const bool remote = env_is("MPIX_SPARSE_TEST_REMOTE_PEERS", "1");
    return remote;
}

// Sends the warm-ups of the shared-memory path to each new peer of this machine and waits for
// theirs (UcxWorker::begin_warm_up).
void warm_up(Library &library, std::uint32_t context, const std::vector<ucp_ep_h> &new_here) {
    // Each new peer of this machine sends as many to this rank as it sends to each of them (new
    // endpoints are made in pairs: every rank of a communicator connects to every other). A rank
    // also waits until its own went out: some wait in UCX for room in a peer's FIFO, and only this
    // rank's progress sends them. Only a warm-up: a peer that does not send in time is not waited for.
    if (new_here.empty()) return;
    const int expected = UcxWorker::warm_up_messages() * static_cast<int>(new_here.size());
    {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        for (ucp_ep_h ep : new_here)
            library.ucx().send_warm_ups(context, ep);
    }
    // Sleeps on the worker's events like every wait; the deadline overshoots by one idle sleep at most.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    library.wait_until(
        [&] { return library.ucx().warmed_up(context, expected) || std::chrono::steady_clock::now() > deadline; });
}

}  // namespace

std::unique_ptr<Transport> Library::connect(MPI_Comm comm, std::uint32_t context, std::size_t shared_bytes,
                                            bool inject_failure) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    // A rank whose own set-up fails (UCX, memory) still joins the next collective, flagged, and every
    // rank fails there: leaving at once would leave its peers waiting in that collective for good.
    std::exception_ptr failed_here;
    const auto fail_together = [&](int failed_rank) {
        if (failed_here) std::rethrow_exception(failed_here);
        fail(ErrorId::RemoteFailure, "rank " + std::to_string(failed_rank) + " could not set up its transport");
    };
    // Each rank's identity (to tell later that it is gone), its shared segment (none: fd -1), then
    // its worker address.
    constexpr std::size_t kFixed = sizeof(PeerIdentity) + sizeof(SegmentRef);
    std::unique_ptr<SharedSegment> segment;
    SegmentRef my_segment;
    std::vector<char> mine(kFixed);
    try {
        if (inject_failure) fail(ErrorId::InjectedFailure, "setting up the transport");
        segment = size > 1 ? SharedSegment::create(shared_bytes) : nullptr;
        my_segment.domain = shared_bytes > 0 && !remote_peers_for_testing() ? shared_memory_domain() : 0;
        my_segment.fd = -1;
        if (segment && my_segment.domain != 0) my_segment = segment->ref(nullptr, 0);
        const PeerIdentity self = local_identity();
        std::memcpy(mine.data(), &self, sizeof self);
        std::memcpy(mine.data() + sizeof self, &my_segment, sizeof my_segment);
        std::lock_guard<std::recursive_mutex> engine(engine_lock());
        const std::vector<char> &address = ucx().address();
        mine.insert(mine.end(), address.begin(), address.end());
    } catch (...) {
        failed_here = std::current_exception();
    }
    int length = failed_here ? 0 : static_cast<int>(mine.size());  // 0: this rank failed
    std::vector<int> lengths(static_cast<std::size_t>(size));
    check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), "MPI_Allgather");
    for (int r = 0; r < size; ++r)
        if (lengths[static_cast<std::size_t>(r)] < static_cast<int>(kFixed)) fail_together(r);
    std::vector<int> displs(static_cast<std::size_t>(size), 0);
    for (int r = 1; r < size; ++r)
        displs[static_cast<std::size_t>(r)] =
            displs[static_cast<std::size_t>(r) - 1] + lengths[static_cast<std::size_t>(r) - 1];
    std::vector<char> all(static_cast<std::size_t>(displs.back() + lengths.back()));
    check_mpi(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR, comm),
              "MPI_Allgatherv");
    std::vector<ucp_ep_h> endpoints(static_cast<std::size_t>(size), nullptr);
    std::vector<PeerIdentity> peers(static_cast<std::size_t>(size));
    std::vector<bool> sharing(static_cast<std::size_t>(size), false);
    std::vector<const std::byte *> peer_headers(static_cast<std::size_t>(size), nullptr);
    std::vector<ucp_ep_h> new_here;  // endpoints to peers of this machine created by this call
    int segments_open = 1;           // this rank could open the segments of every peer of its machine
    // The peers' segments are opened for `context` here; should this fail half way, they go again.
    struct Opened {
        std::uint32_t context;
        bool keep = false;
        ~Opened() {
            if (keep) return;
            std::lock_guard<std::recursive_mutex> engine(engine_lock());
            get().ucx().peer_segments().forget(context);
        }
    } opened{context};
    try {
        std::lock_guard<std::recursive_mutex> engine(engine_lock());
        UcxWorker &worker = ucx();
        worker.peer_segments().open_context(context);
        const PeerIdentity self = local_identity();
        for (int r = 0; r < size; ++r) {
            const auto i = static_cast<std::size_t>(r);
            std::memcpy(&peers[i], all.data() + displs[i], sizeof(PeerIdentity));
            SegmentRef theirs;
            std::memcpy(&theirs, all.data() + displs[i] + sizeof(PeerIdentity), sizeof theirs);
            if (r == rank) continue;
            // A peer of this machine reads this rank's segment; this rank opens the peer's now, so
            // that a missing permission shows here rather than in a call.
            sharing[i] = my_segment.domain != 0 && theirs.domain == my_segment.domain;
            if (sharing[i] && theirs.fd >= 0) {
                SegmentRef header = theirs;
                header.bytes = SharedSegment::kHeaderBytes;
                peer_headers[i] = worker.peer_segments().resolve(header, context);
                if (peer_headers[i] == nullptr) segments_open = 0;
            }
            // Peers on this machine are watched with kill(pid, 0); UCX reports the others' failures
            // (tests force the UCX path with MPIX_SPARSE_TEST_REMOTE_PEERS=1).
            if (remote_peers_for_testing()) peers[i].machine = 0;
            const bool here = peers[i].machine != 0 && peers[i].machine == self.machine;
            const std::string address(all.data() + displs[i] + kFixed, static_cast<std::size_t>(lengths[i]) - kFixed);
            const bool fresh = !worker.has_endpoint(address);
            endpoints[i] = worker.endpoint(address, !here);
            if (here && fresh) new_here.push_back(endpoints[i]);
        }
    } catch (...) {
        failed_here = std::current_exception();
    }
    // Warm-up messages from peers may come as soon as they pass the agreement below.
    struct WarmingUp {
        std::uint32_t context;
        explicit WarmingUp(std::uint32_t c) : context(c) {
            std::lock_guard<std::recursive_mutex> engine(engine_lock());
            get().ucx().begin_warm_up(context);
        }
        ~WarmingUp() {
            std::lock_guard<std::recursive_mutex> engine(engine_lock());
            get().ucx().end_warm_up(context);
        }
    } warming{context};
    // Payloads go by reference on this communicator only where every rank could open its machine's
    // segments (a ptrace restriction on one rank would otherwise fail its calls). The lowest rank
    // that failed, or size: none did.
    int agreed[2] = {segments_open, failed_here ? rank : size};
    check_mpi(PMPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (agreed[1] < size) fail_together(agreed[1]);
    segments_open = agreed[0];
    warm_up(*this, context, new_here);
    std::lock_guard<std::recursive_mutex> engine(engine_lock());
    if (!segments_open || my_segment.domain == 0) segment.reset();
    // From here the links own the context's peer segments (they forget them when destroyed).
    auto links = std::make_unique<UcxLinks>(ucx(), context, std::move(endpoints), std::move(peers), std::move(segment),
                                            std::move(sharing), std::move(peer_headers));
    opened.keep = true;
    return links;
}

void Library::run(CommState &state, std::unique_ptr<Operation> op) {
    Operation &o = *op;
    {
        std::lock_guard<std::recursive_mutex> engine(engine_lock());
        state.start(o);
    }
    const auto describe = [&] { return o.describe(); };
    wait_until([&] { return o.retired() || o.caller_work_pending(); }, describe);
    bool retired = false;
    {
        std::lock_guard<std::recursive_mutex> engine(engine_lock());
        retired = o.retired();
    }
    if (!retired) {
        o.run_caller_work();  // outside the engine lock (see Operation::caller_work_pending)
        wait_until([&] { return o.retired(); }, describe);
    }
    const OpError error = o.error();
    dispose(std::move(op));
    if (error) throw error.to_error();
}

void Library::park(std::shared_ptr<void> remains) {
    std::lock_guard<std::recursive_mutex> engine(engine_lock());
    parked_.push_back(std::move(remains));
}

void dispose(std::unique_ptr<Operation> op) {
    if (op && op->abandoned())
        Library::get().park(std::shared_ptr<Operation>(std::move(op)));
    else
        op.reset();
}

void Library::add_busy(Progressable *p) {
    if (std::find(busy_.begin(), busy_.end(), p) == busy_.end()) busy_.push_back(p);
    busy_count_.store(busy_.size(), std::memory_order_release);
}

void Library::notify_progress_thread() {
    if (progress_thread_) progress_thread_->notify();
}

void Library::progress_if_running() {
    Library *library = g_library.load(std::memory_order_acquire);
    // Nothing in line anywhere: nothing here waits on UCX (a peer's early messages wait for the
    // operation they belong to), and a worker progress is a third of a small dense call's overhead.
    // Read without the lock: work another thread puts in line meanwhile is progressed by its own
    // wait (or the progress thread), as when this call had come a moment earlier.
    if (library == nullptr || library->busy_count_.load(std::memory_order_acquire) == 0) return;
    std::lock_guard<std::recursive_mutex> engine(engine_lock());
    if (library->busy_.empty()) return;
    library->progress_all();
}

void Library::enable_progress_thread(ProgressThreadSetting setting) {
    if (setting == ProgressThreadSetting::Off) return;
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) return;
    std::lock_guard<std::recursive_mutex> engine(engine_lock());
    if (!progress_thread_) progress_thread_ = std::make_unique<ProgressThread>(*this);
    if (!busy_.empty()) progress_thread_->notify();
}

void Library::remove_busy(Progressable *p) {
    busy_.erase(std::remove(busy_.begin(), busy_.end(), p), busy_.end());
    busy_count_.store(busy_.size(), std::memory_order_release);
}

bool Library::progress_all() {
    bool moved = ucx_ ? ucx_->progress() : false;
    // A snapshot: a step may start work elsewhere (a hierarchical call's levels) or go idle. Kept
    // in a member so the loop allocates nothing.
    snapshot_.assign(busy_.begin(), busy_.end());
    for (Progressable *p : snapshot_)
        if (std::find(busy_.begin(), busy_.end(), p) != busy_.end()) moved |= p->progress();
    return moved;
}

void Library::idle_wait(int &idle_polls, std::chrono::steady_clock::time_point &idle_since) {
    if (++idle_polls < kSpinPolls) return;
    const auto now = std::chrono::steady_clock::now();
    if (idle_polls == kSpinPolls) idle_since = now;
    if (now - idle_since < kYieldFor) {
        sched_yield();
        return;
    }
    int fd = -1;
    {
        std::lock_guard<std::recursive_mutex> engine(engine_lock());
        if (ucx_) {
            fd = ucx_->arm();
            if (fd == UcxWorker::kBusy) return;  // events arrived meanwhile: go and progress them
        }
    }
    if (fd >= 0) {
        pollfd p{fd, POLLIN, 0};
        (void)poll(&p, 1, kSleepMs);
    } else {
        (void)poll(nullptr, 0, kSleepMs);
    }
}

void Library::wait_until(const std::function<bool()> &finished, const std::function<std::string()> &describe) {
    int idle_polls = 0;
    auto idle_since = std::chrono::steady_clock::now();
    auto last_progress = std::chrono::steady_clock::now();
    for (;;) {
        bool moved = false;
        {
            std::lock_guard<std::recursive_mutex> engine(engine_lock());
            moved = progress_all();
            if (finished()) return;
        }
        if (moved) {
            idle_polls = 0;
            if (debug_enabled()) last_progress = std::chrono::steady_clock::now();
            continue;
        }
        idle_wait(idle_polls, idle_since);
        if (debug_enabled() && describe &&
            std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(10)) {
            std::lock_guard<std::recursive_mutex> engine(engine_lock());
            std::cerr << "mpix_sparse: stalled " << describe() << std::endl;
            last_progress = std::chrono::steady_clock::now();
        }
    }
}

}  // namespace mpix::sparse::detail
