#!/usr/bin/env bash
# run_python_module_test.sh KILN MODELS_DIR WORK_DIR
# Installs the `kiln` Python module as a user would (pip install of the
# repository's python/ folder into a fresh venv over Debian's python, whose
# numpy and torch it sees) and runs python_module_test.py with it. The
# sources are copied first so that the build writes nothing into the tree.
set -euo pipefail
kiln=$1 models=$2 work=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work/src"
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
exec "$work/venv/bin/python" -W ignore::UserWarning "$src/test/python/python_module_test.py" \
  "$kiln" "$models" "$work/run"
