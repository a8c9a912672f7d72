// MPIX_Sparse_comm_create / _comm_free.
#include <memory>

#include "algo/dedicated_aggregator.h"
#include "api/api_guard.h"
#include "core/comm_state.h"
#include "core/config.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse::detail;

extern "C" int MPIX_Sparse_comm_create(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    return api_call(comm, [&] {
        Library &library = Library::get();
        library.check_comm(comm);
        if (newcomm == nullptr) fail(ErrorId::NullNewcomm);
        *newcomm = MPI_COMM_NULL;
        const Config config = agree_on_config(comm, [info] { return config_from_info(info); });
        if (config.mode == AggregatorMode::Dedicated) {
            *newcomm = create_dedicated(comm, config);
            return;
        }
        MPI_Comm dup = MPI_COMM_NULL;
        const int rc = MPI_Comm_dup(comm, &dup);
        if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_dup");
        try {
            auto state = std::make_unique<CommState>(dup, config);
            state->set_created_by_comm_create();
            library.attach(dup, std::move(state));
        } catch (...) {
            MPI_Comm_free(&dup);
            throw;
        }
        *newcomm = dup;
    });
}

extern "C" int MPIX_Sparse_comm_free(MPI_Comm *comm) {
    return api_call(comm != nullptr ? *comm : MPI_COMM_NULL, [&] {
        if (comm == nullptr) fail(ErrorId::NullCommPointer);
        Library &library = Library::get();
        library.check_comm(*comm);
        CommState *state = library.find(*comm);
        if (state == nullptr || !state->created_by_comm_create()) fail(ErrorId::CommNotSparse);
        // Runs the attribute's delete callback: the state waits for its operations in flight, then
        // says goodbye to dedicated aggregators (earlier, they could leave before its contributions).
        const int rc = MPI_Comm_free(comm);
        if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_free");
    });
}
