#include "core/error.h"

#include <array>
#include <utility>

namespace mpix::sparse::detail {
namespace {

constexpr std::array<ErrorDescription, static_cast<int>(ErrorId::Count_)> kDescriptions{{
    {ErrorId::NegativeCount, ErrorKind::Arg, "MPIX_Sparse: count is negative"},
    {ErrorId::NullBuffer, ErrorKind::Arg,
     "MPIX_Sparse: sendbuf or recvbuf is NULL (or MPI_IN_PLACE as recvbuf) while count > 0"},
    {ErrorId::NullDatatype, ErrorKind::Arg, "MPIX_Sparse: datatype is MPI_DATATYPE_NULL"},
    {ErrorId::UnsupportedDatatype, ErrorKind::Arg, "MPIX_Sparse: datatype is not committed or has no fixed size"},
    {ErrorId::NullOp, ErrorKind::Arg, "MPIX_Sparse: op is MPI_OP_NULL"},
    {ErrorId::HalfFloatOp, ErrorKind::Arg,
     "MPIX_Sparse: MPIX_FLOAT16 and MPIX_BFLOAT16 reduce with MPI_SUM, MPI_PROD, MPI_MAX or MPI_MIN only"},
    {ErrorId::AliasedBuffers, ErrorKind::Arg,
     "MPIX_Sparse: sendbuf and recvbuf overlap; use MPI_IN_PLACE for an in-place reduction"},
    {ErrorId::NullStats, ErrorKind::Arg, "MPIX_Sparse: stats, profile or bytes pointer is NULL"},
    {ErrorId::NullNewcomm, ErrorKind::Arg, "MPIX_Sparse: newcomm pointer is NULL"},
    {ErrorId::NullCommPointer, ErrorKind::Arg, "MPIX_Sparse: communicator pointer is NULL"},
    {ErrorId::NegativeNnz, ErrorKind::Arg, "MPIX_Sparse: nnz is negative"},
    {ErrorId::IndexOutOfRange, ErrorKind::Arg, "MPIX_Sparse: an index is negative or not smaller than count"},
    {ErrorId::NullIndices, ErrorKind::Arg, "MPIX_Sparse: indices or values is NULL while nnz > 0"},
    {ErrorId::NullResult, ErrorKind::Arg, "MPIX_Sparse: result pointer is NULL"},
    {ErrorId::NullVector, ErrorKind::Arg, "MPIX_Sparse: sparse vector handle is NULL or was already freed"},
    {ErrorId::CountTooLarge, ErrorKind::Arg,
     "MPIX_Sparse: count times the datatype size does not fit in this process's address space"},
    {ErrorId::NullRequest, ErrorKind::Arg, "MPIX_Sparse: request pointer (or requests array, or flag) is NULL"},
    {ErrorId::InvalidRequest, ErrorKind::Arg,
     "MPIX_Sparse: request is not a live request (already freed, completed, or never created)"},
    {ErrorId::RequestActive, ErrorKind::Arg,
     "MPIX_Sparse: request is active: complete it with MPIX_Sparse_wait or MPIX_Sparse_test first"},
    {ErrorId::RequestNotPersistent, ErrorKind::Arg,
     "MPIX_Sparse: MPIX_Sparse_start takes persistent requests (from MPIX_Sparse_allreduce_init)"},
    {ErrorId::DeviceUnsupported, ErrorKind::Arg,
     "MPIX_Sparse: a buffer is in GPU memory, but this library was built without CUDA support or finds no "
     "usable CUDA device (see MPIX_SPARSE_DEBUG=1)"},
    {ErrorId::MixedElementMemory, ErrorKind::Arg,
     "MPIX_Sparse: indices and values must both be in host memory or both in GPU memory"},
    {ErrorId::DeviceDatatype, ErrorKind::Arg,
     "MPIX_Sparse: a GPU buffer needs a datatype that is contiguous from offset 0 (size equal to extent, lower "
     "bound 0)"},
    {ErrorId::NegativeSize, ErrorKind::Arg, "MPIX_Sparse: MPIX_Sparse_alloc_mem: size is negative"},
    {ErrorId::NullBasePointer, ErrorKind::Arg, "MPIX_Sparse: MPIX_Sparse_alloc_mem: baseptr is NULL"},
    {ErrorId::UnknownAllocation, ErrorKind::Arg,
     "MPIX_Sparse: MPIX_Sparse_free_mem: base is not memory from MPIX_Sparse_alloc_mem (or was freed already)"},
    {ErrorId::CommNull, ErrorKind::Comm, "MPIX_Sparse: communicator is MPI_COMM_NULL"},
    {ErrorId::CommInvalid, ErrorKind::Comm,
     "MPIX_Sparse: communicator is not a valid communicator (freed or never created)"},
    {ErrorId::CommInter, ErrorKind::Comm,
     "MPIX_Sparse: intercommunicators are not supported; use an intracommunicator"},
    {ErrorId::CommNotSparse, ErrorKind::Comm, "MPIX_Sparse: communicator was not created by MPIX_Sparse_comm_create"},
    {ErrorId::InfoBlockSize, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_block_size (MPIX_SPARSE_BLOCK_SIZE): expected an "
     "integer in [1, 1048576]"},
    {ErrorId::InfoAggregators, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_aggregators (MPIX_SPARSE_AGGREGATORS): expected an "
     "integer >= 1 (colocated: at most the number of ranks; dedicated: fewer than the number of "
     "ranks)"},
    {ErrorId::InfoAggregatorMode, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_aggregator_mode (MPIX_SPARSE_AGGREGATOR_MODE): "
     "expected colocated or dedicated"},
    {ErrorId::InfoAlgorithm, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_algorithm (MPIX_SPARSE_ALGORITHM): expected auto, "
     "aggregator, allgather or dense"},
    {ErrorId::InfoPlacement, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_placement (MPIX_SPARSE_PLACEMENT): expected spread "
     "or packed"},
    {ErrorId::InfoHierarchical, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_hierarchical (MPIX_SPARSE_HIERARCHICAL): expected "
     "auto, on or off"},
    {ErrorId::InfoDenseBelow, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_dense_below (MPIX_SPARSE_DENSE_BELOW): expected a "
     "byte count >= 0"},
    {ErrorId::InfoTuning, ErrorKind::Info,
     "MPIX_Sparse: invalid tuning value: MPIX_SPARSE_MESSAGE_BYTES, _WINDOW, _COST_* take a positive "
     "number (the dense table: mib:ns pairs, sizes increasing); mpix_sparse_node_multicast on or off; "
     "mpix_sparse_tune auto, on or off"},
    {ErrorId::InfoTooFewRanks, ErrorKind::Info,
     "MPIX_Sparse: dedicated aggregators need at least two ranks (one aggregator and one worker)"},
    {ErrorId::InfoProgressThread, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_progress_thread (MPIX_SPARSE_PROGRESS_THREAD): expected auto, on "
     "or off"},
    {ErrorId::InfoTimeout, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_timeout (MPIX_SPARSE_TIMEOUT): expected seconds >= 0 (0: no "
     "timeout)"},
    {ErrorId::InfoProfile, ErrorKind::Info,
     "MPIX_Sparse: invalid value for mpix_sparse_profile (MPIX_SPARSE_PROFILE): expected on or off (or 1, 0)"},
    {ErrorId::InfoMismatch, ErrorKind::Info,
     "MPIX_Sparse: ranks set this communicator's settings apart (info keys or MPIX_SPARSE_* variables); "
     "all but _progress_thread, _profile, _node_multicast, the timeout's length and _SHARED_MEMORY_BYTES "
     "must be equal"},
    {ErrorId::RemoteArgument, ErrorKind::Remote,
     "MPIX_Sparse: another rank passed invalid arguments to this collective call"},
    {ErrorId::ArgumentMismatch, ErrorKind::Remote,
     "MPIX_Sparse: ranks passed different count, datatype or op to the same collective call (or mixed "
     "the element variant's dense and sparse outputs, or set mpix_sparse_algorithm or _tune apart)"},
    {ErrorId::RemoteFailure, ErrorKind::Remote,
     "MPIX_Sparse: another rank failed this collective call and told this rank (its own error names the cause)"},
    {ErrorId::TransportFailure, ErrorKind::Transport,
     "MPIX_Sparse: the UCX transport failed (see stderr with MPIX_SPARSE_DEBUG=1)"},
    {ErrorId::PeerGone, ErrorKind::Transport,
     "MPIX_Sparse: a peer process is gone (it exited, or its UCX endpoint failed); the communicator is broken"},
    {ErrorId::ProtocolViolation, ErrorKind::Protocol,
     "MPIX_Sparse: a malformed or unexpected message arrived from a peer and was dropped"},
    {ErrorId::MpiFailure, ErrorKind::Intern, "MPIX_Sparse: an MPI call inside the library failed"},
    {ErrorId::OutOfMemory, ErrorKind::Intern, "MPIX_Sparse: out of memory"},
    {ErrorId::InjectedFailure, ErrorKind::Intern,
     "MPIX_Sparse: a failure injected for testing (info key mpix_sparse_test_fail)"},
    {ErrorId::DeviceFailure, ErrorKind::Intern, "MPIX_Sparse: a CUDA call on a device buffer failed"},
    {ErrorId::Timeout, ErrorKind::Timeout,
     "MPIX_Sparse: an operation made no progress within mpix_sparse_timeout; the communicator is broken"},
}};

// The table is indexed by ErrorId: catch a misordered entry at compile time.
constexpr bool table_is_ordered() {
    for (std::size_t i = 0; i < kDescriptions.size(); ++i)
        if (static_cast<std::size_t>(kDescriptions[i].id) != i) return false;
    return true;
}
static_assert(table_is_ordered(), "kDescriptions must list ErrorIds in declaration order");

}  // namespace

const ErrorDescription &describe(ErrorId id) {
    return kDescriptions[static_cast<std::size_t>(id)];
}

Error::Error(ErrorId id, std::string detail) : id_(id), detail_(std::move(detail)) {
    what_ = describe(id).message;
    if (!detail_.empty()) what_ += " (" + detail_ + ")";
}

Error::Error(ErrorId id, int mpi_code, std::string detail) : Error(id, std::move(detail)) {
    mpi_code_ = mpi_code;
}

void fail(ErrorId id, std::string detail) {
    throw Error(id, std::move(detail));
}

}  // namespace mpix::sparse::detail
