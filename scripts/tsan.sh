#!/bin/sh
# tsan.sh BUILD_DIR
# ThreadSanitizer over the runtime: builds libkiln_runtime and the C API's
# stress test with -fsanitize=thread into BUILD_DIR-tsan, then runs 8
# threads x 1,000 runs on one shared model (each thread its own session,
# created and freed every 100 runs) and the C API test's 4-sessions-on-
# 4-threads check. Models come from BUILD_DIR (compiled by `make test`'s
# models-compile-run; this script compiles the two it needs when missing
# or stale).
# The models are generated code only (--no-libraries): oneDNN and GNU
# OpenMP are not built with the sanitizer, and TSan cannot see their
# synchronisation, so runs through them would report their internals.
set -eu
build=${1:-build}
out="$build-tsan"
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
flags="-fsanitize=thread -g -O1 -std=gnu11"
models="$build/models"
kiln="$build/bin/kiln"
# (Compiled again when older than the compiler: an artifact of another
# ABI version would be refused.)
for model in mlp squeezenet1_1; do
  [ "$models/$model-generated.so" -nt "$kiln" ] ||
    "$kiln" compile "$models/$model.onnx" -o "$models/$model-generated.so" --no-libraries
done
cc $flags -fPIC -shared -I"$root/runtime/include" -I"$root/runtime/src" \
  "$root"/runtime/src/*.c "$root"/runtime/src/devices/*.c \
  -o "$out/libkiln_runtime.so" -ldl -lgomp -lpthread -fopenmp
cc $flags -I"$root/runtime/include" -I"$root/test/e2e" "$root/test/e2e/stress_test.c" \
  -L"$out" -lkiln_runtime -Wl,-rpath,"$(cd "$out" && pwd)" -lpthread -lm -o "$out/stress-test"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
"$out/stress-test" threads "$models/mlp-generated.so" 8 1000
"$out/stress-test" threads "$models/squeezenet1_1-generated.so" 4 20
echo "tsan: no data race reported"
