// libmpix_sparse_interpose.so: MPI_Allreduce of unmodified programs served by MPIX_Sparse_allreduce
// (PMPI interposition; LD_PRELOAD it, or link it before MPI). Off unless MPIX_SPARSE_INTERPOSE=1.
// A call goes to the library when it is at least MPIX_SPARSE_INTERPOSE_MIN_BYTES (default 65536)
// and its communicator did not opt out with the info key mpix_sparse_interpose=off (read once, the
// first time the communicator is seen); everything else goes to PMPI_Allreduce untouched. The
// library's own allreduces call PMPI_ directly, so nothing recurses. MPI_Iallreduce is not
// interposed: its MPI_Request would have to be completed by MPI_Wait, which does not progress the
// library (a generalized request needs a progress thread: not assumed).
#include <mpi.h>

#include <cstdlib>
#include <cstring>

#include "mpix_sparse/mpix_sparse.h"

namespace {

struct Settings {
    bool enabled = false;
    long long min_bytes = 65536;
};

const Settings &settings() {
    static const Settings s = [] {
        Settings v;
        const char *on = std::getenv("MPIX_SPARSE_INTERPOSE");
        v.enabled = on != nullptr && std::strcmp(on, "1") == 0;
        if (const char *min = std::getenv("MPIX_SPARSE_INTERPOSE_MIN_BYTES")) v.min_bytes = std::atoll(min);
        return v;
    }();
    return s;
}

// Per communicator, cached in an attribute: 1 routed to the library, 2 opted out. The attribute is
// copied with the communicator (a duplicate inherits the choice) and needs no deleting.
int g_keyval = MPI_KEYVAL_INVALID;
enum : long { kUnknown = 0, kSparse = 1, kOptedOut = 2 };

bool opted_out(MPI_Comm comm) {
    if (g_keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &g_keyval, nullptr) != MPI_SUCCESS)
        return true;
    void *value = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, g_keyval, &value, &found);
    if (found) return reinterpret_cast<long>(value) == kOptedOut;
    long choice = kSparse;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) choice = kOptedOut;
    MPI_Info info = MPI_INFO_NULL;
    if (choice == kSparse && PMPI_Comm_get_info(comm, &info) == MPI_SUCCESS && info != MPI_INFO_NULL) {
        char v[16] = {};
        int flag = 0;
        PMPI_Info_get(info, "mpix_sparse_interpose", static_cast<int>(sizeof v) - 1, v, &flag);
        if (flag && std::strcmp(v, "off") == 0) choice = kOptedOut;
        PMPI_Info_free(&info);
    }
    PMPI_Comm_set_attr(comm, g_keyval, reinterpret_cast<void *>(choice));
    return choice == kOptedOut;
}

// The library's 16-bit float types (MPIX_FLOAT16, MPIX_BFLOAT16): MPI cannot reduce them, so the
// library takes every call on them, whatever its size. Known by name, which costs a lookup only for
// derived types and does not start the library for programs that never use it.
bool library_only_type(MPI_Datatype datatype) {
    int ints = 0, addresses = 0, types = 0, combiner = MPI_COMBINER_NAMED;
    if (PMPI_Type_get_envelope(datatype, &ints, &addresses, &types, &combiner) != MPI_SUCCESS ||
        combiner == MPI_COMBINER_NAMED)
        return false;
    char name[MPI_MAX_OBJECT_NAME] = {};
    int length = 0;
    PMPI_Type_get_name(datatype, name, &length);
    return std::strcmp(name, "MPIX_FLOAT16") == 0 || std::strcmp(name, "MPIX_BFLOAT16") == 0;
}

}  // namespace

extern "C" int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
    const Settings &s = settings();
    int size = 0;
    if (!s.enabled || comm == MPI_COMM_NULL || PMPI_Type_size(datatype, &size) != MPI_SUCCESS ||
        (static_cast<long long>(count) * size < s.min_bytes && !library_only_type(datatype)) || opted_out(comm))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return MPIX_Sparse_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
