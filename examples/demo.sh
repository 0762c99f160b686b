#!/usr/bin/env bash
# `make demo`: a small ONNX CNN from ONNX to native code and back. Builds
# the model, checks it, compiles it to a shared library for this CPU, runs
# it on a sample input and benchmarks it.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
kiln="$build/bin/kiln"
out="$build/examples"
mkdir -p "$out"
/usr/bin/python3 "$here/make_small_cnn.py" "$out/small_cnn.onnx" "$out/image.npy"

echo "== kiln check small_cnn.onnx =="
"$kiln" check "$out/small_cnn.onnx"
echo
echo "== kiln compile small_cnn.onnx -o small_cnn.so =="
"$kiln" compile "$out/small_cnn.onnx" -o "$out/small_cnn.so"
echo "header: $out/small_cnn.h"
echo
echo "== kiln run small_cnn.so (batch of 2 images) =="
"$kiln" run "$out/small_cnn.so" --input "image=$out/image.npy" --output-dir "$out/outputs"
/usr/bin/python3 -c "import numpy as np; np.set_printoptions(precision=4, suppress=True); print(np.load('$out/outputs/probs.npy'))"
echo
echo "== kiln bench small_cnn.so --batch 8 =="
"$kiln" bench "$out/small_cnn.so" --batch 8
