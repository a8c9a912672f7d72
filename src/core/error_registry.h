// MPI error classes and codes of the library: one class per ErrorKind (MPI_Add_error_class), one code
// per ErrorId with its fixed message (MPI_Add_error_code / MPI_Add_error_string). Registered once
// after MPI_Init; valid until MPI_Finalize.
#pragma once

#include "core/error.h"

namespace mpix::sparse::detail {

void register_error_classes();
int mpi_error_class(ErrorKind kind);
int mpi_error_code(ErrorId id);
// The MPI error code for an Error: its passed-through MPI code, or the code of its ErrorId.
int mpi_error_code(const Error &error);

}  // namespace mpix::sparse::detail
