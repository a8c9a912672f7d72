// The block-sparse allreduce, blocking, non-blocking and persistent: the request handle and its
// life cycle. A request owns one operation; starting puts it in its communicator's line, completing
// (test/wait) reads its outcome once it is retired. MPIX_Sparse_allreduce is a request waited on.
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "algo/block_allreduce.h"
#include "api/api_guard.h"
#include "api/arguments.h"
#include "core/comm_state.h"
#include "core/config.h"
#include "core/device_memory.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse::detail;

namespace {

// Live requests, so a stale or foreign handle is an error rather than a crash.
std::mutex g_requests_lock;
std::unordered_set<const MPIX_Sparse_request_s *> g_requests;
// The last freed request and its set node, for the next call (under g_requests_lock): a steady loop
// of calls then allocates nothing.
std::unique_ptr<MPIX_Sparse_request_s> g_spare_request;
decltype(g_requests)::node_type g_spare_node;

}  // namespace

// A request may outlive its communicator: MPI_Comm_free waits for the operation in flight, and the
// request is still the user's to wait on, test or free. Its operation goes when the communicator's
// state closes (state_closing), leaving the outcome here; a persistent request then cannot start.
// `state` and `op` change under the engine lock, `comm` under g_requests_lock.
struct MPIX_Sparse_request_s final : StateObserver {
    MPI_Comm comm = MPI_COMM_NULL;  // the user's: errors are raised through its handler
    CommState *state = nullptr;     // null once its communicator is freed
    std::unique_ptr<Operation> op;  // null once its communicator is freed
    OpError outcome;                // the operation's, kept when it went with its communicator
    bool persistent = false;
    bool active = false;

    void attach(CommState &s) {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        state = &s;
        s.watch(this);
    }

    void state_closing() override {
        outcome = op ? op->error() : OpError{};
        dispose(std::move(op));  // retired: its communicator's line is empty
        state = nullptr;
        std::lock_guard<std::mutex> guard(g_requests_lock);
        comm = MPI_COMM_WORLD;  // the user's communicator is being freed
    }

    // Lets go of its communicator and operation and forgets its arguments, ready to serve another
    // call. Under the engine lock: the state cannot close meanwhile, and the operation still gives
    // back what it borrowed from it. A released request's operation is retired or never started.
    void release() {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        if (state != nullptr) {
            state->unwatch(this);
            // A call's operation that ended well serves the communicator's next call of its shape.
            if (!persistent && op && op->retired() && !op->abandoned() && !op->error())
                state->keep_spare_operation(std::move(op));
        }
        dispose(std::move(op));
        state = nullptr;
        comm = MPI_COMM_NULL;
        outcome = OpError{};
        persistent = active = false;
    }

    ~MPIX_Sparse_request_s() {
        if (state != nullptr || op) release();  // a released one holds nothing (and may outlive the library)
    }
};

