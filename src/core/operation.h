// What a communicator knows of a collective operation in flight: a state machine that takes the
// messages of its sequence number and advances without ever waiting on other ranks. The algorithms
// implement it (src/algo/); CommState keeps the operations of one communicator in call order, runs
// the oldest, routes messages to it by sequence number, and retires it when it is done.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/error.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

// How an operation ended: no error, or one ErrorId with its detail (classified by id, never by text).
struct OpError {
    ErrorId id = ErrorId::Count_;
    std::string detail;

    explicit operator bool() const { return id != ErrorId::Count_; }
    Error to_error() const { return Error(id, detail); }
};

// A failure that names an operation not started here yet (a malformed message about it): held until
// that operation starts, then given to it. One whose operation never starts here (a later one starts
// first) is dropped. Holds one at a time.
class HeldFailure {
  public:
    // False when one is held already (the caller then handles `error` itself).
    bool hold(std::uint64_t seq, OpError error) {
        if (error_) return false;
        error_ = std::move(error);
        seq_ = seq;
        return true;
    }
    // The failure for operation `seq` as it starts (none: an empty OpError).
    OpError take_for(std::uint64_t seq) {
        if (!error_ || seq_ > seq) return {};
        OpError taken = seq_ == seq ? std::move(error_) : OpError{};
        error_ = OpError{};
        return taken;
    }

  private:
    OpError error_;
    std::uint64_t seq_ = 0;
};

class Operation {
  public:
    virtual ~Operation() = default;

    std::uint64_t seq() const { return seq_; }
    // Set by CommState when the operation is put in line.
    void set_seq(std::uint64_t seq) { seq_ = seq; }

    // Called once, when the operations before it on the communicator are done: starts its first
    // stage (local work and non-blocking MPI requests). May throw; the operation then fails.
    virtual void activate() = 0;
    // A message of this operation's context and sequence number (ownership passes).
    virtual void on_message(InboundMessage &&message) = 0;
    // Advances without waiting; true when anything moved. May throw; the operation then fails.
    virtual bool progress() = 0;
    // Ends the operation with `error` as soon as it safely can: its peers are told, and stages that
    // every rank must enter (the closing barrier) still run, so no rank waits for it.
    virtual void fail(OpError error) = 0;
    // Ends the operation at once, without the stages its peers share: its communicator broke (an
    // operation timed out, or a peer is gone). MPI requests and transfers it started may still write
    // into its memory, so it must not be destroyed afterwards: owners hand it to dispose().
    virtual void abandon(OpError error) = 0;
    bool abandoned() const { return abandoned_; }
    // Makes a retired operation ready to be started again (persistent requests): same arguments,
    // fresh outcome.
    virtual void reset() = 0;
    // True when nothing of it remains in flight that needs this rank (its outcome is final).
    virtual bool done() const = 0;
    virtual const OpError &error() const = 0;
    // What it waits for (diagnostics).
    virtual std::string describe() const { return "operation " + std::to_string(seq_); }

    // Work only the thread of the blocking call that waits for this operation may do, outside the
    // engine lock (the dense path of MPIX_Sparse_allreduce: MPI's blocking MPI_Allreduce). Held under
    // the lock, it would stall other threads' progress, which this call's peers may be waiting for.
    // Pending from the moment a stage asks for it; the operation does not advance until it ran.
    virtual bool caller_work_pending() const { return false; }
    virtual void run_caller_work() {}

    // Retired: done and out of its communicator's line; its owner may destroy it now.
    bool retired() const { return retired_; }
    void set_retired(bool r) { retired_ = r; }

  protected:
    void mark_abandoned() { abandoned_ = true; }

  private:
    std::uint64_t seq_ = 0;
    bool retired_ = false;
    bool abandoned_ = false;
};

// Something the progress engine advances while it has work (a communicator with operations in line,
// a dedicated aggregator serving).
class Progressable {
  public:
    virtual ~Progressable() = default;
    // Advances without waiting; true when anything moved.
    virtual bool progress() = 0;
};

// Scratch memory an operation borrows from its communicator and gives back, so that steady-state
// calls allocate nothing. Memory the transport may still read or write (sends awaiting their
// acknowledgement) keeps it out of reuse until settled.
class Reusable {
  public:
    virtual ~Reusable() = default;
    // Recycles what the transport has finished with; true when nothing is in flight any more.
    virtual bool settle() = 0;
    // Gives up memory the transport may still touch (leaked rather than freed under it).
    virtual void abandon() = 0;
};

}  // namespace mpix::sparse::detail
