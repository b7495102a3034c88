# Re-points Kiln's link against LLVM from Debian's libLLVM.so to LLVM's static
# component archives, so that the tools need only libc and libm at run time.
#
# Debian's MLIR exports make every MLIR library depend on the imported target
# `LLVM` (the shared library). We replace that dependency with an interface
# library listing the static archives; lld resolves archive order by itself.

set(LLVM_LINK_LLVM_DYLIB OFF)

file(GLOB _kiln_llvm_archives "${LLVM_LIBRARY_DIR}/libLLVM*.a")
# These components link the shared library or are tools, not libraries.
list(FILTER _kiln_llvm_archives EXCLUDE REGEX
  "libLLVM(Debuginfod|CFIVerify|Diff|OptDriver|Exegesis.*|BOLT.*|FuzzMutate|FuzzerCLI|DTLTO|Telemetry)\\.a$")

find_library(KILN_LIBZ_STATIC NAMES libz.a REQUIRED)
find_library(KILN_LIBZSTD_STATIC NAMES libzstd.a REQUIRED)

add_library(KilnLLVMStatic INTERFACE)
target_link_libraries(KilnLLVMStatic INTERFACE
  ${_kiln_llvm_archives} ${KILN_LIBZ_STATIC} ${KILN_LIBZSTD_STATIC}
  pthread rt dl m)

foreach(_target ${MLIR_EXPORTED_TARGETS})
  if(NOT TARGET ${_target})
    continue()
  endif()
  get_target_property(_type ${_target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY" OR _type STREQUAL "EXECUTABLE")
    continue()
  endif()
  get_target_property(_deps ${_target} INTERFACE_LINK_LIBRARIES)
  if(_deps)
    list(TRANSFORM _deps REPLACE "^LLVM$" "KilnLLVMStatic")
    set_target_properties(${_target} PROPERTIES INTERFACE_LINK_LIBRARIES "${_deps}")
  endif()
endforeach()

# Whatever still names an LLVM component target must not drag in z3 or the
# shared compression libraries.
if(TARGET LLVMSupport)
  set_target_properties(LLVMSupport PROPERTIES INTERFACE_LINK_LIBRARIES
    "${KILN_LIBZ_STATIC};${KILN_LIBZSTD_STATIC};pthread;rt;dl;m;LLVMDemangle")
endif()

set(CMAKE_SKIP_RPATH ON)
add_link_options(-static-libstdc++ -static-libgcc -Wl,--gc-sections)
