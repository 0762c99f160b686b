#!/bin/sh
# conv_post_ops_test.sh KILN MODELS_DIR WORK_DIR
# resnet18 compiled with --conv-post-ops: its convolution epilogues (bias,
# residual sum, relu) run inside the oneDNN calls, and the results match
# torch at batch 1 and 8. Prints "N passed, N failed".
. "$(dirname "$0")/common.sh" # kiln, models, work from the arguments
model=resnet18
if "$kiln" compile "$models/$model.onnx" -o "$work/$model.so" --conv-post-ops > "$work/compile.txt" 2>&1; then
  "$kiln" inspect "$work/$model.so" --kernels > "$work/kernels.txt"
  fused=$(grep -c "oneDNN conv+bias" "$work/kernels.txt")
  residual=$(grep -c "oneDNN conv+bias+residual+relu" "$work/kernels.txt")
  if [ "$fused" -gt 0 ] && [ "$residual" -gt 0 ]; then
    pass "$fused convolutions with post-ops, $residual of them with the residual sum and relu"
  else
    fail "no convolution took its epilogue"; cat "$work/kernels.txt"
  fi
else
  fail "compile"; cat "$work/compile.txt"
fi
run_batches "$kiln" "$work/$model.so" "$models" "$model" "$work"
summary
