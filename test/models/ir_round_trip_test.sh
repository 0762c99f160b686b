#!/bin/sh
# ir_round_trip_test.sh KILN MODELS_DIR WORK_DIR
# Kiln IR as an input: each model imported to MLIR bytecode (`kiln import
# -o model.mlirbc`) and compiled from there gives the same artifact bytes
# as compiling the ONNX file (models-compile-run's), and so does the MLP
# through text (.mlir, locations kept). Options that belong to the ONNX
# import are refused for IR with a message. Prints "N passed, N failed".
. "$(dirname "$0")/common.sh" # kiln, models, work from the arguments

# round_trip MODEL EXT
round_trip() {
  if ! "$kiln" import "$models/$1.onnx" -o "$work/$1.$2" > "$work/$1.import.txt" 2>&1; then
    fail "$1: kiln import -o $1.$2"; cat "$work/$1.import.txt"; return
  fi
  # The same file name as the ONNX-compiled artifact (it is the soname).
  mkdir -p "$work/from-$2"
  if ! "$kiln" compile "$work/$1.$2" -o "$work/from-$2/$1.so" > "$work/$1.compile.txt" 2>&1; then
    fail "$1: kiln compile $1.$2"; cat "$work/$1.compile.txt"; return
  fi
  if cmp -s "$models/$1.so" "$work/from-$2/$1.so"; then
    pass "$1: ONNX -> .$2 -> artifact is byte-identical to ONNX -> artifact ($(wc -c < "$work/$1.$2") bytes of IR)"
  else
    fail "$1: the artifact compiled from .$2 differs from the one compiled from ONNX"
  fi
}

for model in resnet18 mobilenet_v2 bert_encoder; do
  round_trip "$model" mlirbc
done
round_trip mlp mlir

# Bytecode holds the weights as binary: smaller than the text's hex.
"$kiln" import "$models/mlp.onnx" -o "$work/mlp.mlirbc" > /dev/null 2>&1
text=$(wc -c < "$work/mlp.mlir")
binary=$(wc -c < "$work/mlp.mlirbc")
if [ "$binary" -lt "$text" ]; then
  pass "mlp: bytecode $binary bytes < text $text bytes"
else
  fail "mlp: bytecode $binary bytes is not smaller than text $text bytes"
fi

expect_refusal "--dynamic-batch on kiln IR" "apply when importing ONNX" \
  "$kiln" compile "$work/mlp.mlirbc" --dynamic-batch -o "$work/x.so"
summary
