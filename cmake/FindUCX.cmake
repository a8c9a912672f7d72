# Finds UCX's UCP library: pkg-config's `ucx` module first, then a plain search (UCX_ROOT or the
# default prefixes) for machines without the .pc file. Defines UCX::ucp and UCX_FOUND.
include(FindPackageHandleStandardArgs)

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_UCX QUIET ucx)
endif()

find_path(UCX_INCLUDE_DIR ucp/api/ucp.h
  HINTS ${UCX_ROOT} ENV UCX_ROOT ${PC_UCX_INCLUDE_DIRS}
  PATH_SUFFIXES include)
foreach(lib ucp uct ucs)
  find_library(UCX_${lib}_LIBRARY NAMES ${lib} lib${lib}.so.0
    HINTS ${UCX_ROOT} ENV UCX_ROOT ${PC_UCX_LIBRARY_DIRS}
    PATH_SUFFIXES lib lib64)
endforeach()

find_package_handle_standard_args(UCX
  REQUIRED_VARS UCX_INCLUDE_DIR UCX_ucp_LIBRARY UCX_uct_LIBRARY UCX_ucs_LIBRARY
  VERSION_VAR PC_UCX_VERSION)

if(UCX_FOUND AND NOT TARGET UCX::ucp)
  add_library(UCX::ucs UNKNOWN IMPORTED)
  set_target_properties(UCX::ucs PROPERTIES IMPORTED_LOCATION "${UCX_ucs_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${UCX_INCLUDE_DIR}")
  add_library(UCX::uct UNKNOWN IMPORTED)
  set_target_properties(UCX::uct PROPERTIES IMPORTED_LOCATION "${UCX_uct_LIBRARY}"
    INTERFACE_LINK_LIBRARIES UCX::ucs)
  add_library(UCX::ucp UNKNOWN IMPORTED)
  set_target_properties(UCX::ucp PROPERTIES IMPORTED_LOCATION "${UCX_ucp_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${UCX_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "UCX::uct;UCX::ucs")
endif()
mark_as_advanced(UCX_INCLUDE_DIR UCX_ucp_LIBRARY UCX_uct_LIBRARY UCX_ucs_LIBRARY)
