// The boundary between the C API and the C++ inside: every entry point runs its body here; an Error
// becomes its registered MPI error code and is raised through the communicator's error handler
// (MPI_COMM_WORLD's when the communicator itself is invalid), then returned. Nothing throws across
// the C ABI. No lock is held here: the library locks what it touches, briefly (core/library.h).
#pragma once

#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <new>

#include "core/debug.h"
#include "core/error.h"
#include "core/error_registry.h"
#include "core/library.h"

namespace mpix::sparse::detail {

inline int raise_error(MPI_Comm comm, const Error &error) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) return MPI_ERR_OTHER;
    if (debug_enabled()) std::cerr << error.what() << '\n';
    const int code = mpi_error_code(error);
    const ErrorKind kind = describe(error.id()).kind;
    const MPI_Comm target = kind == ErrorKind::Comm || comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
    MPI_Comm_call_errhandler(target, code);
    return code;
}

template <class Body>
int api_call(MPI_Comm comm, Body &&body) {
    try {
        // Operations in flight advance inside any call of the library.
        Library::progress_if_running();
        body();
        return MPI_SUCCESS;
    } catch (const Error &e) {
        return raise_error(comm, e);
    } catch (const std::bad_alloc &) {
        return raise_error(comm, Error(ErrorId::OutOfMemory));
    } catch (const std::exception &e) {
        return raise_error(comm, Error(ErrorId::MpiFailure, MPI_ERR_INTERN, e.what()));
    }
}

}  // namespace mpix::sparse::detail
