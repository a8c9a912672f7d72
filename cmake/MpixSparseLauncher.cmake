# How tests start MPI programs, for whichever MPI the project was configured with (Open MPI or MPICH;
# select MPICH with -DMPI_C_COMPILER=mpicc.mpich). Tests use only these, never a launcher's flags:
#   MPIX_SPARSE_MPI_VENDOR      OpenMPI | MPICH | unknown
#   MPIX_SPARSE_MPIRUN          the launcher with what running up to 4 ranks on 2 cores as root needs
#   MPIX_SPARSE_MPIRUN_SURVIVE  options that let the other ranks run on when one dies
#   MPIX_SPARSE_MPIRUN_TAG      options that prefix each output line with its rank ("[1,R]<stderr>:"
#                               for Open MPI, "[R] " for MPICH)
#   mpix_sparse_env(<out> VAR=VALUE...)  launcher arguments that set environment variables on every rank
# Included by each directory that adds tests (it sets variables in the including scope).

set(MPIX_SPARSE_MPI_VENDOR unknown)
if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
  set(MPIX_SPARSE_MPI_VENDOR OpenMPI)
elseif(MPI_C_LIBRARY_VERSION_STRING MATCHES "MPICH")
  set(MPIX_SPARSE_MPI_VENDOR MPICH)
endif()

set(_launcher ${MPIEXEC_EXECUTABLE})
if(MPIX_SPARSE_MPI_VENDOR STREQUAL "MPICH")
  # Debian's plain mpiexec may be another MPI's (alternatives): take MPICH's own by name.
  find_program(MPIX_SPARSE_MPIEXEC_MPICH NAMES mpiexec.mpich mpiexec.hydra HINTS ${MPI_C_COMPILER_DIR})
  if(MPIX_SPARSE_MPIEXEC_MPICH)
    set(_launcher ${MPIX_SPARSE_MPIEXEC_MPICH})
  endif()
  set(MPIX_SPARSE_MPIRUN ${_launcher} -bind-to none)
  set(MPIX_SPARSE_MPIRUN_SURVIVE -disable-auto-cleanup)
  set(MPIX_SPARSE_MPIRUN_TAG -prepend-rank)
else()
  set(MPIX_SPARSE_MPIRUN ${_launcher} --allow-run-as-root --oversubscribe --bind-to none)
  set(MPIX_SPARSE_MPIRUN_SURVIVE --mca orte_abort_on_non_zero_status 0)
  set(MPIX_SPARSE_MPIRUN_TAG --tag-output)
endif()
get_property(_reported GLOBAL PROPERTY MPIX_SPARSE_LAUNCHER_REPORTED)
if(NOT _reported)
  message(STATUS "mpix_sparse: tests run with ${MPIX_SPARSE_MPI_VENDOR}: ${MPIX_SPARSE_MPIRUN}")
  set_property(GLOBAL PROPERTY MPIX_SPARSE_LAUNCHER_REPORTED TRUE)
endif()

function(mpix_sparse_env out)
  set(args)
  foreach(assignment ${ARGN})
    if(MPIX_SPARSE_MPI_VENDOR STREQUAL "MPICH")
      string(REPLACE "=" ";" pair "${assignment}")
      list(GET pair 0 name)
      list(GET pair 1 value)
      list(APPEND args -genv ${name} ${value})
    else()
      list(APPEND args -x ${assignment})
    endif()
  endforeach()
  set(${out} ${args} PARENT_SCOPE)
endfunction()
