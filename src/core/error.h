// Internal error type. The library throws mpix::sparse::detail::Error below the API; the API boundary
// (src/api/api_guard.h) turns it into a registered MPI error code and calls the communicator's
// error handler. Each ErrorId has one fixed message, which MPI_Error_string returns for its code.
#pragma once

#include <mpi.h>

#include <exception>
#include <string>

namespace mpix::sparse::detail {

// The kinds mirror enum MPIX_Sparse_error_kind in the public header: one MPI error class each.
enum class ErrorKind : int { Arg = 0, Comm, Info, Remote, Transport, Protocol, Intern, Timeout, Count_ };

enum class ErrorId : int {
    NegativeCount = 0,
    NullBuffer,
    NullDatatype,
    UnsupportedDatatype,
    NullOp,
    HalfFloatOp,
    AliasedBuffers,
    NullStats,
    NullNewcomm,
    NullCommPointer,
    NegativeNnz,
    IndexOutOfRange,
    NullIndices,
    NullResult,
    NullVector,
    CountTooLarge,
    NullRequest,
    InvalidRequest,
    RequestActive,
    RequestNotPersistent,
    DeviceUnsupported,
    MixedElementMemory,
    DeviceDatatype,
    NegativeSize,
    NullBasePointer,
    UnknownAllocation,
    CommNull,
    CommInvalid,
    CommInter,
    CommNotSparse,
    InfoBlockSize,
    InfoAggregators,
    InfoAggregatorMode,
    InfoAlgorithm,
    InfoPlacement,
    InfoHierarchical,
    InfoDenseBelow,
    InfoTuning,
    InfoTooFewRanks,
    InfoProgressThread,
    InfoTimeout,
    InfoProfile,
    InfoMismatch,
    RemoteArgument,
    ArgumentMismatch,
    RemoteFailure,
    TransportFailure,
    PeerGone,
    ProtocolViolation,
    MpiFailure,
    OutOfMemory,
    InjectedFailure,
    DeviceFailure,
    Timeout,
    Count_
};

struct ErrorDescription {
    ErrorId id;
    ErrorKind kind;
    const char *message;
};

// The fixed description of an error (message starts with "MPIX_Sparse: ").
const ErrorDescription &describe(ErrorId id);

class Error : public std::exception {
  public:
    explicit Error(ErrorId id, std::string detail = {});
    // For ErrorId::MpiFailure: the MPI error code that an MPI call returned, passed through.
    Error(ErrorId id, int mpi_code, std::string detail);

    ErrorId id() const noexcept { return id_; }
    int mpi_code() const noexcept { return mpi_code_; }
    const std::string &detail() const noexcept { return detail_; }
    const char *what() const noexcept override { return what_.c_str(); }

  private:
    ErrorId id_;
    int mpi_code_ = 0;
    std::string detail_;
    std::string what_;
};

[[noreturn]] void fail(ErrorId id, std::string detail = {});

// MPI calls inside the library return errors to it instead of aborting: a failed one throws.
inline void check_mpi(int rc, const char *what) {
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, what);
}

}  // namespace mpix::sparse::detail
