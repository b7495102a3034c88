#!/usr/bin/env bash
# Installs the Debian 12 packages Kiln needs to build and test. Idempotent: packages
# that are already installed are skipped, and nothing runs apt-get when all are there.
set -euo pipefail

PACKAGES=(
  # LLVM/MLIR 22 toolchain: headers, CMake exports, static archives, lit and FileCheck.
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22 libomp-22-dev
  clang-format-22 clang-tidy-22
  # The OpenMP runtime CPU artifacts run on when no other is loaded (Kiln's
  # OpenMP layer uses the process's, PyTorch's libgomp).
  libgomp1
  # Build tools.
  cmake ninja-build ccache xz-utils
  # Static compression libraries for the relocatable bundle.
  zlib1g-dev libzstd-dev
  # Python test stack: PyTorch 1.13 (CPU) for make_fx capture, pytest.
  python3 python3-torch python3-pytest python3-numpy
  # Building and installing the wheel (utils/make-wheel.sh, test-wheel.sh).
  python3-pip python3-venv python3-wheel python3-setuptools
  # The sanitizers' runtimes (utils/build.sh --sanitize, utils/asan-check.sh).
  libclang-rt-22-dev
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