namespace {

bool is_live(const MPIX_Sparse_request_s *r) {
    std::lock_guard<std::mutex> guard(g_requests_lock);
    return g_requests.count(r) != 0;
}

// The communicator whose error handler a call on *request raises errors through.
MPI_Comm comm_of(const MPIX_Sparse_request *request) {
    if (request == nullptr || *request == nullptr) return MPI_COMM_WORLD;
    std::lock_guard<std::mutex> guard(g_requests_lock);
    return g_requests.count(*request) != 0 ? (*request)->comm : MPI_COMM_WORLD;
}

// A call's arguments checked: where its buffers are, and the communicator's state (null until the
// library has made one for it).
struct CheckedCall {
    BufferKinds kinds;
    CommState *state;
};

CheckedCall checked_arguments(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
    CommState *state = Library::get().check_comm(comm);
    check_reduction_arguments(sendbuf, recvbuf, count, datatype, op);
    if (!device_memory_possible()) return CheckedCall{BufferKinds{}, state};
    return CheckedCall{BufferKinds{memory_kind_of(sendbuf, datatype), memory_kind_of(recvbuf, datatype)}, state};
}

std::unique_ptr<MPIX_Sparse_request_s> make_request(const void *sendbuf, void *recvbuf, MPI_Count count,
                                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                    const Config *settings, BufferKinds kinds, bool blocking) {
    Library &library = Library::get();
    std::unique_ptr<MPIX_Sparse_request_s> r;
    {
        std::lock_guard<std::mutex> guard(g_requests_lock);
        r = std::move(g_spare_request);
    }
    if (!r) r = std::make_unique<MPIX_Sparse_request_s>();
    r->comm = comm;
    CommState &state = library.state_for(comm);
    if (settings == nullptr) {  // not a persistent request: the last call's operation may serve
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        std::unique_ptr<Operation> spare = state.take_spare_operation();
        if (spare && rebind_block_allreduce(*spare, sendbuf, recvbuf, static_cast<std::uint64_t>(count), datatype, op,
                                            kinds, blocking))
            r->op = std::move(spare);
        else
            dispose(std::move(spare));  // its scratch goes back for the new operation
    }
    if (!r->op)
        r->op = make_block_allreduce(state, sendbuf, recvbuf, static_cast<std::uint64_t>(count), datatype, op, kinds,
                                     false, blocking);
    r->attach(state);
    library.enable_progress_thread(settings != nullptr ? settings->progress_thread : state.config().progress_thread);
    return r;
}

// Puts the request's operation in line. The progress thread is woken only for calls that return
// before completion: a blocking call's own wait progresses it.
void start(MPIX_Sparse_request_s &r, bool wake_progress_thread = true) {
    std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
    if (r.state == nullptr) fail(ErrorId::CommInvalid);  // its communicator was freed
    // An operation abandoned when its communicator broke keeps its memory for late transfers: it
    // cannot run again, and the communicator would refuse it anyway.
    if (r.op->abandoned()) throw r.op->error().to_error();
    r.op->reset();
    r.state->start(*r.op);
    r.active = true;
    if (wake_progress_thread) Library::get().notify_progress_thread();
}

MPIX_Sparse_request_s *publish(std::unique_ptr<MPIX_Sparse_request_s> r) {
    std::lock_guard<std::mutex> guard(g_requests_lock);
    if (g_spare_node.empty()) {
        g_requests.insert(r.get());
    } else {
        g_spare_node.value() = r.get();
        g_requests.insert(std::move(g_spare_node));
    }
    return r.release();
}

void destroy(MPIX_Sparse_request *request) {
    std::unique_ptr<MPIX_Sparse_request_s> r(*request);
    *request = MPIX_SPARSE_REQUEST_NULL;
    {
        std::lock_guard<std::mutex> guard(g_requests_lock);
        auto node = g_requests.extract(r.get());
        if (g_spare_node.empty()) g_spare_node = std::move(node);
    }
    r->release();  // outside g_requests_lock: a state closing takes it under the engine lock
    std::lock_guard<std::mutex> guard(g_requests_lock);
    if (!g_spare_request) g_spare_request = std::move(r);
}

MPIX_Sparse_request_s &live_request(MPIX_Sparse_request *request) {
    if (request == nullptr) fail(ErrorId::NullRequest);
    if (*request == nullptr || !is_live(*request)) fail(ErrorId::InvalidRequest);
    return **request;
}

// A retired request's outcome: a non-persistent request is freed, a persistent one made inactive;
// then its error (if any) is thrown.
void complete(MPIX_Sparse_request *request) {
    MPIX_Sparse_request_s &r = **request;
    OpError error;
    {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        error = r.op ? r.op->error() : r.outcome;
    }
    r.active = false;
    if (!r.persistent) destroy(request);
    if (error) throw error.to_error();
}

// Engine lock held (wait_until's predicates are): the operation goes once its communicator is freed.
bool retired_locked(const MPIX_Sparse_request_s &r) {
    return r.op == nullptr || r.op->retired();
}

bool retired(const MPIX_Sparse_request_s &r) {
    std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
    return retired_locked(r);
}

void wait_for(MPIX_Sparse_request *request) {
    MPIX_Sparse_request_s &r = **request;
    if (!r.active) return;
    const auto describe = [&] { return r.op ? r.op->describe() : std::string("a request of a freed communicator"); };
    Library &library = Library::get();
    library.wait_until([&] { return retired_locked(r) || r.op->caller_work_pending(); }, describe);
    Operation *pending = nullptr;
    {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        if (!retired_locked(r)) pending = r.op.get();
    }
    if (pending != nullptr) {
        // Not retired when looked at: its communicator's line holds it, so freeing the communicator
        // waits for it (and an operation abandoned meanwhile is parked, never destroyed).
        pending->run_caller_work();  // outside the engine lock (see Operation::caller_work_pending)
        library.wait_until([&] { return retired_locked(r); }, describe);
    }
    complete(request);
}

int iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPIX_Sparse_request *request, bool blocking) {
    return api_call(comm, [&] {
        if (request == nullptr) fail(ErrorId::NullRequest);
        *request = MPIX_SPARSE_REQUEST_NULL;
        const auto [kinds, known] = checked_arguments(sendbuf, recvbuf, count, datatype, op, comm);
        // Done at once: the request stays MPIX_SPARSE_REQUEST_NULL, which the wait completes.
        if (blocking && !kinds.any_device() &&
            blocking_dense_at_once(known != nullptr ? *known : Library::get().state_for(comm), sendbuf, recvbuf,
                                   static_cast<std::uint64_t>(count), datatype, op))
            return;
        auto r = make_request(sendbuf, recvbuf, count, datatype, op, comm, nullptr, kinds, blocking);
        // Published first: once started, the operation must outlive its place in line.
        MPIX_Sparse_request_s *published = publish(std::move(r));
        *request = published;
        try {
            start(*published, !blocking);
        } catch (...) {
            destroy(request);  // never started: nothing of it is in line
            throw;
        }
    });
}

}  // namespace

