// Process-wide state: the registry of sparse communicators (cached as an MPI attribute, released on
// MPI_Comm_free and at MPI_Finalize), the UCX worker shared by all of them, message routing by
// context id, the agreement op, and the lock that serializes calls.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/agreement.h"
#include "core/config.h"
#include "core/group.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

class CommState;
class UcxWorker;

class Library {
  public:
    // The library, initialized on first use (MPI must be initialized). Throws Error when MPI is not
    // initialized or already finalized.
    static Library &get();
    // Serializes every API call (recursive: MPI_Comm_free inside a call runs our delete callback).
    static std::recursive_mutex &lock();

    // The state of `comm`, or null when it has none.
    CommState *find(MPI_Comm comm) const;
    // The state of `comm`, created with the environment defaults on first use (collective).
    CommState &state_for(MPI_Comm comm);
    // Attaches a new state to `comm` (collective). Returns it.
    CommState &attach(MPI_Comm comm, std::unique_ptr<CommState> state);

    // Throws Error(CommNull/CommInvalid/CommInter) unless comm is a valid intracommunicator.
    void check_comm(MPI_Comm comm) const;

    UcxWorker &ucx();
    // A context id unique among the live sparse communicators of every rank of `comm` (collective).
    std::uint32_t agree_context(MPI_Comm comm);
    void register_sink(std::uint32_t context, MessageSink *sink);
    void unregister_sink(std::uint32_t context);

    const AgreementOp &agreement() const { return *agreement_; }

    // Exchanges UCX worker addresses over `comm` (collective) and returns the links to its ranks.
    std::unique_ptr<Transport> connect(MPI_Comm comm);

  private:
    Library();
    ~Library();
    static int on_comm_delete(MPI_Comm comm, int keyval, void *attribute, void *extra);
    static int on_finalize(MPI_Comm comm, int keyval, void *attribute, void *extra);
    void route(InboundMessage &&message);
    void shutdown();

    int state_keyval_ = MPI_KEYVAL_INVALID;
    int finalize_keyval_ = MPI_KEYVAL_INVALID;
    std::map<MPI_Comm, CommState *> states_;
    std::unique_ptr<AgreementOp> agreement_;
    std::unique_ptr<UcxWorker> ucx_;
    std::uint32_t next_context_ = 1;
    std::map<std::uint32_t, MessageSink *> sinks_;
    std::deque<InboundMessage> unrouted_;  // messages for contexts this rank has not created yet
};

}  // namespace mpix::sparse::detail
