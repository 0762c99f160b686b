#!/bin/sh
# max_batch_test.sh KILN MODELS_DIR WORK_DIR
# A dynamic-batch model compiled with --max-batch 8: buffers that grow with
# the batch are planned into the arena (the report says how many), batch 1
# and 8 match torch, and batch 9 is refused with KILN_ERROR_SHAPE.
# Prints "N passed, N failed".
. "$(dirname "$0")/common.sh" # kiln, models, work from the arguments
model=resnet18
if "$kiln" compile "$models/$model.onnx" -o "$work/$model.so" --max-batch 8 --report \
     > "$work/compile.txt" 2>&1; then
  cat "$work/compile.txt"
  if grep -q "with dynamic dims sized for batch 8" "$work/compile.txt" &&
     ! grep -q " 0 with dynamic dims sized" "$work/compile.txt"; then
    pass "the arena holds the buffers that grow with the batch"
  else
    fail "no buffer with dynamic dims was planned"
  fi
else
  fail "compile"; cat "$work/compile.txt"
fi
run_batches "$kiln" "$work/$model.so" "$models" "$model" "$work"
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.zeros((9, 3, 224, 224), np.float32))" \
  "$work/input9.npy"
expect_refusal "batch 9 on an arena planned for 8" "KILN_ERROR_SHAPE.*dim 0 is 9.*--max-batch" \
  "$kiln" run "$work/$model.so" --input "input=$work/input9.npy"
summary
