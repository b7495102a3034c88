# Installation and the relocatable CMake package, so that other projects can
# `find_package(Kiln)` and link the Kiln::* targets next to their own MLIR.
#
# add_mlir_library already installs every Kiln library into the export set
# that AddMLIR names `MLIRTargets` (LLVM's distribution support fixes that
# name); the package file exports that set as KilnTargets.cmake, under the
# Kiln:: namespace.

include(CMakePackageConfigHelpers)

set(KILN_INSTALL_INCLUDE_DIR include)
set(KILN_INSTALL_LIBRARY_DIR lib${LLVM_LIBDIR_SUFFIX})
set(KILN_INSTALL_TOOLS_DIR bin)
set(KILN_INSTALL_PACKAGE_DIR ${KILN_INSTALL_LIBRARY_DIR}/cmake/kiln)

# Consumers get Kiln's headers from the targets; MLIR's come from MLIR's
# package (MLIR_INCLUDE_DIRS), as for any out-of-tree MLIR project.
get_property(_kiln_libraries GLOBAL PROPERTY MLIR_EXPORTS)
list(FILTER _kiln_libraries INCLUDE REGEX "^Kiln")
foreach(_library ${_kiln_libraries})
  target_include_directories(${_library}
    INTERFACE $<INSTALL_INTERFACE:${KILN_INSTALL_INCLUDE_DIR}>)
endforeach()

# Headers, the ODS sources (for dialects built on Kiln's ops and attributes)
# and the generated declarations that the headers include.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln
                  ${PROJECT_SOURCE_DIR}/include/kiln-c
  DESTINATION ${KILN_INSTALL_INCLUDE_DIR}
  COMPONENT kiln-headers
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/kiln
  DESTINATION ${KILN_INSTALL_INCLUDE_DIR}
  COMPONENT kiln-headers
  FILES_MATCHING PATTERN "*.h.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(TARGETS kiln-opt kiln-compile kiln-run
  EXPORT MLIRTargets
  RUNTIME DESTINATION ${KILN_INSTALL_TOOLS_DIR}
  COMPONENT kiln-tools)
# Where kiln-compile (bin/../lib) and the compiler library look for them.
install(TARGETS kiln_cuda_runtime kiln_openmp
  EXPORT MLIRTargets
  LIBRARY DESTINATION ${KILN_INSTALL_LIBRARY_DIR}
  COMPONENT kiln-runtime)

install(EXPORT MLIRTargets
  NAMESPACE Kiln::
  FILE KilnTargets.cmake
  DESTINATION ${KILN_INSTALL_PACKAGE_DIR}
  COMPONENT kiln-cmake)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/KilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lib/cmake/kiln/KilnConfig.cmake
  INSTALL_DESTINATION ${KILN_INSTALL_PACKAGE_DIR}
  PATH_VARS KILN_INSTALL_INCLUDE_DIR KILN_INSTALL_LIBRARY_DIR
            KILN_INSTALL_TOOLS_DIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lib/cmake/kiln/KilnConfigVersion.cmake
  VERSION ${KILN_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/lib/cmake/kiln/KilnConfig.cmake
  ${PROJECT_BINARY_DIR}/lib/cmake/kiln/KilnConfigVersion.cmake
  DESTINATION ${KILN_INSTALL_PACKAGE_DIR}
  COMPONENT kiln-cmake)

# The license and the changelog, as distributions place them.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  DESTINATION share/doc/kiln
  COMPONENT kiln-docs)
