# Sanitizers over Kiln's compiler: KILN_SANITIZERS="address;undefined"
# instruments Kiln's libraries and tools (not LLVM's, nor the runtime
# libraries that artifacts and Python load). utils/build.sh --sanitize
# configures such a build; utils/asan-check.sh runs the tests with it.
set(KILN_SANITIZERS "" CACHE STRING
  "Sanitizers for Kiln's libraries and tools, e.g. address;undefined")
# KILN_FUZZER adds libFuzzer's coverage instrumentation to Kiln's code and
# the kiln-fuzz target (utils/build.sh --fuzz, with the sanitizers above).
option(KILN_FUZZER "Build the libFuzzer target kiln-fuzz" OFF)

# Adds the sanitizers' flags to the targets defined after the call in the
# current directory and below.
macro(kiln_add_sanitizer_flags)
  if(KILN_SANITIZERS)
    list(JOIN KILN_SANITIZERS "," _kiln_sanitizers)
    # LLVM is built without RTTI (no vptr checks across it), and calls into
    # uninstrumented code have no function type information.
    add_compile_options(-fsanitize=${_kiln_sanitizers} -fno-sanitize=vptr,function
                        -fno-sanitize-recover=all -fno-omit-frame-pointer -g1)
    add_link_options(-fsanitize=${_kiln_sanitizers} -fno-sanitize=vptr,function)
  endif()
  if(KILN_FUZZER)
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
endmacro()
