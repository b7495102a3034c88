#!/usr/bin/env bash
# Configures and builds Kiln with clang-22, Ninja, ccache and lld.
#
#   utils/build.sh [--static | --sanitize | --fuzz] [--build-dir DIR] [ninja targets...]
#
# --static builds the relocatable configuration (KILN_STATIC_LLVM=ON) in
# build-static/, --sanitize Kiln's compiler with ASan and UBSan
# (KILN_SANITIZERS) in build-sanitize/, --fuzz the same with libFuzzer's
# coverage and the kiln-fuzz target (KILN_FUZZER) in build-fuzz/, unless
# --build-dir says otherwise. Set-up is idempotent: the
# packages are installed only when missing, CMake is configured only once.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATIC=OFF
SANITIZERS=""
FUZZER=OFF
BUILD_DIR=""
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --static) STATIC=ON ;;
    --sanitize) SANITIZERS="address;undefined" ;;
    --fuzz) SANITIZERS="address;undefined"; FUZZER=ON ;;
    --build-dir) BUILD_DIR="$2"; shift ;;
    *) TARGETS+=("$1") ;;
  esac
  shift
done
if [ -z "$BUILD_DIR" ]; then
  if [ "$STATIC" = ON ]; then BUILD_DIR="$ROOT/build-static"
  elif [ "$FUZZER" = ON ]; then BUILD_DIR="$ROOT/build-fuzz"
  elif [ -n "$SANITIZERS" ]; then BUILD_DIR="$ROOT/build-sanitize"
  else BUILD_DIR="$ROOT/build"; fi
fi

"$ROOT/utils/install-deps.sh"

LLVM_PREFIX=/usr/lib/llvm-22
# Objects are shared between checkouts (CI clones elsewhere) and configurations.
export CCACHE_BASEDIR="$ROOT"
export CCACHE_NOHASHDIR=1

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$LLVM_PREFIX/bin/clang" \
    -DCMAKE_CXX_COMPILER="$LLVM_PREFIX/bin/clang++" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    -DKILN_STATIC_LLVM="$STATIC" \
    -DKILN_SANITIZERS="$SANITIZERS" \
    -DKILN_FUZZER="$FUZZER"
fi

cmake --build "$BUILD_DIR" ${TARGETS[@]+--target "${TARGETS[@]}"}
