#!/usr/bin/env bash
# Runs every libFuzzer target of a `make fuzz` build for SECONDS each and
# prints one line per target (executions, rate, corpus, findings), then
# "N passed, N failed" (a target fails when it found a crash, a hang, a
# leak or a sanitizer report).
#   scripts/fuzz.sh FUZZ_BUILD NORMAL_BUILD SECONDS [TARGET...]
set -uo pipefail
fuzz_build=$1 build=$2 seconds=$3
shift 3
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(onnx-import tensor-files kiln-ir descriptor checkpoint)
src=$(cd "$(dirname "$0")/.." && pwd)
seeds=$build/fuzz-seeds
export KILN_FUZZ_MODELS=$build/models/mlp.so:$build/models/squeezenet1_1.so
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:intercept_tls_get_addr=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
declare -A dict=([onnx-import]=onnx.dict [tensor-files]=npy.dict [kiln-ir]=mlir.dict [descriptor]= [checkpoint]=)
passed=0 failed=0 summary=()
for target in "${targets[@]}"; do
  corpus=$fuzz_build/corpus/$target findings=$fuzz_build/findings/$target
  # Each run reports its own findings; an earlier run's are kept aside
  # (copy what you fix into fuzz/regressions/<target>).
  if [ -d "$findings" ] && [ -n "$(ls -A "$findings")" ]; then
    rm -rf "$findings.previous" && mv "$findings" "$findings.previous"
  fi
  mkdir -p "$corpus" "$findings"
  log=$fuzz_build/fuzz-$target.log
  args=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=65536
        -print_final_stats=1 -artifact_prefix="$findings/")
  [ -n "${dict[$target]}" ] && args+=(-dict="$src/fuzz/dict/${dict[$target]}")
  echo "fuzz: $target for ${seconds}s (log: $log)"
  "$fuzz_build/bin/fuzz-$target" "${args[@]}" "$corpus" "$seeds/$target" \
    "$src/fuzz/regressions/$target" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  found=$(ls "$findings" | wc -l)
  line="$target: ${runs:-?} executions (${rate:-?}/s), corpus $(ls "$corpus" | wc -l) files, $found findings"
  if [ $rc -eq 0 ] && [ "$found" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    line="$line -- FAILED (exit $rc): see $log and $findings"
  fi
  summary+=("$line")
done
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
