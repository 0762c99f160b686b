#!/bin/sh
# Runs a python script in the PyTorch frontend's venv (scripts/torch-venv.sh,
# default ~/.cache/kiln/torch-venv or $KILN_TORCH_VENV); exits 77 (ctest's
# skip) with the reason when there is none.
venv=${KILN_TORCH_VENV:-$HOME/.cache/kiln/torch-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch, torchvision" 2>/dev/null; then
  echo "skipped: no torch venv at $venv (scripts/torch-venv.sh makes it; make test runs it)"
  exit 77
fi
exec "$venv/bin/python" "$@"
