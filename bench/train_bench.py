"""Training-step time: Kiln's compiled step against PyTorch eager, same threads.

train_bench.py KILN WORK_DIR [--threads T] [--steps N] [--json FILE]
(python with the `kiln` module and torch: scripts/with-kiln-module.sh)
For an MLP and a small CNN (batch 64, cross-entropy, SGD with momentum):
each side runs in its own process (warm-up, then N timed steps; the median
step and the process's peak RSS; the Kiln process never imports torch).
--torch-python picks the PyTorch to compare with (make bench: PyPI's, from
the torch venv, when it exists). PyTorch: zero_grad, forward, loss,
backward, optimiser step; Kiln: one session.run of the step compiled by
`kiln compile --train`. Prints a Markdown table (and writes JSON).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

BATCH = 64
OPTIMIZER = "sgd(lr=0.01,momentum=0.9)"


def models():
    import torch.nn as nn
    return {
        "mlp": (lambda: nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(),
                                      nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10)),
                (1, 28, 28)),
        "cnn": (lambda: nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Flatten(), nn.Linear(32 * 7 * 7, 10)),
                (1, 28, 28)),
    }


SHAPES = {"mlp": (1, 28, 28), "cnn": (1, 28, 28)}


def worker(args):
    # The Kiln side imports no torch: its peak RSS is Kiln's own.
    rng = np.random.default_rng(0)
    shape = SHAPES[args.model]
    x = rng.standard_normal((BATCH, *shape)).astype(np.float32)
    t = rng.integers(0, 10, BATCH).astype(np.int64)
    if args.worker == "kiln":
        import kiln
        session = kiln.load(args.artifact).session(threads=args.threads)
        feed = {"x": x, "target": t}
        step = lambda: session.run(feed)
    else:
        import torch
        torch.set_num_threads(args.threads)
        torch.manual_seed(0)
        model = models()[args.model][0]()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        tx, tt = torch.from_numpy(x), torch.from_numpy(t)

        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(tx), tt).backward()
            opt.step()
    for _ in range(10):
        step()
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    print(json.dumps({"ms": 1e3 * float(np.median(times)),
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln", nargs="?")
    ap.add_argument("work", nargs="?")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--json")
    ap.add_argument("--torch-python", default=sys.executable,
                    help="the python whose torch is the peer (default: this one)")
    ap.add_argument("--worker")
    ap.add_argument("--model")
    ap.add_argument("--artifact")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    import torch
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for name, (make, shape) in models().items():
        torch.manual_seed(0)
        onnx_path = os.path.join(args.work, f"{name}.onnx")
        torch.onnx.export(make(), torch.zeros(BATCH, *shape), onnx_path, input_names=["x"],
                          output_names=["logits"], opset_version=17, do_constant_folding=False)
        artifact = os.path.join(args.work, f"{name}-train.so")
        start = time.perf_counter()
        subprocess.run([args.kiln, "compile", onnx_path, "-o", artifact, "--quiet", "--train",
                        f"--optimizer={OPTIMIZER}"], check=True)
        compile_s = time.perf_counter() - start
        row = {"model": name, "batch": BATCH, "threads": args.threads, "compile_s": compile_s}
        for side in ("kiln", "torch"):
            python = sys.executable if side == "kiln" else args.torch_python
            out = subprocess.run([python, __file__, "--worker", side, "--model", name,
                                  "--artifact", artifact, "--threads", str(args.threads),
                                  "--steps", str(args.steps)],
                                 capture_output=True, text=True, check=True)
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            row[f"{side}_ms"], row[f"{side}_rss_mib"] = figures["ms"], figures["rss_mib"]
        rows.append(row)
    peer = subprocess.run([args.torch_python, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True).stdout.strip()
    lines = [f"Training step, batch {BATCH}, {args.threads} threads, SGD with momentum, "
             f"median of {args.steps} steps (PyTorch {peer} eager):", "",
             "| model | Kiln ms/step | PyTorch ms/step | PyTorch / Kiln | Kiln peak RSS MiB | "
             "PyTorch peak RSS MiB | compile s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['kiln_ms']:.3f} | {r['torch_ms']:.3f} | "
                     f"{r['torch_ms'] / r['kiln_ms']:.2f} | {r['kiln_rss_mib']:.0f} | "
                     f"{r['torch_rss_mib']:.0f} | {r['compile_s']:.2f} |")
    print("\n".join(lines))
    if args.json:
        json.dump({"rows": rows, "markdown": lines}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
