#!/usr/bin/env bash
# Creates the venv that holds the newest ONNX backend suite's generator
# (default ~/.cache/kiln/onnx-venv, or $KILN_ONNX_VENV): PyPI's onnx 1.23
# (opsets up to 23) and numpy, about 60 MB, made once per machine. The
# conformance driver itself needs no Python packages; this venv only writes
# the suite's models and data (test/e2e/onnx_suite_data.py). Never touches
# the system's python. Idempotent; prints the venv's python.
set -euo pipefail
venv=${KILN_ONNX_VENV:-$HOME/.cache/kiln/onnx-venv}
want="1.23."
if [ ! -x "$venv/bin/python" ] || \
   ! "$venv/bin/python" -c "import numpy, onnx, sys; sys.exit(not onnx.__version__.startswith('$want'))" 2>/dev/null; then
  # python3-venv provides ensurepip for Debian's python.
  if ! /usr/bin/python3 -c "import ensurepip" 2>/dev/null; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
  fi
  echo "onnx-venv: installing onnx 1.23 and numpy from PyPI into $venv" >&2
  mkdir -p "$(dirname "$venv")"
  /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "onnx==1.23.*" numpy >&2
fi
echo "$venv/bin/python"
