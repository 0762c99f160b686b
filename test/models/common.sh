# Shared by the model test scripts (sourced with their arguments KILN
# MODELS_DIR WORK_DIR): counters, and a model run against torch's outputs
# at batch 1 and 8.
kiln=$1
models=$2
work=$3
mkdir -p "$work"
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# run_batches KILN ARTIFACT MODELS_DIR MODEL WORK_DIR
run_batches() {
  for batch in 1 8; do
    suffix=$([ "$batch" = 1 ] && echo "" || echo "$batch")
    if "$1" run "$2" --input "input=$3/$4.input$suffix.npy" \
         --expected "output=$3/$4.output$suffix.npy" --max-relative-error 1e-4 \
         > "$5/run$batch.txt" 2>&1; then
      pass "batch $batch: $(grep relative "$5/run$batch.txt" | sed 's/^ *//')"
    else
      fail "batch $batch"; cat "$5/run$batch.txt"
    fi
  done
}

# expect_refusal WHAT PATTERN COMMAND...: COMMAND must fail with a message
# matching PATTERN (grep).
expect_refusal() {
  what=$1
  pattern=$2
  shift 2
  if "$@" > "$work/refusal.txt" 2>&1; then
    fail "$what: was accepted"
  elif grep -q -- "$pattern" "$work/refusal.txt"; then
    pass "$what: refused: $(head -1 "$work/refusal.txt")"
  else
    fail "$what: unexpected message"; cat "$work/refusal.txt"
  fi
}

summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
