#!/bin/sh
# cuda_compile_models.sh KILN OUT_DIR STAND_IN CUBLASLT_STAND_IN CUDNN_STAND_IN MODEL...
# Compiles each reference model (exported by models-compile-run) for CUDA
# (--gpu=sm_80,sm_90: every kernel through ptxas for both), twice for
# byte-identical artifacts, then runs it at batch 1 and 8 through the
# runtime's CUDA device on the driver stand-in STAND_IN and the cuBLASLt
# and cuDNN stand-ins (no GPU here: the generated kernels are not run, so
# the numbers are not checked; what is checked is that the session loads
# the cubin, finds every kernel by name, that every launch is valid, that
# the library calls' descriptors, graphs and plans are accepted and the
# run completes). Prints "N passed, N failed"; exits 1 if any failed.
kiln=$1
out=$2
stand_in=$3
export KILN_CUBLASLT_LIBRARY=$4 KILN_CUDNN_LIBRARY=$5
shift 5
if [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ] && ! command -v ptxas > /dev/null; then
  echo "SKIPPED: no ptxas (the CUDA toolkit) on this machine"
  exit 0
fi
mkdir -p "$out/cuda" "$out/cuda/again"
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
for model in "$@"; do
  so="$out/cuda/$model.so"
  if ! "$kiln" compile "$out/$model.onnx" --target=cuda --gpu=sm_80,sm_90 --batch-buckets=1,8 \
       -o "$so" > "$out/cuda/$model.compile.txt" 2>&1; then
    fail "$model: compile for CUDA"; tail -5 "$out/cuda/$model.compile.txt"; continue
  fi
  pass "$model: compiled for sm_80 and sm_90"
  "$kiln" compile "$out/$model.onnx" --target=cuda --gpu=sm_80,sm_90 --batch-buckets=1,8 \
    -o "$out/cuda/again/$model.so" > /dev/null 2>&1
  if cmp -s "$so" "$out/cuda/again/$model.so"; then
    pass "$model: compiling twice gives byte-identical artifacts"
  else
    fail "$model: the two compilations differ"
  fi
  for batch in 1 8; do
    suffix=$([ "$batch" = 1 ] && echo "" || echo "$batch")
    if KILN_CUDA_DRIVER="$stand_in" "$kiln" run "$so" --input "input=$out/$model.input$suffix.npy" \
         > "$out/cuda/$model.run$batch.txt" 2>&1; then
      pass "$model: batch $batch runs on the stand-in driver"
    else
      fail "$model: batch $batch on the stand-in driver"; tail -5 "$out/cuda/$model.run$batch.txt"
    fi
  done
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
