# API reference from the public header's comments (Doxygen): HTML page and man pages, built with the
# library when Doxygen is found (MPIX_SPARSE_DOCS=AUTO), required with ON, skipped with OFF.
# Undocumented public symbols fail the build (WARN_AS_ERROR), which keeps the header complete.
set(MPIX_SPARSE_DOCS AUTO CACHE STRING "API reference (Doxygen): AUTO (when doxygen is found), ON, OFF")
set_property(CACHE MPIX_SPARSE_DOCS PROPERTY STRINGS AUTO ON OFF)

if(NOT MPIX_SPARSE_DOCS STREQUAL "OFF")
  if(MPIX_SPARSE_DOCS STREQUAL "ON")
    find_package(Doxygen REQUIRED)
  else()
    find_package(Doxygen QUIET)
  endif()
endif()

if(DOXYGEN_FOUND)
  set(MPIX_SPARSE_DOCS_DIR ${PROJECT_BINARY_DIR}/docs/api)
  configure_file(${PROJECT_SOURCE_DIR}/docs/api/Doxyfile.in ${MPIX_SPARSE_DOCS_DIR}/Doxyfile @ONLY)
  add_custom_command(
    OUTPUT ${MPIX_SPARSE_DOCS_DIR}/html/mpix__sparse_8h.html
    COMMAND Doxygen::doxygen ${MPIX_SPARSE_DOCS_DIR}/Doxyfile
    DEPENDS ${PROJECT_SOURCE_DIR}/include/mpix_sparse/mpix_sparse.h ${MPIX_SPARSE_DOCS_DIR}/Doxyfile
    COMMENT "API reference (Doxygen)"
    VERBATIM)
  add_custom_target(mpix_sparse_docs ALL DEPENDS ${MPIX_SPARSE_DOCS_DIR}/html/mpix__sparse_8h.html)
  install(DIRECTORY ${MPIX_SPARSE_DOCS_DIR}/html/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/api)
  # Only the library's own names: Doxygen also writes pages for struct fields ("calls.3").
  install(DIRECTORY ${MPIX_SPARSE_DOCS_DIR}/man/man3 DESTINATION ${CMAKE_INSTALL_MANDIR}
    FILES_MATCHING PATTERN "MPIX_*.3" PATTERN "mpix_sparse.h.3")
  message(STATUS "mpix_sparse: API reference with Doxygen ${DOXYGEN_VERSION}")
else()
  message(STATUS "mpix_sparse: no API reference (Doxygen not found)")
endif()
