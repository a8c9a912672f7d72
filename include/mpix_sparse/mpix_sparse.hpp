// A thin C++17 layer over the C API of mpix_sparse: RAII for configured communicators and sparse
// vectors, exceptions carrying the MPI error code, and element types deduced from the buffer.
//
//   mpix::sparse::Communicator comm(MPI_COMM_WORLD, {{"mpix_sparse_block_size", "128"}});
//   comm.allreduce(grad.data(), sum.data(), grad.size());            // MPI_SUM
//   auto v = comm.allreduce_elements_sparse(indices, values, count); // sorted union
//   mpix::sparse::Request r = comm.iallreduce(grad.data(), sum.data(), grad.size());
//   ... compute ...; r.wait();
//   auto p = comm.allreduce_init(grad.data(), sum.data(), grad.size()); // persistent
//   for (...) { p.start(); ...; p.wait(); }
//
// Errors throw mpix::sparse::Error (the communicator's handler must return, e.g. MPI_ERRORS_RETURN,
// for the code to reach the exception; with MPI_ERRORS_ARE_FATAL the job aborts first, as in MPI).
#ifndef MPIX_SPARSE_HPP
#define MPIX_SPARSE_HPP

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mpix_sparse/mpix_sparse.h"

namespace mpix::sparse {

// An MPI error code with its MPI_Error_string text.
class Error : public std::runtime_error {
  public:
    explicit Error(int code) : std::runtime_error(text_of(code)), code_(code) {}
    int code() const noexcept { return code_; }
    int error_class() const noexcept {
        int cls = MPI_ERR_UNKNOWN;
        MPI_Error_class(code_, &cls);
        return cls;
    }

  private:
    static std::string text_of(int code) {
        char text[MPI_MAX_ERROR_STRING];
        int length = 0;
        if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
        return std::string(text, static_cast<std::size_t>(length));
    }
    int code_;
};

inline void check(int code) {
    if (code != MPI_SUCCESS) throw Error(code);
}

// The MPI datatype of T (the types of the sparse path, and any other with MPI_BYTE-free layout via
// an explicit datatype argument).
template <class T>
MPI_Datatype datatype_of() {
    if constexpr (std::is_same_v<T, float>)
        return MPI_FLOAT;
    else if constexpr (std::is_same_v<T, double>)
        return MPI_DOUBLE;
    else if constexpr (std::is_same_v<T, std::int32_t>)
        return MPI_INT32_T;
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return MPI_INT64_T;
    else if constexpr (std::is_same_v<T, std::uint32_t>)
        return MPI_UINT32_T;
    else if constexpr (std::is_same_v<T, std::uint64_t>)
        return MPI_UINT64_T;
    else
        static_assert(!sizeof(T), "no MPI datatype known for T: pass one explicitly");
}

// n zeroed elements of T in memory that the ranks of a machine read in place (MPIX_Sparse_alloc_mem):
// send and receive buffers in it are reduced and copied from where they are. Freed on destruction.
template <class T>
class SharedArray {
    static_assert(std::is_trivially_copyable_v<T>, "SharedArray holds trivially copyable elements");

