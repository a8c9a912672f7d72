// MPIX_Sparse_stats_get / _reset: local, never collective (a communicator without state reads zero).
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

extern "C" int MPIX_Sparse_stats_reset(MPI_Comm comm) {
    return api_call(comm, [&] {
        Library &library = Library::get();
        library.check_comm(comm);
        if (CommState *state = library.find(comm)) {
            std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
            state->stats() = CommStats{};
        }
    });
}
