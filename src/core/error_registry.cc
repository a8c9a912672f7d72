#include "core/error_registry.h"

#include <mpi.h>

#include <array>
#include <map>
#include <mutex>
#include <string>

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
    case ErrorKind::Timeout: return "MPIX_Sparse: timed out waiting for peers";
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

namespace {

// Errors whose detail names what only this occurrence knows (which ranks stalled, which peer is
// gone): each distinct text gets a code of its own, so MPI_Error_string tells it. Rare events; the
// number of such codes is bounded, past which the id's fixed text serves.
bool detail_in_string(ErrorId id) {
    return id == ErrorId::Timeout || id == ErrorId::PeerGone;
}
constexpr std::size_t kMaxDetailedCodes = 1024;

int detailed_code(const Error &error) {
    static std::mutex lock;
    static std::map<std::string, int> codes;
    std::string text = std::string(describe(error.id()).message) + ": " + error.detail();
    if (text.size() >= MPI_MAX_ERROR_STRING) text.resize(MPI_MAX_ERROR_STRING - 1);
    std::lock_guard<std::mutex> guard(lock);
    auto it = codes.find(text);
    if (it != codes.end()) return it->second;
    if (codes.size() >= kMaxDetailedCodes) return mpi_error_code(error.id());
    const int cls = mpi_error_class(describe(error.id()).kind);
    int code = cls;
    if (MPI_Add_error_code(cls, &code) != MPI_SUCCESS) return mpi_error_code(error.id());
    MPI_Add_error_string(code, const_cast<char *>(text.c_str()));
    codes.emplace(std::move(text), code);
    return code;
}

}  // namespace

int mpi_error_code(const Error &error) {
    if (error.id() == ErrorId::MpiFailure && error.mpi_code() != MPI_SUCCESS) return error.mpi_code();
    if (detail_in_string(error.id()) && !error.detail().empty()) return detailed_code(error);
    return mpi_error_code(error.id());
}

}  // namespace mpix::sparse::detail
