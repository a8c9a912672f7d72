#include "core/library.h"

#include <utility>

#include "algo/message_queue.h"
#include "core/comm_state.h"
#include "core/error.h"
#include "core/error_registry.h"
#include "transport/ucx/ucx_worker.h"

namespace mpix::sparse::detail {
namespace {

Library *g_library = nullptr;

// MPI calls inside the library return errors to it instead of aborting.
void check_mpi(int rc, const char *what) {
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, what);
}

}  // namespace

std::recursive_mutex &Library::lock() {
    static std::recursive_mutex m;
    return m;
}

Library &Library::get() {
    if (g_library != nullptr) return *g_library;
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) throw Error(ErrorId::MpiFailure, MPI_ERR_OTHER, "MPI is not initialized");
    g_library = new Library();
    return *g_library;
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
}

Library::~Library() = default;

int Library::on_comm_delete(MPI_Comm comm, int, void *attribute, void *) {
    std::lock_guard<std::recursive_mutex> guard(lock());
    auto *state = static_cast<CommState *>(attribute);
    if (g_library != nullptr) g_library->states_.erase(comm);
    delete state;
    return MPI_SUCCESS;
}

int Library::on_finalize(MPI_Comm, int, void *attribute, void *) {
    std::lock_guard<std::recursive_mutex> guard(lock());
    auto *library = static_cast<Library *>(attribute);
    library->shutdown();
    delete library;
    g_library = nullptr;
    return MPI_SUCCESS;
}

void Library::shutdown() {
    // Release every communicator's state while MPI still works (their attribute delete callbacks run).
    std::vector<MPI_Comm> comms;
    for (auto &[comm, state] : states_)
        comms.push_back(comm);
    for (MPI_Comm comm : comms)
        MPI_Comm_delete_attr(comm, state_keyval_);
    states_.clear();
    for (InboundMessage &m : unrouted_)
        ucx_->release(m);
    unrouted_.clear();
    ucx_.reset();
    agreement_.reset();
    MPI_Comm_free_keyval(&state_keyval_);
    MPI_Comm_free_keyval(&finalize_keyval_);
}

CommState *Library::find(MPI_Comm comm) const {
    auto it = states_.find(comm);
    return it == states_.end() ? nullptr : it->second;
}

CommState &Library::state_for(MPI_Comm comm) {
    if (CommState *s = find(comm)) return *s;
    return attach(comm, std::make_unique<CommState>(comm, environment_defaults()));
}

CommState &Library::attach(MPI_Comm comm, std::unique_ptr<CommState> state) {
    check_mpi(MPI_Comm_set_attr(comm, state_keyval_, state.get()), "MPI_Comm_set_attr");
    CommState *raw = state.release();
    states_[comm] = raw;
    return *raw;
}

void Library::check_comm(MPI_Comm comm) const {
    if (comm == MPI_COMM_NULL) fail(ErrorId::CommNull);
    if (states_.count(comm) != 0) return;
    // An unknown handle: ask MPI, with MPI_COMM_WORLD's handler (where MPI reports invalid
    // communicators) set to return, so a bad handle yields an error code rather than an abort.
    MPI_Errhandler saved = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int inter = 0;
    const int rc = MPI_Comm_test_inter(comm, &inter);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved);
    MPI_Errhandler_free(&saved);
    if (rc != MPI_SUCCESS) fail(ErrorId::CommInvalid);
    if (inter) fail(ErrorId::CommInter);
}

UcxWorker &Library::ucx() {
    if (!ucx_) ucx_ = std::make_unique<UcxWorker>([this](InboundMessage &&m) { route(std::move(m)); });
    return *ucx_;
}

std::uint32_t Library::agree_context(MPI_Comm comm) {
    unsigned next = next_context_;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &next, 1, MPI_UNSIGNED, MPI_MAX, comm), "MPI_Allreduce");
    next_context_ = next + 1;
    return next;
}

void Library::register_sink(std::uint32_t context, MessageSink *sink) {
    sinks_[context] = sink;
    // Messages that arrived before this rank created the context.
    deliver_queued(
        unrouted_, [&](const InboundMessage &m) { return m.header.context == context; },
        [&](InboundMessage &&m) { sink->on_message(std::move(m)); });
}

void Library::unregister_sink(std::uint32_t context) {
    sinks_.erase(context);
}

void Library::route(InboundMessage &&message) {
    // Only the context is needed to route; the sink checks the rest and reports what is malformed to
    // the operation waiting for it (a silent drop would leave it waiting forever).
    const std::uint32_t context = message.header.context;
    if (message.header.magic != kWireMagic) {
        ucx_->release(message);
        return;
    }
    if (auto it = sinks_.find(context); it != sinks_.end()) {
        it->second->on_message(std::move(message));
    } else if (context >= next_context_) {
        unrouted_.push_back(std::move(message));  // a context this rank is about to create
    } else {
        ucx_->release(message);  // a context already gone here
    }
}

std::unique_ptr<Transport> Library::connect(MPI_Comm comm) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    UcxWorker &worker = ucx();
    const std::vector<char> &mine = worker.address();
    int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size));
    check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), "MPI_Allgather");
    std::vector<int> displs(static_cast<std::size_t>(size), 0);
    for (int r = 1; r < size; ++r)
        displs[static_cast<std::size_t>(r)] =
            displs[static_cast<std::size_t>(r) - 1] + lengths[static_cast<std::size_t>(r) - 1];
    std::vector<char> all(static_cast<std::size_t>(displs.back() + lengths.back()));
    check_mpi(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR, comm),
              "MPI_Allgatherv");
    std::vector<ucp_ep_h> endpoints(static_cast<std::size_t>(size), nullptr);
    for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        endpoints[static_cast<std::size_t>(r)] =
            worker.endpoint(std::string(all.data() + displs[static_cast<std::size_t>(r)],
                                        static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
    }
    return std::make_unique<UcxLinks>(worker, std::move(endpoints));
}

}  // namespace mpix::sparse::detail
