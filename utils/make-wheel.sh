#!/usr/bin/env bash
# Builds Kiln's wheel for this platform: the Python package with the
# relocatable tools and runtime libraries of dist/kiln-bundle.tar.xz
# (utils/make-bundle.sh, run first unless --reuse-bundle) in kiln/_tools/:
#   dist/kiln-<version>-py3-none-linux_x86_64.whl
# Installed into any environment with PyTorch, `import kiln` and
# torch.compile(backend="kiln") need nothing else on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIST="$ROOT/dist"
PYTHON=/usr/bin/python3
if [ "${1:-}" != "--reuse-bundle" ] || [ ! -f "$DIST/kiln-bundle.tar.xz" ]; then
  "$ROOT/utils/make-bundle.sh"
fi

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
tar -C "$STAGE" -xJf "$DIST/kiln-bundle.tar.xz" kiln/bin kiln/lib
mkdir -p "$STAGE/src"
cp "$ROOT/python/pyproject.toml" "$ROOT/LICENSE" "$STAGE/src/"
cp -r "$ROOT/python/kiln" "$STAGE/src/"
find "$STAGE/src" -name '__pycache__' -prune -exec rm -rf {} +
mkdir -p "$STAGE/src/kiln/_tools"
mv "$STAGE/kiln/bin" "$STAGE/kiln/lib" "$STAGE/src/kiln/_tools/"

# Built offline, from the system's setuptools; then tagged for the platform
# its binaries run on (setuptools calls a package without extensions pure).
"$PYTHON" -m pip wheel --quiet --no-deps --no-build-isolation --no-index \
  -w "$STAGE/wheel" "$STAGE/src"
"$PYTHON" -m wheel unpack -d "$STAGE/unpacked" "$STAGE"/wheel/kiln-*.whl > /dev/null
# setuptools copies package data without its modes.
chmod +x "$STAGE"/unpacked/kiln-*/kiln/_tools/bin/*
info=("$STAGE"/unpacked/kiln-*/kiln-*.dist-info/WHEEL)
sed -i -e 's/^Root-Is-Purelib: true/Root-Is-Purelib: false/' \
  -e 's/^Tag: py3-none-any/Tag: py3-none-linux_x86_64/' "${info[0]}"
mkdir -p "$DIST"
rm -f "$DIST"/kiln-*.whl
"$PYTHON" -m wheel pack -d "$DIST" "$STAGE"/unpacked/kiln-* > /dev/null
wheel=("$DIST"/kiln-*-py3-none-linux_x86_64.whl)
echo "make-wheel: ${wheel[0]}, $(($(stat -c %s "${wheel[0]}") >> 20)) MB"
