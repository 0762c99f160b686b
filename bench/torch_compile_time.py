#!/usr/bin/env python3
"""Time to a compiled artifact from a PyTorch module, two ways, in one run:
kiln_torch (torch.export -> kiln IR -> kiln compile) against the ONNX
detour (torch.onnx.export -> kiln compile). Run in the torch venv
(scripts/torch-venv.sh):

  $(scripts/torch-venv.sh) bench/torch_compile_time.py --kiln build/bin/kiln [--model resnet50]

Prints the wall times of each step (median of --repeat runs)."""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "frontends", "torch"))

import torch  # noqa: E402
import torchvision  # noqa: E402

import kiln_torch  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ["KILN"] = args.kiln
    model = getattr(torchvision.models, args.model)().eval()
    example = torch.randn(1, 3, 224, 224)
    traced, detour, export_only = [], [], []
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.repeat):
            start = time.time()
            kiln_torch.compile(model, (example,), os.path.join(work, "traced.so"))
            traced.append(time.time() - start)

            start = time.time()
            onnx_path = os.path.join(work, "model.onnx")
            torch.onnx.export(model, (example,), onnx_path, dynamo=False,
                              input_names=["input"], output_names=["output"],
                              dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
            exported = time.time() - start
            subprocess.run([args.kiln, "compile", onnx_path, "-o", os.path.join(work, "onnx.so")],
                           check=True, capture_output=True)
            detour.append(time.time() - start)
            export_only.append(exported)
    med = statistics.median
    print(f"{args.model}: kiln_torch.compile {med(traced):.1f} s; "
          f"torch.onnx.export + kiln compile {med(detour):.1f} s "
          f"(export {med(export_only):.1f} s); median of {args.repeat}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
