// MPIX_Sparse_allreduce: argument checks, then the block-sparse operation, started and waited on.
#include <cstdint>

#include "algo/block_allreduce.h"
#include "api/api_guard.h"
#include "api/arguments.h"
#include "core/comm_state.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse::detail;

extern "C" int MPIX_Sparse_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm) {
    return api_call(comm, [&] {
        Library &library = Library::get();
        library.check_comm(comm);
        check_reduction_arguments(sendbuf, recvbuf, count, datatype, op);
        CommState &state = library.state_for(comm);
        auto operation =
            make_block_allreduce(state, sendbuf, recvbuf, static_cast<std::uint64_t>(count), datatype, op);
        library.run(state, *operation);
    });
}
