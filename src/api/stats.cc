// MPIX_Sparse_stats_get / _in_place / _reset, MPIX_Sparse_profile_get: local, never collective (a communicator without
// state reads zero).
#include "api/api_guard.h"
#include "core/comm_state.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse::detail;

extern "C" int MPIX_Sparse_stats_get(MPI_Comm comm, MPIX_Sparse_stats *stats) {
    return api_call(comm, [&] {
        Library &library = Library::get();
        library.check_comm(comm);
        if (stats == nullptr) fail(ErrorId::NullStats);
        *stats = MPIX_Sparse_stats{};
        if (CommState *state = library.find(comm)) {
            std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
            const CommStats &s = state->stats();
            stats->calls = s.calls;
            stats->bytes_sent = s.bytes_sent;
            stats->bytes_received = s.bytes_received;
            stats->dense_fallbacks = s.dense_fallbacks;
            stats->last_algorithm = s.last_algorithm;
        }
    });
}

extern "C" int MPIX_Sparse_stats_in_place(MPI_Comm comm, MPI_Count *bytes) {
    return api_call(comm, [&] {
        Library &library = Library::get();
        library.check_comm(comm);
        if (bytes == nullptr) fail(ErrorId::NullStats);
        *bytes = 0;
        if (CommState *state = library.find(comm)) {
            std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
            *bytes = state->stats().bytes_in_place;
        }
    });
}

extern "C" int MPIX_Sparse_stats_reset(MPI_Comm comm) {
    return api_call(comm, [&] {
        Library &library = Library::get();
        library.check_comm(comm);
        if (CommState *state = library.find(comm)) {
            std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
            state->stats() = CommStats{};
            state->profile_totals() = PhaseProfile{};
        }
    });
}

extern "C" int MPIX_Sparse_profile_get(MPI_Comm comm, MPIX_Sparse_profile *profile) {
    return api_call(comm, [&] {
        Library &library = Library::get();
        library.check_comm(comm);
        if (profile == nullptr) fail(ErrorId::NullStats);
        *profile = MPIX_Sparse_profile{};
        if (CommState *state = library.find(comm)) {
            std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
            const PhaseProfile &p = state->profile_totals();
            auto seconds = [&](Phase phase) {
                return static_cast<double>(p.ns[static_cast<std::size_t>(phase)]) * 1e-9;
            };
            profile->calls = p.calls;
            profile->scan = seconds(Phase::Scan);
            profile->agreement = seconds(Phase::Agreement);
            profile->dense = seconds(Phase::Dense);
            profile->allgather = seconds(Phase::Allgather);
            profile->stream = seconds(Phase::Stream);
            profile->reduce = seconds(Phase::Reduce);
            profile->result_write = seconds(Phase::ResultWrite);
            profile->barrier = seconds(Phase::Barrier);
            profile->node_broadcast = seconds(Phase::NodeBroadcast);
        }
    });
}
