#!/usr/bin/env bash
# with-kiln-module.sh WORK_DIR SCRIPT.py ARGS...
# Installs the `kiln` Python module as a user would (pip install of the
# repository's python/ folder into a fresh venv over Debian's python, whose
# numpy, torch and onnx it sees) and runs SCRIPT.py with it. The sources
# are copied first so that the build writes nothing into the tree.
set -euo pipefail
work=$1
script=$(realpath "$2")
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work"
mkdir -p "$work/src"
work=$(cd "$work" && pwd)
cp -r "$src/python" "$src/runtime" "$work/src/"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
if ! "$work/venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation \
    "$work/src/python" > "$work/pip.log" 2>&1; then
  cat "$work/pip.log"
  echo "FAIL: pip install python/"
  echo "0 passed, 1 failed"
  exit 1
fi
cd "$work"
exec "$work/venv/bin/python" -W ignore::UserWarning "$script" "$@"
