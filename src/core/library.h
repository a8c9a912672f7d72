// Process-wide state: the registry of sparse communicators (cached as an MPI attribute, released on
// MPI_Comm_free and at MPI_Finalize in an order every rank agrees on), the UCX worker shared by all
// of them, message routing by context id, the agreement op, and the progress engine.
//
// Locks. The registry lock guards the communicator map (short). The engine lock guards UCX, the
// routing table and every operation's progress; it is held only for non-blocking steps, never across
// a wait on other ranks: waiting threads release it between steps and sleep without it. Collective
// set-up (a communicator's first use, MPIX_Sparse_comm_create) runs outside both.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/agreement.h"
#include "core/config.h"
#include "core/group.h"
#include "core/half_types.h"
#include "core/link_probe.h"
#include "core/operation.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

class CommState;
class ProgressThread;
class UcxWorker;

class Library {
  public:
    // The library, initialized on first use (MPI must be initialized); thread-safe. Throws Error
    // when MPI is not initialized or already finalized.
    static Library &get();
    // Guards UCX, routing and operation progress (recursive: MPI_Comm_free inside a step runs our
    // delete callback).
    static std::recursive_mutex &engine_lock();

    // The state of `comm`, or null when it has none.
    CommState *find(MPI_Comm comm) const;
    // The state of `comm`, created with the environment defaults on first use (collective; call
    // without the engine lock).
    CommState &state_for(MPI_Comm comm);
    // Attaches a new state to `comm`. Returns it.
    CommState &attach(MPI_Comm comm, std::unique_ptr<CommState> state);

    // Throws Error(CommNull/CommInvalid/CommInter) unless comm is a valid intracommunicator. Touches
    // no error handler (other threads may be raising errors meanwhile). Returns its state, or null
    // when it has none yet (a caller that needs it then saves a second look in the registry).
    CommState *check_comm(MPI_Comm comm) const;

    // Engine lock held.
    UcxWorker &ucx();
    // A context id agreed by every rank of `comm` and unused among this rank's live contexts,
    // registered for `sink` before any peer can learn it (so no message ever arrives for a context
    // that does not exist yet). Collective; call without the engine lock.
    // `sink` may be null when the owner of the context is built later (register_sink): messages for
    // it are then dropped, so only a rank that receives nothing before it calls register_sink may
    // do that (a dedicated worker).
    std::uint32_t agree_context(MPI_Comm comm, MessageSink *sink);
    void register_sink(std::uint32_t context, MessageSink *sink);
    void unregister_sink(std::uint32_t context);

    const AgreementOp &agreement() const { return *agreement_; }
    const HalfTypes &half_types() const { return *half_types_; }
    // What crossing nodes costs, per set of processes: probed by the first communicator over them.
    LinkCosts &link_costs() { return link_costs_; }

    // Exchanges UCX worker addresses over `comm` (collective; call without the engine lock) and
    // returns the links to its ranks, for the communicator `context`. With shared_bytes > 0, payloads
    // to ranks of this machine travel by reference through a shared segment of at most that size.
    // When one rank's own set-up fails, every rank throws (that rank its own error, the others RemoteFailure);
    // inject_failure makes this rank's fail (the test hook mpix_sparse_test_fail=connect).
    std::unique_ptr<Transport> connect(MPI_Comm comm, std::uint32_t context, std::size_t shared_bytes,
                                       bool inject_failure = false);

    // The progress engine (engine lock held): what has work registers itself and leaves when idle.
    void add_busy(Progressable *p);
    void remove_busy(Progressable *p);
    bool has_work() const { return !busy_.empty(); }
    // One step of progress when the library exists and something is in line (every API call makes
    // one: operations advance inside any MPIX_Sparse_* call).
    static void progress_if_running();
    // Starts the progress thread when `setting` (auto | on | off) asks for it and MPI provides
    // MPI_THREAD_MULTIPLE (needed: the thread makes MPI calls). Call without the engine lock.
    void enable_progress_thread(ProgressThreadSetting setting);
    // A non-blocking operation was started: the progress thread (if any) takes over (engine lock held).
    void notify_progress_thread();
    // One non-blocking step of everything: UCX, then every busy communicator and service.
    bool progress_all();
    // Progresses everything until finished() (evaluated under the engine lock) holds. Sleeps
    // without the lock when nothing moves; never spins a core while idle. `describe` names what
    // is awaited in the stall report (MPIX_SPARSE_DEBUG).
    void wait_until(const std::function<bool()> &finished, const std::function<std::string()> &describe = {});

    // A blocking call: starts `op` on `state`, waits until it is retired, disposes of it; throws its
    // error.
    void run(CommState &state, std::unique_ptr<Operation> op);

    // Keeps memory that MPI or UCX may still write (an abandoned operation, sends to a stalled peer)
    // until the process exits: freeing it would let a late transfer write into reused memory.
    void park(std::shared_ptr<void> remains);

  private:
    Library();
    ~Library();
    static int on_comm_delete(MPI_Comm comm, int keyval, void *attribute, void *extra);
    static int on_finalize(MPI_Comm comm, int keyval, void *attribute, void *extra);
    void route(InboundMessage &&message);
    void shutdown();
    void idle_wait(int &idle_polls, std::chrono::steady_clock::time_point &idle_since);

    mutable std::mutex registry_lock_;
    int state_keyval_ = MPI_KEYVAL_INVALID;
    int finalize_keyval_ = MPI_KEYVAL_INVALID;
    std::map<MPI_Comm, CommState *> states_;
    std::unique_ptr<AgreementOp> agreement_;
    std::unique_ptr<HalfTypes> half_types_;
    LinkCosts link_costs_;
    // Engine lock:
    std::unique_ptr<UcxWorker> ucx_;
    std::uint32_t next_context_ = 1;
    std::map<std::uint32_t, MessageSink *> sinks_;
    std::vector<Progressable *> busy_;
    // busy_'s size, read without the engine lock: a call with nothing in line anywhere (a small dense
    // call) takes no lock to learn that there is nothing to progress.
    std::atomic<std::size_t> busy_count_{0};
    std::vector<Progressable *> snapshot_;             // progress_all's copy of busy_
    std::unique_ptr<ProgressThread> progress_thread_;  // created once, stopped at finalize
    std::vector<std::shared_ptr<void>> parked_;        // engine lock; never freed
};

// Destroys a retired operation, or parks it when it was abandoned (engine lock not needed).
void dispose(std::unique_ptr<Operation> op);

}  // namespace mpix::sparse::detail
