#!/bin/sh
# dry_run.sh KILN MODELS_DIR WORK_DIR DRIVER CUBLASLT CUDNN
# Keeps the GPU check ready for a machine with a GPU (docs/Gpu.md, "On a
# GPU"): test/gpu/prepare.py makes a small bundle here, then
# test/gpu/run.sh --dry-run runs its whole flow on the driver, cuBLASLt and
# cuDNN stand-ins (outputs not compared, nothing timed), then checks that
# run.sh left the source tree as it found it (it builds the `kiln` module
# from a temporary copy).
# Skipped (77) without the torch venv, whose python builds the module and
# runs the check. Ends with gpu_check.py's `N passed, N failed`.
set -eu
kiln=$1 models=$2 work=$3
venv=${KILN_TORCH_VENV:-$HOME/.cache/kiln/torch-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import numpy, pip" 2>/dev/null; then
  echo "skipped: no torch venv at $venv (scripts/torch-venv.sh makes it; make test runs it)"
  exit 77
fi
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work/out"
tree() { (cd "$src" && find python runtime test/gpu | LC_ALL=C sort); }
tree > "$work/tree-before.txt"
"$venv/bin/python" "$src/test/gpu/prepare.py" "$work/bundle" --kiln "$kiln" --models "$models" \
  --model mlp --model squeezenet1_1 --conformance 20 --case node/test_nonzero_example \
  --case node/test_cast_FLOAT_to_STRING --train mlp
OUT="$work/out" PYTHON="$venv/bin/python" KILN_CUDA_DRIVER=$4 KILN_CUBLASLT_LIBRARY=$5 \
  KILN_CUDNN_LIBRARY=$6 sh "$src/test/gpu/run.sh" "$work/bundle" --dry-run
tree > "$work/tree-after.txt"
if ! diff "$work/tree-before.txt" "$work/tree-after.txt"; then
  echo "FAIL: run.sh left files in the source tree (above)"
  exit 1
fi
echo "PASS: run.sh left the source tree as it found it"
