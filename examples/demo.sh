#!/usr/bin/env bash
# `make demo`: what Kiln can do today. The CPU backend does not exist yet, so
# the demo runs the graph phase (shape inference, folding, CSE) on a bundled
# model and shows the IR before and after; it does not compile or run code.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
opt="$build/bin/kiln-opt"

echo "== examples/mlp.mlir as imported =="
grep -v '^//' "$here/mlp.mlir"
echo
echo "== after Kiln's graph phase (kiln-opt --kiln-graph) =="
"$opt" --kiln-graph "$here/mlp.mlir"
echo
echo "Kiln cannot compile to native code yet (no CPU backend): this demo stops at the graph phase."