extern "C" int MPIX_Sparse_iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm, MPIX_Sparse_request *request) {
    return iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request, false);
}

extern "C" int MPIX_Sparse_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm) {
    // A non-blocking call waited on: one code path. Argument errors are raised by the start (through
    // comm's handler), the call's outcome by the wait. Only its dense path differs: MPI's blocking
    // MPI_Allreduce (faster than the non-blocking one), whose float sums MPI may order differently,
    // made at once when nothing is in line (blocking_dense_at_once).
    MPIX_Sparse_request request = MPIX_SPARSE_REQUEST_NULL;
    const int rc = iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &request, true);
    if (rc != MPI_SUCCESS || request == MPIX_SPARSE_REQUEST_NULL) return rc;  // null: done at once
    return MPIX_Sparse_wait(&request);
}

extern "C" int MPIX_Sparse_allreduce_init(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Info info, MPIX_Sparse_request *request) {
    return api_call(comm, [&] {
        if (request == nullptr) fail(ErrorId::NullRequest);
        *request = MPIX_SPARSE_REQUEST_NULL;
        const Config settings = config_from_info(info);
        const BufferKinds kinds = checked_arguments(sendbuf, recvbuf, count, datatype, op, comm).kinds;
        auto r = make_request(sendbuf, recvbuf, count, datatype, op, comm, &settings, kinds, false);
        r->persistent = true;
        *request = publish(std::move(r));
    });
}

extern "C" int MPIX_Sparse_start(MPIX_Sparse_request *request) {
    return api_call(comm_of(request), [&] {
        MPIX_Sparse_request_s &r = live_request(request);
        if (!r.persistent) fail(ErrorId::RequestNotPersistent);
        if (r.active) fail(ErrorId::RequestActive);
        start(r);
    });
}

extern "C" int MPIX_Sparse_test(MPIX_Sparse_request *request, int *flag) {
    return api_call(comm_of(request), [&] {
        if (flag == nullptr) fail(ErrorId::NullRequest);
        *flag = 0;
        if (request == nullptr) fail(ErrorId::NullRequest);
        if (*request == MPIX_SPARSE_REQUEST_NULL) {
            *flag = 1;
            return;
        }
        MPIX_Sparse_request_s &r = live_request(request);
        if (!r.active || retired(r)) {
            *flag = 1;
            if (r.active) complete(request);
        }
    });
}

extern "C" int MPIX_Sparse_wait(MPIX_Sparse_request *request) {
    return api_call(comm_of(request), [&] {
        if (request == nullptr) fail(ErrorId::NullRequest);
        if (*request == MPIX_SPARSE_REQUEST_NULL) return;
        live_request(request);
        wait_for(request);
    });
}

extern "C" int MPIX_Sparse_waitall(int n, MPIX_Sparse_request requests[]) {
    // Every request is completed even when one fails; the first failure is returned.
    int first_error = MPI_SUCCESS;
    const int rc = api_call(MPI_COMM_WORLD, [&] {
        if (n < 0) fail(ErrorId::NegativeCount);
        if (n > 0 && requests == nullptr) fail(ErrorId::NullRequest);
        for (int i = 0; i < n; ++i)
            if (requests[i] != MPIX_SPARSE_REQUEST_NULL && !is_live(requests[i])) fail(ErrorId::InvalidRequest);
    });
    if (rc != MPI_SUCCESS) return rc;
    for (int i = 0; i < n; ++i) {
        const int one = MPIX_Sparse_wait(&requests[i]);
        if (one != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = one;
    }
    return first_error;
}

extern "C" int MPIX_Sparse_request_free(MPIX_Sparse_request *request) {
    return api_call(comm_of(request), [&] {
        MPIX_Sparse_request_s &r = live_request(request);
        if (r.active) fail(ErrorId::RequestActive);
        destroy(request);
    });
}
