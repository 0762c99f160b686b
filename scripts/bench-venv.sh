#!/usr/bin/env bash
# Creates the benchmark's project-local venv (default .venv-bench, or
# $KILN_BENCH_VENV) with the peer and the chart's packages from PyPI:
# onnxruntime (the peer), onnx (FLOP counts), numpy, matplotlib. Never
# touches the system's python. Idempotent; prints the venv's python.
set -euo pipefail
venv=${KILN_BENCH_VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv-bench}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import onnxruntime, onnx, numpy, matplotlib" 2>/dev/null; then
  # python3-venv provides ensurepip for Debian's python.
  if ! /usr/bin/python3 -c "import ensurepip" 2>/dev/null; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
  fi
  /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check onnxruntime onnx numpy matplotlib >&2
fi
echo "$venv/bin/python"
