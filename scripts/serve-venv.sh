#!/usr/bin/env bash
# Creates the serving example's venv (default ~/.cache/kiln/serve-venv, or
# $KILN_SERVE_VENV): PyPI's nvidia-pytriton (which ships Triton Inference
# Server, ~370 MB) and numpy, plus the `kiln` Python module built from this
# repository's python/ folder. Never touches the system's python.
# Idempotent (the module is rebuilt each time: it is the repository's);
# prints the venv's python.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${KILN_SERVE_VENV:-$HOME/.cache/kiln/serve-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pytriton, numpy, wheel" 2>/dev/null; then
  /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check nvidia-pytriton numpy setuptools wheel >&2
fi
# Built from a copy, so that nothing is written into the source tree.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$root/python" "$root/runtime" "$work/"
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --force-reinstall \
  --no-deps "$work/python" >&2
echo "$venv/bin/python"
