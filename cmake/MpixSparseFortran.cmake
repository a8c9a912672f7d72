# MPIX_SPARSE_FORTRAN = AUTO | ON | OFF -> MPIX_SPARSE_HAVE_FORTRAN, the Fortran language, MPI::MPI_Fortran
# and MPIX_SPARSE_CFI_INCLUDE_DIR (where the Fortran compiler's ISO_Fortran_binding.h lives).
# AUTO builds the mpi_f08-style module mpix_sparse_f08 (src/fortran, docs/fortran.md) when a Fortran
# compiler is found and the MPI the library is built with has an mpi_f08 module for it.
# The Fortran side of the MPI is taken from the C side: -DMPI_C_COMPILER=mpicc.mpich selects
# mpifort.mpich too, unless MPI_Fortran_COMPILER is given.
set(MPIX_SPARSE_FORTRAN AUTO CACHE STRING "Fortran 2008 binding (mpix_sparse_f08): AUTO (when a compiler and mpi_f08 are found), ON, OFF")
set_property(CACHE MPIX_SPARSE_FORTRAN PROPERTY STRINGS AUTO ON OFF)

set(MPIX_SPARSE_HAVE_FORTRAN OFF)
set(_fortran_missing "")
if(NOT MPIX_SPARSE_FORTRAN STREQUAL "OFF")
  include(CheckLanguage)
  check_language(Fortran)
  if(NOT CMAKE_Fortran_COMPILER)
    set(_fortran_missing "no Fortran compiler")
  else()
    enable_language(Fortran)
    if(NOT MPI_Fortran_COMPILER AND MPI_C_COMPILER MATCHES "^(.*/)?mpicc([^/]*)$")
      # The Fortran wrapper of the same MPI: mpicc.mpich -> mpifort.mpich (Debian's alternatives may
      # point plain mpifort at another MPI).
      set(_suffix "${CMAKE_MATCH_2}")
      get_filename_component(_c_dir "${MPI_C_COMPILER}" DIRECTORY)
      find_program(MPIX_SPARSE_MPI_FORTRAN_WRAPPER NAMES mpifort${_suffix} mpif90${_suffix} HINTS ${_c_dir} NO_CACHE)
      if(MPIX_SPARSE_MPI_FORTRAN_WRAPPER)
        set(MPI_Fortran_COMPILER "${MPIX_SPARSE_MPI_FORTRAN_WRAPPER}" CACHE FILEPATH "MPI Fortran compiler wrapper")
      endif()
    endif()
    find_package(MPI COMPONENTS Fortran)
    # The CFI descriptor layout is the Fortran compiler's: the C glue must see its own header.
    execute_process(COMMAND ${CMAKE_Fortran_COMPILER} -print-file-name=include
      OUTPUT_VARIABLE _fortran_include OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    find_path(MPIX_SPARSE_CFI_INCLUDE_DIR ISO_Fortran_binding.h HINTS ${_fortran_include})
    if(NOT MPI_Fortran_FOUND OR NOT MPI_Fortran_HAVE_F08_MODULE)
      set(_fortran_missing "no mpi_f08 module for ${CMAKE_Fortran_COMPILER} (set MPI_Fortran_COMPILER)")
    elseif(NOT MPI_Fortran_LIBRARY_VERSION_STRING STREQUAL MPI_C_LIBRARY_VERSION_STRING)
      set(_fortran_missing "the Fortran MPI (${MPI_Fortran_COMPILER}) is not the C one (${MPI_C_COMPILER})")
    elseif(NOT MPIX_SPARSE_CFI_INCLUDE_DIR)
      set(_fortran_missing "no ISO_Fortran_binding.h for ${CMAKE_Fortran_COMPILER}")
    else()
      set(MPIX_SPARSE_HAVE_FORTRAN ON)
    endif()
  endif()
  if(MPIX_SPARSE_FORTRAN STREQUAL "ON" AND NOT MPIX_SPARSE_HAVE_FORTRAN)
    message(FATAL_ERROR "MPIX_SPARSE_FORTRAN=ON, but ${_fortran_missing}")
  endif()
endif()
if(MPIX_SPARSE_HAVE_FORTRAN)
  message(STATUS "mpix_sparse: Fortran binding (mpix_sparse_f08): ON (${CMAKE_Fortran_COMPILER}, ${MPI_Fortran_COMPILER})")
elseif(_fortran_missing)
  message(STATUS "mpix_sparse: Fortran binding (mpix_sparse_f08): OFF (${_fortran_missing})")
else()
  message(STATUS "mpix_sparse: Fortran binding (mpix_sparse_f08): OFF")
endif()
