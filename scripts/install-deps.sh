#!/usr/bin/env bash
# Installs the Debian packages Kiln needs to build and test, only those that
# are missing. Idempotent, and silent when there is nothing to do.
set -euo pipefail

packages=(
  # Toolchain: MLIR/LLVM 22, the build tools the Makefile uses.
  cmake ninja-build ccache lld g++ make
  # `make package` (CPack's .deb reads the runtime's dependencies with
  # dpkg-shlibdeps) and the packaging test; python3-venv for the venvs.
  dpkg-dev file python3-venv
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # Tests: Catch2 (unit), lit + FileCheck come with llvm-22-tools;
  # clang-22, its libFuzzer/sanitizer runtimes and omp.h for `make fuzz`.
  catch2 clang-22 libclang-rt-22-dev libomp-22-dev
  # oneDNN runs convolutions at run time.
  libdnnl-dev
  # ONNX frontend (onnx.proto from libonnx-dev) and its reference data.
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  # References for numeric checks and the reference models (Debian's
  # python, not PyPI).
  python3 python3-numpy python3-onnx python3-torch python3-torchvision
  # The `kiln` Python module is built against Python's headers.
  python3-dev python3-setuptools python3-wheel
  # `make train-demo`: scikit-learn's digits data.
  python3-sklearn
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
