#!/usr/bin/env bash
# Builds Kiln's relocatable configuration (LLVM/MLIR linked statically) and
# packs its tools, runtime pieces and Python package into one file:
#   dist/kiln-bundle.tar.xz   (at most 40 MB)
# Unpacked anywhere, bin/ runs on a glibc >= 2.36 Linux with nothing else
# installed, and PYTHONPATH=<bundle>/python makes `import kiln` use bin/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$ROOT/build-static"
DIST="$ROOT/dist"
LIMIT_BYTES=$((40 * 1024 * 1024))
TOOLS=(kiln-opt kiln-compile kiln-run)
# Shared libraries that generated code needs at run time: Kiln's OpenMP
# layer for CPU kernels (on the process's libgomp), Kiln's CUDA runtime for
# GPU kernels.
RUNTIME_LIBS=("$BUILD_DIR/lib/libkiln_openmp.so" "$BUILD_DIR/lib/libkiln_cuda_runtime.so")

"$ROOT/utils/build.sh" --static --build-dir "$BUILD_DIR" "${TOOLS[@]}" kiln_cuda_runtime kiln_openmp

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
PKG="$STAGE/kiln"
mkdir -p "$PKG/bin" "$PKG/lib" "$PKG/python"

for tool in "${TOOLS[@]}"; do
  cp "$BUILD_DIR/bin/$tool" "$PKG/bin/"
  /usr/lib/llvm-22/bin/llvm-strip "$PKG/bin/$tool"
  # A relocatable tool needs nothing from LLVM's install or its dependencies.
  if ldd "$PKG/bin/$tool" | grep -Eq 'libLLVM|libMLIR|libz3|libicu|libstdc\+\+|libzstd|libz\.so'; then
    echo "make-bundle: $tool still links shared libraries it must not:" >&2
    ldd "$PKG/bin/$tool" >&2
    exit 1
  fi
done
for lib in "${RUNTIME_LIBS[@]}"; do
  cp -L "$lib" "$PKG/lib/"
done
cp -r "$ROOT/python/kiln" "$PKG/python/"
find "$PKG/python" -name '__pycache__' -prune -exec rm -rf {} +
cp -r "$ROOT/examples" "$ROOT/bench" "$PKG/"
cp "$ROOT/LICENSE" "$ROOT/CHANGELOG.md" "$PKG/"
{
  echo "kiln $("$PKG/bin/kiln-opt" --version | sed -n 's/^Kiln version //p')"
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with LLVM/MLIR $(/usr/lib/llvm-22/bin/llvm-config --version)"
} > "$PKG/MANIFEST"

mkdir -p "$DIST"
tar -C "$STAGE" -cf - kiln | xz -9 -T0 > "$DIST/kiln-bundle.tar.xz"
size=$(stat -c %s "$DIST/kiln-bundle.tar.xz")
echo "make-bundle: $DIST/kiln-bundle.tar.xz, $((size / 1024 / 1024)) MB ($size bytes)"
if [ "$size" -gt "$LIMIT_BYTES" ]; then
  echo "make-bundle: the bundle exceeds 40 MB" >&2
  exit 1
fi
