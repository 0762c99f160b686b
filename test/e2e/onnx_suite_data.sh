#!/bin/sh
# Writes the node suite of PyPI's onnx 1.23 into $1 (the venv from
# scripts/onnx-venv.sh, then test/e2e/onnx_suite_data.py; a few seconds,
# nothing when it is already there). Exits 77 (ctest's skip) with the
# reason when the venv cannot be made (no network to PyPI).
out=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! python=$("$root/scripts/onnx-venv.sh"); then
  echo "skipped: no onnx 1.23 venv (scripts/onnx-venv.sh could not install it from PyPI)"
  exit 77
fi
exec "$python" "$root/test/e2e/onnx_suite_data.py" "$out"