  public:
    SharedArray() = default;
    explicit SharedArray(std::size_t n) : size_(n) {
        if (n > static_cast<std::size_t>(PTRDIFF_MAX) / sizeof(T)) throw std::length_error("SharedArray: too large");
        void *p = nullptr;
        check(MPIX_Sparse_alloc_mem(static_cast<MPI_Aint>(n * sizeof(T)), MPI_INFO_NULL, &p));
        data_ = static_cast<T *>(p);
    }
    ~SharedArray() {
        if (data_ != nullptr) MPIX_Sparse_free_mem(data_);
    }
    SharedArray(SharedArray &&o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    SharedArray &operator=(SharedArray &&o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        return *this;
    }
    SharedArray(const SharedArray &) = delete;
    SharedArray &operator=(const SharedArray &) = delete;

    T *data() { return data_; }
    const T *data() const { return data_; }
    std::size_t size() const { return size_; }
    T *begin() { return data_; }
    T *end() { return data_ + size_; }
    const T *begin() const { return data_; }
    const T *end() const { return data_ + size_; }
    T &operator[](std::size_t i) { return data_[i]; }
    const T &operator[](std::size_t i) const { return data_[i]; }

  private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

// A sorted sparse result owned by the library until destruction.
template <class T>
class SparseVector {
  public:
    explicit SparseVector(MPIX_Sparse_vector v) : v_(v) {
        const void *values = nullptr;
        check(MPIX_Sparse_vector_get(v_, &size_, &indices_, &values));
        values_ = static_cast<const T *>(values);
    }
    ~SparseVector() {
        if (v_ != nullptr) MPIX_Sparse_vector_free(&v_);
    }
    SparseVector(SparseVector &&o) noexcept
        : v_(std::exchange(o.v_, nullptr)), size_(o.size_), indices_(o.indices_), values_(o.values_) {}
    SparseVector &operator=(SparseVector &&o) noexcept {
        std::swap(v_, o.v_);
        std::swap(size_, o.size_);
        std::swap(indices_, o.indices_);
        std::swap(values_, o.values_);
        return *this;
    }
    SparseVector(const SparseVector &) = delete;
    SparseVector &operator=(const SparseVector &) = delete;

    std::size_t size() const { return static_cast<std::size_t>(size_); }
    const std::int64_t *indices() const { return indices_; }
    const T *values() const { return values_; }

  private:
    MPIX_Sparse_vector v_ = nullptr;
    MPI_Count size_ = 0;
    const std::int64_t *indices_ = nullptr;
    const T *values_ = nullptr;
};

// A non-blocking or persistent request: waits for an active request and frees it on destruction
// (MPI forbids leaving a request active, so destruction completes it first; errors there are lost,
// call wait() to see them).
class Request {
  public:
    Request() = default;
    explicit Request(MPIX_Sparse_request r) : r_(r) {}
    ~Request() {
        if (r_ == MPIX_SPARSE_REQUEST_NULL) return;
        MPIX_Sparse_wait(&r_);
        if (r_ != MPIX_SPARSE_REQUEST_NULL) MPIX_Sparse_request_free(&r_);
    }
    Request(Request &&o) noexcept : r_(std::exchange(o.r_, MPIX_SPARSE_REQUEST_NULL)) {}
    Request &operator=(Request &&o) noexcept {
        std::swap(r_, o.r_);
        return *this;
    }
    Request(const Request &) = delete;
    Request &operator=(const Request &) = delete;

    // Persistent requests only.
    void start() { check(MPIX_Sparse_start(&r_)); }
    bool test() {
        int flag = 0;
        check(MPIX_Sparse_test(&r_, &flag));
        return flag != 0;
    }
    void wait() { check(MPIX_Sparse_wait(&r_)); }
    MPIX_Sparse_request get() const { return r_; }

  private:
    MPIX_Sparse_request r_ = MPIX_SPARSE_REQUEST_NULL;
};

// A communicator configured by MPIX_Sparse_comm_create, freed on destruction. In dedicated mode an
// aggregator rank's constructor returns only when the workers are done; valid() is then false.
class Communicator {
  public:
    using Settings = std::initializer_list<std::pair<const char *, const char *>>;

    explicit Communicator(MPI_Comm parent, Settings settings = {}) {
        MPI_Info info = MPI_INFO_NULL;
        if (settings.size() > 0) {
            MPI_Info_create(&info);
            for (const auto &[key, value] : settings)
                MPI_Info_set(info, key, value);
        }
        const int rc = MPIX_Sparse_comm_create(parent, info, &comm_);
        if (info != MPI_INFO_NULL) MPI_Info_free(&info);
        check(rc);
        if (comm_ != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    }
    ~Communicator() {
        if (comm_ != MPI_COMM_NULL) MPIX_Sparse_comm_free(&comm_);
    }
    Communicator(const Communicator &) = delete;
    Communicator &operator=(const Communicator &) = delete;

    bool valid() const { return comm_ != MPI_COMM_NULL; }
    MPI_Comm get() const { return comm_; }

    template <class T>
    void allreduce(const T *send, T *recv, std::size_t count, MPI_Op op = MPI_SUM) const {
        check(MPIX_Sparse_allreduce(send, recv, static_cast<MPI_Count>(count), datatype_of<T>(), op, comm_));
    }
    template <class T>
    void allreduce_in_place(T *data, std::size_t count, MPI_Op op = MPI_SUM) const {
        check(MPIX_Sparse_allreduce(MPI_IN_PLACE, data, static_cast<MPI_Count>(count), datatype_of<T>(), op, comm_));
    }
    template <class T>
    Request iallreduce(const T *send, T *recv, std::size_t count, MPI_Op op = MPI_SUM) const {
        MPIX_Sparse_request r = MPIX_SPARSE_REQUEST_NULL;
        check(MPIX_Sparse_iallreduce(send, recv, static_cast<MPI_Count>(count), datatype_of<T>(), op, comm_, &r));
        return Request(r);
    }
    template <class T>
    Request allreduce_init(const T *send, T *recv, std::size_t count, MPI_Op op = MPI_SUM,
                           MPI_Info info = MPI_INFO_NULL) const {
        MPIX_Sparse_request r = MPIX_SPARSE_REQUEST_NULL;
        check(MPIX_Sparse_allreduce_init(send, recv, static_cast<MPI_Count>(count), datatype_of<T>(), op, comm_, info,
                                         &r));
        return Request(r);
    }
    template <class T>
    void allreduce_elements(const std::vector<std::int64_t> &indices, const std::vector<T> &values, T *recv,
                            std::size_t count, MPI_Op op = MPI_SUM) const {
        if (indices.size() != values.size()) throw std::invalid_argument("indices and values differ in length");
        check(MPIX_Sparse_allreduce_elements(static_cast<MPI_Count>(indices.size()), indices.data(), values.data(),
                                             recv, static_cast<MPI_Count>(count), datatype_of<T>(), op, comm_));
    }
    template <class T>
    SparseVector<T> allreduce_elements_sparse(const std::vector<std::int64_t> &indices, const std::vector<T> &values,
                                              std::size_t count, MPI_Op op = MPI_SUM) const {
        if (indices.size() != values.size()) throw std::invalid_argument("indices and values differ in length");
        MPIX_Sparse_vector v = nullptr;
        check(MPIX_Sparse_allreduce_elements_sparse(static_cast<MPI_Count>(indices.size()), indices.data(),
                                                    values.data(), static_cast<MPI_Count>(count), datatype_of<T>(), op,
                                                    comm_, &v));
        return SparseVector<T>(v);
    }
    MPIX_Sparse_stats stats() const {
        MPIX_Sparse_stats s{};
        check(MPIX_Sparse_stats_get(comm_, &s));
        return s;
    }
    void reset_stats() const { check(MPIX_Sparse_stats_reset(comm_)); }
    // Seconds per phase (needs mpix_sparse_profile=on; see MPIX_Sparse_profile).
    MPIX_Sparse_profile profile() const {
        MPIX_Sparse_profile p{};
        check(MPIX_Sparse_profile_get(comm_, &p));
        return p;
    }

  private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace mpix::sparse

#endif  // MPIX_SPARSE_HPP
