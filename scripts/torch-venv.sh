#!/usr/bin/env bash
# Creates the venv the PyTorch frontend's tests run in (default
# ~/.cache/kiln/torch-venv, or $KILN_TORCH_VENV): torch 2.x, torchvision, onnx (for
# bench/torch_compile_time.py) and numpy from PyPI (about 5.5 GB with the CUDA wheels torch depends on, a few
# minutes; made once per machine and shared by every clone). Never touches
# the system's python. Idempotent; prints the venv's python.
set -euo pipefail
venv=${KILN_TORCH_VENV:-$HOME/.cache/kiln/torch-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch, torchvision, numpy, onnx, torch.export" 2>/dev/null; then
  # python3-venv provides ensurepip for Debian's python.
  if ! /usr/bin/python3 -c "import ensurepip" 2>/dev/null; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
  fi
  echo "torch-venv: installing torch, torchvision and numpy from PyPI into $venv" >&2
  mkdir -p "$(dirname "$venv")"
  /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "torch>=2.5" torchvision numpy onnx >&2
fi
echo "$venv/bin/python"
