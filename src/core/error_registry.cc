#include "core/error_registry.h"

#include <mutex>

#include <mpi.h>

#include <array>

namespace mpix::sparse::detail {
namespace {

constexpr auto kKinds = static_cast<std::size_t>(ErrorKind::Count_);
constexpr auto kIds = static_cast<std::size_t>(ErrorId::Count_);

struct Registry {
    bool registered = false;
    std::array<int, kKinds> classes{};
    std::array<int, kIds> codes{};
};

Registry &registry() {
    static Registry r;
    return r;
}

const char *kind_message(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::Arg: return "MPIX_Sparse: invalid argument";
    case ErrorKind::Comm: return "MPIX_Sparse: invalid communicator";
    case ErrorKind::Info: return "MPIX_Sparse: invalid configuration value";
    case ErrorKind::Remote: return "MPIX_Sparse: another rank failed or passed inconsistent arguments";
    case ErrorKind::Transport: return "MPIX_Sparse: transport failure";
    case ErrorKind::Protocol: return "MPIX_Sparse: malformed message from a peer";
    default: return "MPIX_Sparse: internal error";
    }
}

}  // namespace

void register_error_classes() {
    // Any thread may be first to raise an error: registration happens once, under a lock.
    static std::mutex lock;
    std::lock_guard<std::mutex> guard(lock);
    Registry &r = registry();
    if (r.registered) return;
    for (std::size_t k = 0; k < kKinds; ++k) {
        int cls = MPI_ERR_OTHER;
        if (MPI_Add_error_class(&cls) != MPI_SUCCESS)
            cls = MPI_ERR_OTHER;
        else
            MPI_Add_error_string(cls, const_cast<char *>(kind_message(static_cast<ErrorKind>(k))));
        r.classes[k] = cls;
    }
    for (std::size_t i = 0; i < kIds; ++i) {
        const ErrorDescription &d = describe(static_cast<ErrorId>(i));
        const int cls = r.classes[static_cast<std::size_t>(d.kind)];
        int code = cls;
        if (MPI_Add_error_code(cls, &code) != MPI_SUCCESS)
            code = cls;
        else
            MPI_Add_error_string(code, const_cast<char *>(d.message));
        r.codes[i] = code;
    }
    r.registered = true;
}

int mpi_error_class(ErrorKind kind) {
    register_error_classes();
    return registry().classes[static_cast<std::size_t>(kind)];
}

int mpi_error_code(ErrorId id) {
    register_error_classes();
    return registry().codes[static_cast<std::size_t>(id)];
}

int mpi_error_code(const Error &error) {
    if (error.id() == ErrorId::MpiFailure && error.mpi_code() != MPI_SUCCESS) return error.mpi_code();
    return mpi_error_code(error.id());
}

}  // namespace mpix::sparse::detail
