// Helpers for collective tests.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/element_type.h"
#include "core/fnv1a.h"
#include "mpix_sparse/mpix_sparse.h"

namespace mpix::sparse::detail::testing {

inline int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}
inline int world_size() {
    int s = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

// True on every rank iff `ok` holds on every rank of comm.
inline bool everywhere(bool ok, MPI_Comm comm = MPI_COMM_WORLD) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_LAND, comm);
    return v != 0;
}

// A hash of a buffer: compares results across ranks cheaply.
inline std::uint64_t digest(const void *p, std::size_t n) {
    mpix::sparse::detail::Fnv1a h;
    h.add_bytes(p, n);
    return h.value();
}

// True iff the buffer is bitwise identical on every rank of comm.
inline bool same_on_all_ranks(const void *p, std::size_t n, MPI_Comm comm) {
    const std::uint64_t h = digest(p, n);
    std::uint64_t lo = h, hi = h;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    return lo == hi;
}

struct TypeCase {
    MPI_Datatype mpi;
    ElementType type;
    const char *name;
};

// Every MPI type of the sparse path, with the element type its bytes follow.
inline std::vector<TypeCase> sparse_types() {
    return {{MPI_FLOAT, ElementType::F32, "MPI_FLOAT"},
            {MPI_DOUBLE, ElementType::F64, "MPI_DOUBLE"},
            {MPI_INT, ElementType::I32, "MPI_INT"},
            {MPI_INT32_T, ElementType::I32, "MPI_INT32_T"},
            {MPI_INT64_T, ElementType::I64, "MPI_INT64_T"},
            {MPI_LONG, ElementType::I64, "MPI_LONG"},
            {MPI_LONG_LONG, ElementType::I64, "MPI_LONG_LONG"},
            {MPI_UNSIGNED, ElementType::U32, "MPI_UNSIGNED"},
            {MPI_UINT32_T, ElementType::U32, "MPI_UINT32_T"},
            {MPI_UINT64_T, ElementType::U64, "MPI_UINT64_T"}};
}

// A communicator configured through MPI_Info keys; freed on destruction.
class SparseComm {
  public:
    SparseComm(MPI_Comm parent, std::vector<std::pair<std::string, std::string>> keys) {
        MPI_Info info;
        MPI_Info_create(&info);
        for (auto &[k, v] : keys)
            MPI_Info_set(info, k.c_str(), v.c_str());
        rc_ = MPIX_Sparse_comm_create(parent, info, &comm_);
        MPI_Info_free(&info);
        if (comm_ != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    }
    ~SparseComm() {
        if (comm_ != MPI_COMM_NULL) MPIX_Sparse_comm_free(&comm_);
    }
    SparseComm(const SparseComm &) = delete;
    SparseComm &operator=(const SparseComm &) = delete;
    MPI_Comm get() const { return comm_; }
    int rc() const { return rc_; }

  private:
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rc_ = MPI_SUCCESS;
};

// Communicators configured through info keys, created once per name and reused by many cases.
class CommCache {
  public:
    using Keys = std::vector<std::pair<std::string, std::string>>;
    MPI_Comm get(const std::string &name, const Keys &keys) {
        auto it = comms_.find(name);
        if (it == comms_.end()) it = comms_.emplace(name, std::make_unique<SparseComm>(MPI_COMM_WORLD, keys)).first;
        return it->second->get();
    }

  private:
    std::map<std::string, std::unique_ptr<SparseComm>> comms_;
};

// The MPI error class of a return code (MPI_SUCCESS for success).
inline int class_of(int rc) {
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

inline MPIX_Sparse_stats stats_of(MPI_Comm comm) {
    MPIX_Sparse_stats s{};
    MPIX_Sparse_stats_get(comm, &s);
    return s;
}

}  // namespace mpix::sparse::detail::testing
