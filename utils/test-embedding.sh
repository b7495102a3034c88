#!/usr/bin/env bash
# Tests Kiln as a library, the way another compiler uses it: installs Kiln
# from an up-to-date build into a fresh prefix, moves the prefix (the package
# must be relocatable), builds examples/embed against the installed package
# and checks what its two compilers print (FileCheck lines in their inputs).
#
#   utils/test-embedding.sh [--build-dir DIR] [--xunit FILE]
#
# Each step is one test case of the xUnit report; after a failed step the
# remaining ones are skipped.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$ROOT/build"
XUNIT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR="$2"; shift ;;
    --xunit) XUNIT="$2"; shift ;;
    *) echo "usage: utils/test-embedding.sh [--build-dir DIR] [--xunit FILE]" >&2; exit 2 ;;
  esac
  shift
done

LLVM_PREFIX=/usr/lib/llvm-22
# Fixed paths under the build folder, so that ccache reuses the example's
# objects from one run to the next.
WORK="$BUILD_DIR/embedding"
PREFIX="$WORK/prefix"
EXAMPLE="$WORK/example"
export CCACHE_BASEDIR="$ROOT"
export CCACHE_NOHASHDIR=1

rm -rf "$WORK"
mkdir -p "$WORK"

CASES=()
FAILED=0
SKIPPED=0
# step NAME COMMAND...: runs COMMAND unless an earlier step failed, logging
# to $WORK/NAME.log.
step() {
  local name="$1"; shift
  if [ "$FAILED" -gt 0 ]; then
    SKIPPED=$((SKIPPED + 1))
    CASES+=("<testcase classname=\"embedding\" name=\"$name\"><skipped/></testcase>")
    echo "embedding: $name skipped"
    return
  fi
  local start=$SECONDS
  if "$@" > "$WORK/$name.log" 2>&1; then
    CASES+=("<testcase classname=\"embedding\" name=\"$name\" time=\"$((SECONDS - start))\"/>")
    echo "embedding: $name passed ($((SECONDS - start)) s)"
  else
    FAILED=$((FAILED + 1))
    CASES+=("<testcase classname=\"embedding\" name=\"$name\"><failure message=\"see $WORK/$name.log\"/></testcase>")
    echo "embedding: $name FAILED; log $WORK/$name.log:"
    tail -n 40 "$WORK/$name.log"
  fi
}

install_kiln() {
  cmake --install "$BUILD_DIR" --prefix "$WORK/staging" &&
    mv "$WORK/staging" "$PREFIX" &&
    test -f "$PREFIX/lib/cmake/kiln/KilnConfig.cmake" &&
    test -x "$PREFIX/bin/kiln-opt" &&
    test -f "$PREFIX/include/kiln/Dialect/FX/IR/FXOps.h.inc" &&
    test -f "$PREFIX/include/kiln/Dialect/FX/IR/FXBase.td" &&
    test -f "$PREFIX/include/kiln-c/Compiler.h"
}

configure_example() {
  cmake -G Ninja -S "$ROOT/examples/embed" -B "$EXAMPLE" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$LLVM_PREFIX/bin/clang" \
    -DCMAKE_CXX_COMPILER="$LLVM_PREFIX/bin/clang++" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DLLVM_USE_LINKER=lld \
    -DKiln_DIR="$PREFIX/lib/cmake/kiln" &&
    # The package, never the build tree, must be what the example found.
    grep -q "Using KilnConfig.cmake in: $PREFIX/lib/cmake/kiln" "$WORK/configure.log"
}

check_output() {
  local input="$1"; shift
  "$@" | "$LLVM_PREFIX/bin/FileCheck" "$input"
}

step install install_kiln
step configure configure_example
step build cmake --build "$EXAMPLE"
step host-compiler check_output "$ROOT/examples/embed/program.mlir" \
  "$EXAMPLE/host-compiler" "$ROOT/examples/embed/program.mlir" "$WORK/mlp.so"
step c-api-compiler check_output "$ROOT/examples/embed/graph.mlir" \
  "$EXAMPLE/c-api-compiler" "$ROOT/examples/embed/graph.mlir" "$WORK/graph.so"

if [ -n "$XUNIT" ]; then
  {
    echo "<testsuite name=\"embedding\" tests=\"${#CASES[@]}\" failures=\"$FAILED\" skipped=\"$SKIPPED\">"
    printf '  %s\n' "${CASES[@]}"
    echo "</testsuite>"
  } > "$XUNIT"
fi
[ "$FAILED" -eq 0 ]
