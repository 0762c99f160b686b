#!/bin/sh
# compile_and_run.sh KILN OUT_DIR MAX_RELATIVE_ERROR MODEL...
# Exports each reference model with a dynamic batch (cached), compiles it
# once with `kiln compile`, runs that one artifact with `kiln run` on
# torch's batch-1 and batch-8 inputs and compares with torch's outputs by
# relative error (max abs error / max |reference|). Compiles it a second
# time and checks that the artifact is byte-identical. Prints
# "N passed, N failed".
kiln=$1
out=$2
max_rel=$3
shift 3
/usr/bin/python3 "$(dirname "$0")/export_models.py" "$out" --dynamic-batch "$@" > /dev/null || exit 1
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
for model in "$@"; do
  if ! "$kiln" compile "$out/$model.onnx" -o "$out/$model.so" > "$out/$model.compile.txt" 2>&1; then
    fail "$model: compile"; cat "$out/$model.compile.txt"; continue
  fi
  for batch in 1 8; do
    suffix=$([ "$batch" = 1 ] && echo "" || echo "$batch")
    if "$kiln" run "$out/$model.so" --input "input=$out/$model.input$suffix.npy" \
         --expected "output=$out/$model.output$suffix.npy" --max-relative-error "$max_rel" \
         > "$out/$model.run$batch.txt" 2>&1; then
      pass "$model: batch $batch: $(grep 'relative' "$out/$model.run$batch.txt" | sed 's/^ *//')"
    else
      fail "$model: batch $batch"; cat "$out/$model.run$batch.txt"
    fi
  done
  mkdir -p "$out/again"
  "$kiln" compile "$out/$model.onnx" -o "$out/again/$model.so" > /dev/null 2>&1
  if cmp -s "$out/$model.so" "$out/again/$model.so" && cmp -s "$out/$model.h" "$out/again/$model.h"; then
    pass "$model: compiling twice gives byte-identical artifacts"
  else
    fail "$model: the two compilations differ"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
