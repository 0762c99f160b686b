#!/bin/sh
# compile_and_run.sh KILN OUT_DIR MAX_RELATIVE_ERROR MODEL...
# Exports each reference model (cached), compiles it with `kiln compile`,
# runs it with `kiln run` on torch's sample input and compares with torch's
# output by relative error. Compiles it a second time and checks that the
# artifact is byte-identical.
set -e
kiln=$1
out=$2
max_rel=$3
shift 3
/usr/bin/python3 "$(dirname "$0")/export_models.py" "$out" "$@" > /dev/null
status=0
for model in "$@"; do
  "$kiln" compile "$out/$model.onnx" -o "$out/$model.so" > /dev/null
  if "$kiln" run "$out/$model.so" --input "input=$out/$model.input.npy" \
       --expected "output=$out/$model.output.npy" --max-relative-error "$max_rel" \
       > "$out/$model.run.txt"; then
    echo "PASS: $model: $(grep 'relative' "$out/$model.run.txt" | sed 's/^ *//')"
  else
    echo "FAIL: $model"; cat "$out/$model.run.txt"; status=1
  fi
  mkdir -p "$out/again"
  "$kiln" compile "$out/$model.onnx" -o "$out/again/$model.so" > /dev/null
  if cmp -s "$out/$model.so" "$out/again/$model.so" && cmp -s "$out/$model.h" "$out/again/$model.h"; then
    echo "PASS: $model: compiling twice gives byte-identical artifacts"
  else
    echo "FAIL: $model: the two compilations differ"; status=1
  fi
done
exit $status
