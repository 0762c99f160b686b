#!/usr/bin/env bash
# Compiles every model of a fuzz corpus with `kiln compile` and runs each
# artifact that compiles once (`kiln bench`: inputs of zeros, one thread),
# so that what the importer accepts also goes through lowering, code
# generation and the runtime (docs/Fuzzing.md). A refusal with a message is
# fine; a crash (a signal), a timeout, or a refusal that prints nothing is a
# finding: its input is copied to OUT_DIR/findings. Prints one line per
# finding, the counts, then "N passed, N failed" (models, not findings).
#   scripts/corpus-sweep.sh KILN OUT_DIR FILE...
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: scripts/corpus-sweep.sh KILN OUT_DIR FILE..." >&2
  exit 2
fi
kiln=$1 out=$2
shift 2
mkdir -p "$out/findings"
compiled=0 ran=0 run_refused=0 refused=0 findings=0
finding() { # what, file, log
  findings=$((findings + 1))
  echo "FINDING: $1: $2: $(tail -1 "$3")"
  cp "$2" "$out/findings/"
}
for model in "$@"; do
  timeout 120 "$kiln" compile "$model" -o "$out/model.so" >"$out/compile.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    compiled=$((compiled + 1))
    timeout 120 "$kiln" bench "$out/model.so" --runs 1 --warmup 1 --threads 1 >"$out/run.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
      ran=$((ran + 1))
    elif [ $rc -ge 124 ] || ! grep -q . "$out/run.log"; then
      finding "run (exit $rc)" "$model" "$out/run.log"
    else
      run_refused=$((run_refused + 1))
    fi
  elif [ $rc -ge 124 ] || ! grep -q . "$out/compile.log"; then
    finding "compile (exit $rc)" "$model" "$out/compile.log"
  else
    refused=$((refused + 1))
  fi
  rm -f "$out/model.so"
done
echo "corpus-sweep: $compiled compiled ($ran ran, $run_refused refused to run), $refused refused," \
     "$findings findings"
echo "$(($# - findings)) passed, $findings failed"
[ $findings -eq 0 ]
