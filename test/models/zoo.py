#!/usr/bin/env python3
"""The torchvision zoo (docs/ModelZoo.md): every classification model of
Debian's torchvision, random weights (seed 0), eval mode, exported to ONNX
(opset 17) with a dynamic batch, as a new user would export it.

For each model: `kiln check` (does it import with its dynamic batch?),
and for the models named with --run (all with --run-all, one of each
family with --run-representatives): compiled once and run at batch 1 and
4 against torch within --tolerance relative error (max abs error / max
|torch|). --representatives-half 1|2 checks and runs half of the family
representatives (the two ctest entries).

usage: zoo.py KILN WORK_DIR [--run NAME,...] [--run-all] [--run-representatives]
              [--representatives-half 1|2] [--report FILE] [--only NAME,...]
              [--keep EARLIER_REPORT]
Ends with the line `N passed, N failed`; --report writes the table of
docs/ModelZoo.md.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision
import torchvision.models as tvm

# One representative of each family (the smallest), run at test time.
REPRESENTATIVES = [
    "alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s",
    "googlenet", "inception_v3", "mnasnet0_5", "mobilenet_v2", "mobilenet_v3_small",
    "regnet_x_400mf", "resnet18", "resnext50_32x4d", "shufflenet_v2_x0_5", "squeezenet1_0",
    "swin_t", "vgg11", "vit_b_16", "wide_resnet50_2", "maxvit_t",
]


def family(name):
    for prefix in ["efficientnet_v2", "mobilenet_v3", "mobilenet_v2", "shufflenet_v2",
                   "wide_resnet", "resnext", "regnet", "convnext", "densenet", "efficientnet",
                   "mnasnet", "squeezenet", "swin", "vgg", "vit", "resnet", "inception",
                   "googlenet", "alexnet", "maxvit"]:
        if name.startswith(prefix):
            return prefix
    return name


def classifiers():
    return sorted(tvm.list_models(module=tvm))


def export(name, folder):
    """(onnx path, torch module, input size); files are kept between runs."""
    torch.manual_seed(0)
    kwargs = {"aux_logits": False, "init_weights": True} if name in ("googlenet",
                                                                    "inception_v3") else {}
    model = tvm.get_model(name, weights=None, **kwargs).eval()
    size = 299 if name == "inception_v3" else 224
    path = os.path.join(folder, name + ".onnx")
    if not os.path.exists(path):
        x = torch.randn(1, 3, size, size)
        # With gradients on: torch 1.13's eval-mode attention fast path
        # (vit) has no ONNX export.
        torch.onnx.export(model, x, path + ".tmp", opset_version=17,
                          input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
        os.replace(path + ".tmp", path)
    return path, model, size


def check(kiln, path):
    p = subprocess.run([kiln, "check", path], capture_output=True, text=True)
    out = (p.stdout + p.stderr).strip()
    if p.returncode == 0:
        return True, ""
    lines = [l.strip() for l in out.splitlines() if l.startswith("  node")]
    return False, (lines[0] if lines else out.splitlines()[-1])[:160]


def run(kiln, name, path, model, size, folder, tolerance):
    """Worst relative error over batch 1 and 4, or an error message."""
    artifact = os.path.join(folder, name + ".so")
    p = subprocess.run([kiln, "compile", path, "-o", artifact], capture_output=True, text=True)
    if p.returncode != 0:
        return None, "compile: " + (p.stdout + p.stderr).strip().splitlines()[-1][:160]
    worst = 0.0
    for batch in (1, 4):
        torch.manual_seed(batch)
        x = torch.randn(batch, 3, size, size)
        with torch.no_grad():
            want = model(x).numpy()
        inp = os.path.join(folder, f"{name}.in{batch}.npy")
        np.save(inp, x.numpy())
        outdir = os.path.join(folder, f"{name}.out{batch}")
        p = subprocess.run([kiln, "run", artifact, "--input", f"input={inp}", "--output-dir",
                            outdir], capture_output=True, text=True)
        if p.returncode != 0:
            return None, f"run at batch {batch}: " + (p.stdout + p.stderr).strip()[-160:]
        got = np.load(os.path.join(outdir, "logits.npy"))
        if got.shape != want.shape:
            return None, f"batch {batch}: shape {got.shape}, torch {want.shape}"
        worst = max(worst, float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)))
    return worst, "" if worst <= tolerance else f"relative error {worst:.1e} > {tolerance:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kiln")
    ap.add_argument("work")
    ap.add_argument("--only", help="these models only (comma-separated)")
    ap.add_argument("--run", default="", help="models to compile and run (comma-separated)")
    ap.add_argument("--run-representatives", action="store_true",
                    help="compile and run one model of each family")
    ap.add_argument("--run-all", action="store_true")
    ap.add_argument("--representatives-half", type=int, choices=(1, 2),
                    help="check, compile and run every other representative (1: the first, "
                         "third, ...; 2: the second, ...), for two test entries")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--report", help="write the markdown table here")
    ap.add_argument("--keep", help="an earlier report whose rows stand for the models this run "
                                   "does not check (to resume or redo part of a long run)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(2)
    # The family representatives first (the quickest view of every family).
    names = args.only.split(",") if args.only else (
        REPRESENTATIVES + [n for n in classifiers() if n not in REPRESENTATIVES])
    to_run = set(args.run.split(",")) - {""}
    if args.representatives_half:
        names = REPRESENTATIVES[args.representatives_half - 1::2]
        to_run = set(names)
    if args.run_representatives:
        to_run |= set(REPRESENTATIVES)
    kept = [r for r in read_report(args.keep) if r[0] not in names] if args.keep else []
    rows, failed, passed = [], 0, 0
    for name in names:
        start = time.time()
        try:
            path, model, size = export(name, args.work)
        except Exception as e:  # an exporter failure is torch's, not Kiln's
            rows.append((name, "export failed (torch)", str(e).splitlines()[0][:120], ""))
            print(f"{name}: SKIPPED: torch cannot export it: {str(e).splitlines()[0][:120]}")
            continue
        ok, why = check(args.kiln, path)
        result = ""
        if not ok:
            failed += 1
        elif args.run_all or name in to_run:
            error, problem = run(args.kiln, name, path, model, size, args.work, args.tolerance)
            if problem:
                failed += 1
                result = problem
            else:
                passed += 1
                result = f"matches torch at batch 1 and 4 (relative error {error:.1e})"
        else:
            passed += 1
        rows.append((name, "imports" if ok else "does not import", why, result))
        print(f"{name}: {'imports' if ok else 'DOES NOT IMPORT: ' + why}"
              f"{'; ' + result if result else ''} ({time.time() - start:.0f} s)", flush=True)
        del model
        if args.report:  # after every model, so that a long run can be stopped
            pending = [(n, "not checked yet", "", "") for n in names[len(rows):]]
            with open(args.report, "w") as f:
                f.write(report(rows + pending + kept, len(kept)))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def read_report(path):
    """The rows (model, status, why, result) of a report this script wrote."""
    rows = []
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if len(cells) != 4 or cells[0] in ("model", "---"):
                continue
            name, _, check, result = cells
            status, _, why = check.partition(": ")
            rows.append((name, status, why, "" if result == "-" else result))
    return rows


def report(rows, kept=0):
    exported = [r for r in rows if not r[1].startswith("export failed")]
    imported = sum(1 for r in rows if r[1] == "imports")
    checked = sum(1 for r in exported if r[1] != "not checked yet")
    ran = sum(1 for r in rows if r[3].startswith("matches"))
    lines = [
        "# The torchvision zoo",
        "",
        "Generated by `make zoo` (`test/models/zoo.py`); do not edit. Every classification",
        f"model of Debian's torchvision {torchvision.__version__} (torch {torch.__version__}),",
        "random weights (seed 0), eval mode, exported to ONNX opset 17 with a dynamic batch",
        "(`dynamic_axes` on dim 0 of the input and the logits), then `kiln check`.",
        "",
        f"**{len(rows)} models; torch exports {len(exported)}; {imported} of the {checked} "
        f"checked import; {ran} compiled and run, all matching torch at batch 1 and 4**"
        if ran == sum(1 for r in rows if r[3]) else
        f"**{len(rows)} models; torch exports {len(exported)}; {imported} of the {checked} "
        f"checked import; {ran} of {sum(1 for r in rows if r[3])} compiled and run match "
        "torch**",
        "",
        "`make test` compiles one model of each family (ctest `zoo-representatives-*`) and",
        "runs it at batch 1 and 4 against torch (max abs error / max |torch| <= 1e-4);",
        "`make zoo` checks every model and compiles and runs every one (a row's last",
        "column is `-` where the run that wrote this table only checked it)."
        + (f" {kept} rows come from an earlier run (`--keep`)." if kept else ""),
        "",
        "| model | family | kiln check | compiled and run |",
        "| --- | --- | --- | --- |",
    ]
    for name, status, why, result in sorted(rows):
        cell = status + (f": {why}" if why else "")
        lines.append(f"| {name} | {family(name)} | {cell.replace('|', '/')} | "
                     f"{result.replace('|', '/') or '-'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
