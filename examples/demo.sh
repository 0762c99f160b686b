#!/usr/bin/env bash
# `make demo`: what Kiln can do today. There is no CPU backend yet, so the
# demo stops at the IR: it imports a small ONNX CNN, then runs the graph
# phase (shape inference, folding, CSE). It does not compile or run code.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
kiln="$build/bin/kiln"
mkdir -p "$build/examples"
model="$build/examples/small_cnn.onnx"
/usr/bin/python3 "$here/make_small_cnn.py" "$model"

echo "== kiln check $model =="
"$kiln" check "$model"
echo
echo "== kiln import --compile-to=graph (weights elided) =="
"$kiln" import "$model" --compile-to=graph -o "$build/examples/small_cnn.mlir"
sed -n '/^module/,/^}/p' "$build/examples/small_cnn.mlir"
echo
echo "The full IR, weights included, is in $build/examples/small_cnn.mlir."
echo "Kiln cannot compile to native code yet (no CPU backend): the demo stops at the graph phase."
