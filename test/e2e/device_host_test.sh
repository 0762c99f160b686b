#!/bin/sh
# device_host_test.sh KILN RUNTIME_LIBRARY MODELS_DIR WORK_DIR
# The CPU device checks the host before it accepts a model.
# - The runtime links no vendor library: oneDNN is loaded with dlopen when a
#   model has library calls. With oneDNN missing (here: KILN_ONEDNN_LIBRARY
#   naming a file that is not there), a model compiled with --no-libraries
#   still loads and runs, and one that needs oneDNN is refused at load with
#   a message naming the library.
# - A model compiled for a processor with features this host lacks
#   (--cpu=sapphirerapids: AMX) is refused at load naming them, instead of
#   dying of SIGILL; on a host that has them it runs.
# Prints "N passed, N failed".
runtime=$2
set -- "$1" "$3" "$4"
. "$(dirname "$0")/../models/common.sh" # kiln, models, work from the arguments
missing=/nonexistent/libdnnl.so.2

if readelf -d "$runtime" | grep NEEDED | grep -q dnnl; then
  fail "$(basename "$runtime") links oneDNN: $(readelf -d "$runtime" | grep dnnl)"
else
  pass "$(basename "$runtime") links no oneDNN ($(readelf -d "$runtime" | grep NEEDED | sed 's/.*\[\(.*\)\]/\1/' | paste -sd' '))"
fi

if KILN_ONEDNN_LIBRARY=$missing "$kiln" run "$models/mlp-generated.so" \
     --input "input=$models/mlp.input.npy" --expected "output=$models/mlp.output.npy" \
     --max-relative-error 1e-4 > "$work/generated.txt" 2>&1; then
  pass "without oneDNN, the --no-libraries MLP runs and matches torch"
else
  fail "without oneDNN, the --no-libraries MLP"; cat "$work/generated.txt"
fi

expect_refusal "without oneDNN, the MLP with library calls" "needs oneDNN ($missing) cannot be loaded" \
  env KILN_ONEDNN_LIBRARY=$missing "$kiln" run "$models/mlp.so" --input "input=$models/mlp.input.npy"
if ! "$kiln" compile "$models/mlp.onnx" -o "$work/mlp-amx.so" --cpu=sapphirerapids \
     > "$work/amx-compile.txt" 2>&1; then
  fail "compile for sapphirerapids"; cat "$work/amx-compile.txt"
elif "$kiln" run "$work/mlp-amx.so" --input "input=$models/mlp.input.npy" > "$work/amx.txt" 2>&1; then
  pass "this host has every feature sapphirerapids code may use: it runs"
elif grep -q "needs .*amx-tile.* which this host's processor lacks" "$work/amx.txt"; then
  pass "code for sapphirerapids refused at load: $(cat "$work/amx.txt")"
else
  fail "code for sapphirerapids: unexpected result"; cat "$work/amx.txt"
fi
summary
