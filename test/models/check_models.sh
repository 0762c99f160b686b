#!/bin/sh
# check_models.sh KILN OUT_DIR MODEL...
# Exports the named reference models (cached in OUT_DIR) with Debian's
# torch at opset 17, batch dim dynamic, and runs `kiln check` on each; fails if Kiln reports
# anything it cannot import.
set -e
kiln=$1
out=$2
shift 2
/usr/bin/python3 "$(dirname "$0")/export_models.py" "$out" --dynamic-batch "$@"
status=0
for model in "$@"; do
  if "$kiln" check "$out/$model.onnx" > "$out/$model.check.txt"; then
    echo "PASS: $model: $(grep '^nodes:' "$out/$model.check.txt"), all importable"
  else
    echo "FAIL: $model"
    cat "$out/$model.check.txt"
    status=1
  fi
done
exit $status
