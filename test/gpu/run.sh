#!/bin/sh
# test/gpu/run.sh BUNDLE [--dry-run]
# The CUDA backend on a machine with an NVIDIA GPU (docs/Gpu.md): builds the
# `kiln` Python module there (its C runtime compiled in; oneDNN's headers
# from the bundle) from a temporary copy of python/ and runtime/, so the
# source tree is left as it was, then runs test/gpu/gpu_check.py on BUNDLE (made here by
# test/gpu/prepare.py): numbers against PyTorch, conformance cases, CUDA
# Graph replays, speed against torch eager and torch.compile. Results go to
# $OUT (the device tool's folder) or the current folder. --dry-run: on this
# machine, with the driver stand-in instead of a GPU.
set -eu
bundle=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD}
site=$(mktemp -d)
sources=$(mktemp -d)
trap 'rm -rf "$sources"' EXIT
cp -r "$root/python" "$root/runtime" "$sources/"
python=${PYTHON:-python3}
CFLAGS="-I$(cd "$bundle" && pwd)/include" \
  "$python" -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target "$site" \
  "$sources/python" > "$out/pip.log" 2>&1 || { cat "$out/pip.log"; exit 1; }
PYTHONPATH="$site" PYTHONUNBUFFERED=1 "$python" "$root/test/gpu/gpu_check.py" "$bundle" \
  --out "$out" "$@"
