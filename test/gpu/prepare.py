#!/usr/bin/env python3
"""Prepares a bundle for test/gpu/run.sh: CUDA artifacts compiled here (no
GPU needed), their inputs and PyTorch's outputs as .npy, oneDNN's headers
(the runtime's C sources include them; the GPU machine lacks them) and a
manifest. The bundle travels with the working tree to a GPU machine (at
most 64 MiB: split the models over bundles).

usage: prepare.py BUNDLE --kiln build/bin/kiln --models build/models
                  [--model NAME ...] [--nondeterministic NAME ...]
                  [--conformance N] [--case NAME ...] [--train NAME ...] [--gpu sm_90]

--model NAME: a reference model exported by models-compile-run (NAME.onnx,
NAME.input.npy / .output.npy at batch 1, NAME.input8.npy / .output8.npy
at batch 8; torch 1.13's outputs, float32, this machine's CPU).
--nondeterministic NAME: that --model once more, compiled with
--allow-nondeterministic (cuDNN may pick any algorithm), as
NAME-nondeterministic: its numbers and its speed beside the default's.
--conformance N: the first N ONNX backend cases (every 3rd, for variety)
that the CPU backend passes and that compile for CUDA (as they are,
nothing frozen), with their test data as .npy.
--case NAME: that conformance case too (e.g. node/test_nonzero_example:
a size computed on the GPU that the host reads back).
--train NAME: a training step of reference model NAME (kiln compile
--train, batch 8, Adam, cross-entropy) for the GPU and the same step for
the CPU (--cpu=x86-64, so that it runs on any x86-64 host), with 5 batches
of random inputs and targets: the GPU's losses and parameters are checked
against the CPU's, step by step.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))


def compile_artifact(kiln, model, out, gpu, extra=()):
    """For the GPU `gpu`, or for any x86-64 CPU when `gpu` is None."""
    target = ["--target=cuda", f"--gpu={gpu}"] if gpu else ["--cpu=x86-64"]
    args = [kiln, "compile", model, *target, "-q", "-o", out, *extra]
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode == 0, (p.stdout + p.stderr).strip()


def plain_array(a):
    """A string tensor (ONNX gives an object array of bytes) as a 'U'
    array, which np.load reads without pickle and the kiln module takes
    as strings."""
    if a.dtype != object:
        return a
    import numpy as np
    flat = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in a.flat]
    return np.array(flat, dtype=str).reshape(a.shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--conformance", type=int, default=0)
    ap.add_argument("--case", action="append", default=[],
                    help="a conformance case to add by name (node/test_nonzero_example)")
    ap.add_argument("--nondeterministic", action="append", default=[],
                    help="a --model compiled once more with --allow-nondeterministic "
                         "(checked and timed as NAME-nondeterministic)")
    ap.add_argument("--train", action="append", default=[],
                    help="a --model's training step, on the GPU against the CPU")
    ap.add_argument("--gpu", default="sm_90")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    args = ap.parse_args()
    os.makedirs(args.bundle, exist_ok=True)
    manifest = {"gpu": args.gpu, "models": [], "conformance": [], "training": []}

    variants = [(name, name, []) for name in args.model]
    for name in args.nondeterministic:
        if name not in args.model:
            sys.exit(f"--nondeterministic {name}: not one of the --model names")
        variants.append((name, f"{name}-nondeterministic", ["--allow-nondeterministic"]))
    for name, label, extra in variants:
        onnx_path = os.path.join(args.models, f"{name}.onnx")
        so = os.path.join(args.bundle, f"{label}.so")
        ok, text = compile_artifact(args.kiln, onnx_path, so, args.gpu,
                                    ["--batch-buckets=1,8", *extra])
        if not ok:
            sys.exit(f"{label}: {text}")
        os.remove(so[:-3] + ".h")
        cases = []
        for batch, suffix in ((1, ""), (8, "8")):
            for kind in ("input", "output"):
                shutil.copy(os.path.join(args.models, f"{name}.{kind}{suffix}.npy"),
                            os.path.join(args.bundle, f"{name}.{kind}{suffix}.npy"))
            cases.append({"batch": batch, "input": f"{name}.input{suffix}.npy",
                          "output": f"{name}.output{suffix}.npy"})
        manifest["models"].append({"name": label, "torchvision": name,
                                   "artifact": f"{label}.so", "cases": cases})
        print(f"{label}: {os.path.getsize(so) / 2**20:.1f} MiB")

    for name in args.train:
        import numpy as np
        onnx_path = os.path.join(args.models, f"{name}.onnx")
        step = ["--train", "--train-batch=8", "--optimizer=adam(lr=0.001)"]
        artifacts = {}
        for where, gpu in (("gpu", args.gpu), ("cpu", None)):
            so = os.path.join(args.bundle, f"{name}-train-{where}.so")
            ok, text = compile_artifact(args.kiln, onnx_path, so, gpu, step)
            if not ok:
                sys.exit(f"--train {name} ({where}): {text}")
            os.remove(so[:-3] + ".h")
            artifacts[where] = os.path.basename(so)
        x = np.load(os.path.join(args.models, f"{name}.input8.npy"))
        classes = np.load(os.path.join(args.models, f"{name}.output8.npy")).shape[-1]
        rng = np.random.default_rng(0)
        steps = []
        for k in range(5):
            xs, ts = f"{name}-train.x{k}.npy", f"{name}-train.t{k}.npy"
            np.save(os.path.join(args.bundle, xs), rng.standard_normal(x.shape).astype(x.dtype))
            np.save(os.path.join(args.bundle, ts), rng.integers(0, classes, x.shape[0]))
            steps.append({"x": xs, "target": ts})
        manifest["training"].append({"name": name, **artifacts, "steps": steps})
        print(f"{name}: training step for the GPU and the CPU, {len(steps)} batches")

    if args.conformance or args.case:
        import numpy as np
        from onnx import numpy_helper, TensorProto
        from onnx_cases import data_files, list_cases, read_expected
        cpu = read_expected(os.path.join(HERE, "..", "e2e", "onnx_conformance_expected.txt"))
        folder = os.path.join(args.bundle, "conformance")
        os.makedirs(folder, exist_ok=True)
        every = [c for c in list_cases(args.data) if cpu.get(c[0]) == "passed"]
        named = [c for c in every if c[0] in args.case]
        missing = set(args.case) - {c[0] for c in named}
        if missing:
            sys.exit(f"--case: not a case the CPU backend passes: {', '.join(sorted(missing))}")
        cases = [c for c in every[::3] if c[0] not in args.case]
        for k, (name, case_dir) in enumerate(named + cases):
            if k >= len(named) and len(manifest["conformance"]) >= args.conformance + len(named):
                break
            stem = name.replace("/", "_")
            so = os.path.join(folder, f"{stem}.so")
            ok, text = compile_artifact(args.kiln, os.path.join(case_dir, "model.onnx"), so,
                                        args.gpu)
            if not ok:
                if k < len(named):
                    sys.exit(f"--case {name}: {text}")
                continue  # does not compile for CUDA
            os.remove(so[:-3] + ".h")
            entry = {"name": name, "artifact": f"conformance/{stem}.so", "inputs": [],
                     "outputs": []}
            for kind, key in (("input_", "inputs"), ("output_", "outputs")):
                for i, path in enumerate(data_files(case_dir, kind).values()):
                    t = TensorProto()
                    with open(path, "rb") as f:
                        t.ParseFromString(f.read())
                    npy = f"conformance/{stem}.{kind}{i}.npy"
                    np.save(os.path.join(args.bundle, npy), plain_array(numpy_helper.to_array(t)))
                    entry[key].append(npy)
            manifest["conformance"].append(entry)
        print(f"conformance: {len(manifest['conformance'])} cases")

    include = os.path.join(args.bundle, "include")
    if not os.path.isdir(include):
        shutil.copytree("/usr/include/oneapi", os.path.join(include, "oneapi"))
    with open(os.path.join(args.bundle, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(args.bundle, "**", "*"),
                                                      recursive=True) if os.path.isfile(p))
    print(f"bundle {args.bundle}: {total / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
