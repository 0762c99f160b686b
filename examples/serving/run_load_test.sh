#!/usr/bin/env bash
# run_load_test.sh KILN WORK_DIR [REQUESTS] [CLIENTS]
# The serving example end to end: makes the serving venv
# (scripts/serve-venv.sh: PyTriton, which ships Triton Inference Server, and
# the kiln module), compiles the digits classifier with a dynamic batch
# (--max-batch 64), serves it with Triton and load-tests it on loopback
# over HTTP and gRPC (load_test.py). Exits 77 (skipped, with the reason)
# only when the venv cannot be made (no PyPI).
set -euo pipefail
kiln=$1 work=$2 requests=${3:-2000} clients=${4:-8}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
if ! python=$("$here/../../scripts/serve-venv.sh" 2> "$work/venv.log"); then
  tail -5 "$work/venv.log"
  echo "skip: the serving venv (PyPI nvidia-pytriton) could not be made; see above"
  exit 77
fi
"$kiln" compile "$here/../cmake-consumer/digits.onnx" -o "$work/digits.so" \
  --dynamic-batch --max-batch 64 --quiet
exec "$python" "$here/load_test.py" "$work/digits.so" --requests "$requests" --clients "$clients"
