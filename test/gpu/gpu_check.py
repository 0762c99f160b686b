#!/usr/bin/env python3
"""The CUDA backend on a GPU: runs a bundle made by prepare.py with the
`kiln` Python module (the C runtime compiled in) and checks it.

- the reference models at batch 1 and 8 against PyTorch's outputs, relative
  error (max abs error / max |reference|) at most 1e-4; at batch 0, an
  empty output;
- the ONNX conformance cases against their expected outputs (ONNX's rule:
  |got - want| <= 1e-7 + 1e-3 |want|);
- training steps (prepare.py --train): 5 steps on the GPU against the same
  step compiled for the CPU, each loss and then every parameter within
  1e-4 relative; then the step's time (replayed) and the bytes a step
  moves to the GPU (the batch alone: the parameters stay there);
- CUDA Graphs: after the first two runs of a batch, runs replay (no device
  allocation, no stream launch); the host overhead a replay (the host's time
  outside waiting for the GPU, kiln_session_device_stats), from host memory
  and from the session's pinned input buffer (no staging);
- speed at batch 1: Kiln (replays) against PyTorch eager and
  torch.compile(mode="reduce-overhead") of the same torchvision
  architecture on the same GPU, TF32 off, each timed from host memory to
  host memory (what a user of either sees), median of 200 runs.

Writes gpu-results.md and gpu-results.json to --out. Ends with
`N passed, N failed`. --dry-run (no GPU: the driver stand-in) checks the
flow only: outputs are not compared and nothing is timed against torch.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import kiln


def relative_error(got, want):
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    return err / scale if scale > 0 else err


def time_runs(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    ap.add_argument("--out", default=".")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    passed = failed = 0
    lines, results = [], {"models": {}, "conformance": {}, "speed": {}, "training": {}}

    def check(ok, what):
        nonlocal passed, failed
        if ok or args.dry_run:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {what}", flush=True)

    def check_model(m):
        model = kiln.load(os.path.join(args.bundle, m["artifact"]))
        session = model.session()
        name = model.inputs[0][0]
        for case in m["cases"]:
            x = np.load(os.path.join(args.bundle, case["input"]))
            want = np.load(os.path.join(args.bundle, case["output"]))
            for _ in range(3):  # stream, capture, replay
                out = session.run({name: x})
            got = next(iter(out.values()))
            err = relative_error(np.asarray(got), want)
            results["models"][f"{m['name']}@{case['batch']}"] = err
            check(err <= 1e-4, f"{m['name']} batch {case['batch']}: relative error {err:.2e}")
            print(f"{m['name']} batch {case['batch']}: relative error {err:.2e}", flush=True)
        stats = session.device_stats()
        before = stats["device_allocations"]
        x = np.load(os.path.join(args.bundle, m["cases"][0]["input"]))
        ms = time_runs(lambda: session.run({name: x}), args.runs)
        after = session.device_stats()
        check(after["device_allocations"] == before,
              f"{m['name']}: replays allocated {after['device_allocations'] - before} times")
        check(after["graph_captures"] >= 1 and not after["fallback"],
              f"{m['name']}: graphs: {after}")

        def overhead_us(a, b):
            replays = max(b["graph_replays"] - a["graph_replays"], 1)
            return ((b["replay_host_ns"] - a["replay_host_ns"]) / replays / 1e3,
                    (b["replay_staging_ns"] - a["replay_staging_ns"]) / replays / 1e3)
        host_us, staging_us = overhead_us(stats, after)
        # The same runs from the session's pinned input buffer: no staging.
        buffer = session.input_buffer(name, x.shape)
        buffer[...] = x
        stats = session.device_stats()
        ms_buffer = time_runs(lambda: session.run({name: buffer}), args.runs)
        after = session.device_stats()
        buffer_us, _ = overhead_us(stats, after)
        results["speed"][m["name"]] = {"kiln_ms": ms, "kiln_buffer_ms": ms_buffer,
                                       "host_us": host_us, "staging_us": staging_us,
                                       "buffer_host_us": buffer_us, "stats": after}
        print(f"{m['name']}: Kiln batch 1 {ms:.3f} ms, host overhead a replay {host_us:.2f} us "
              f"({staging_us:.2f} us staging the input); from the session's input buffer "
              f"{ms_buffer:.3f} ms, host overhead {buffer_us:.2f} us (goal: < 5 us) ({after})",
              flush=True)
        # A batch of 0 (below the smallest bucket): an empty output, and no
        # library call or kernel that fails on empty operands.
        want = np.load(os.path.join(args.bundle, m["cases"][0]["output"]))
        got = np.asarray(next(iter(session.run({name: x[:0]}).values())))
        check(got.shape == (0,) + want.shape[1:],
              f"{m['name']} batch 0: dims {got.shape}, want {(0,) + want.shape[1:]}")
        print(f"{m['name']} batch 0: output dims {got.shape}", flush=True)
        if stats["cudnn_graph_plans"]:
            # The same model with cuDNN's convolution API instead of fused
            # graphs (read when a session is created): numbers and time.
            os.environ["KILN_CUDNN_GRAPH"] = "0"
            try:
                api = model.session()
            finally:
                del os.environ["KILN_CUDNN_GRAPH"]
            case = m["cases"][0]
            for _ in range(3):
                out = api.run({name: x})
            err = relative_error(np.asarray(next(iter(out.values()))),
                                 np.load(os.path.join(args.bundle, case["output"])))
            check(err <= 1e-4, f"{m['name']} (convolution API): relative error {err:.2e}")
            results["speed"][m["name"]]["kiln_api_ms"] = time_runs(lambda: api.run({name: x}),
                                                                   args.runs)
            print(f"{m['name']}: convolution API: relative error {err:.2e}, batch 1 "
                  f"{results['speed'][m['name']]['kiln_api_ms']:.3f} ms", flush=True)

    def failure(what, e):
        # Counted even in a dry run: the flow itself broke.
        nonlocal failed
        failed += 1
        print(f"FAIL {what}: {type(e).__name__}: {e}", flush=True)

    # One model's failure (a session that cannot be created, a library
    # call that fails) is reported and the rest still run: a GPU's time is
    # short.
    for m in manifest["models"]:
        try:
            check_model(m)
        except Exception as e:
            failure(m["name"], e)

    for t in manifest.get("training", []):
        try:
            gpu = kiln.load(os.path.join(args.bundle, t["gpu"]))
            cpu = kiln.load(os.path.join(args.bundle, t["cpu"]))
            on_gpu, on_cpu = gpu.session(), cpu.session()
            name = gpu.inputs[0][0]
            worst = 0.0
            for s in t["steps"]:
                feeds = {name: np.load(os.path.join(args.bundle, s["x"])),
                         "target": np.load(os.path.join(args.bundle, s["target"]))}
                lg = float(on_gpu.run(feeds)["loss"])
                lc = float(on_cpu.run(feeds)["loss"])
                worst = max(worst, abs(lg - lc) / max(abs(lc), 1e-12))
            for n, _, _ in gpu.parameters:
                worst = max(worst, relative_error(np.asarray(on_gpu.parameter(n)),
                                                  np.asarray(on_cpu.parameter(n))))
            check(worst <= 1e-4, f"training {t['name']}: relative error {worst:.2e}")
            # Then the step's time and what crosses PCIe a step: the
            # parameters stay on the GPU, so only the batch goes (the reads
            # above made the next step upload them: one step first).
            on_gpu.run(feeds)
            before = on_gpu.device_stats()
            steps = max(args.runs // 4, 5)
            ms = time_runs(lambda: on_gpu.run(feeds), steps)
            after = on_gpu.device_stats()
            up = (after["bytes_to_device"] - before["bytes_to_device"]) / steps
            down = (after["bytes_to_host"] - before["bytes_to_host"]) / steps
            batch = sum(v.nbytes for v in feeds.values())
            check(up == batch, f"training {t['name']}: {up:.0f} bytes to the GPU a step, "
                               f"the batch is {batch}")
            results["training"][t["name"]] = {"error": worst, "step_ms": ms,
                                              "bytes_to_device_per_step": up,
                                              "bytes_to_host_per_step": down}
            print(f"training {t['name']}: {len(t['steps'])} steps, losses and parameters "
                  f"within {worst:.2e} of the CPU's; a step {ms:.3f} ms (median of {steps}), "
                  f"{up:.0f} bytes to the GPU and {down:.0f} back a step ({after})", flush=True)
        except Exception as e:
            failure(f"training {t['name']}", e)

    for c in manifest["conformance"]:
        try:
            model = kiln.load(os.path.join(args.bundle, c["artifact"]))
            session = model.session()
            inputs = [np.load(os.path.join(args.bundle, p)) for p in c["inputs"]]
            out = session.run(inputs)
            got = [np.asarray(v) for v in out.values()]
            wants = [np.load(os.path.join(args.bundle, p)) for p in c["outputs"]]
            ok = len(got) == len(wants) and all(
                g.shape == w.shape and (np.issubdtype(w.dtype, np.floating) and
                                        np.allclose(g, w, rtol=1e-3, atol=1e-7, equal_nan=True)
                                        or not np.issubdtype(w.dtype, np.floating) and
                                        np.array_equal(g, w))
                for g, w in zip(got, wants))
        except (kiln.Error, RuntimeError) as e:  # RuntimeError: a dtype NumPy's DLPack lacks
            ok = False
            print(f"{c['name']}: {e}")
        except Exception as e:  # the bundle itself: reported, the rest still run
            results["conformance"][c["name"]] = False
            failure(f"conformance {c['name']}", e)
            continue
        results["conformance"][c["name"]] = bool(ok)
        check(ok, f"conformance {c['name']}")

    if not args.dry_run:
        import torch
        import torchvision
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        for m in manifest["models"]:
            arch = m.get("torchvision", m["name"])
            if not hasattr(torchvision.models, arch) or m["name"] not in results["speed"]:
                continue
            net = getattr(torchvision.models, arch)().eval().cuda()
            x = np.load(os.path.join(args.bundle, m["cases"][0]["input"]))
            speed = results["speed"][m["name"]]
            try:
                with torch.no_grad():
                    run = lambda: net(torch.from_numpy(x).cuda()).cpu()
                    for _ in range(10):
                        run()
                    speed["torch_eager_ms"] = time_runs(run, args.runs)
                    compiled = torch.compile(net, mode="reduce-overhead")
                    run = lambda: compiled(torch.from_numpy(x).cuda()).cpu()
                    for _ in range(10):
                        run()
                    speed["torch_compile_ms"] = time_runs(run, args.runs)
            except Exception as e:  # torch.compile without its compiler, ...
                print(f"{m['name']}: PyTorch timing failed: {type(e).__name__}: {e}", flush=True)
            print(f"{m['name']}: {speed}", flush=True)

    lines.append(f"# Kiln on {'the driver stand-in (dry run)' if args.dry_run else 'a GPU'}")
    lines.append("")
    lines.append("| model | batch | relative error |")
    lines.append("| --- | --- | --- |")
    for k, v in results["models"].items():
        n, b = k.split("@")
        lines.append(f"| {n} | {b} | {v:.2e} |")
    for n, r in results["training"].items():
        lines.append("")
        lines.append(f"Training step {n}: 5 steps on the GPU, losses and parameters within "
                     f"{r['error']:.2e} (relative) of the same step on the CPU; a step "
                     f"{r['step_ms']:.3f} ms (median, replayed), "
                     f"{r['bytes_to_device_per_step']:.0f} bytes to the GPU and "
                     f"{r['bytes_to_host_per_step']:.0f} back a step (the parameters stay on "
                     f"the GPU).")
    if results["conformance"]:
        ok = sum(results["conformance"].values())
        lines.append("")
        lines.append(f"Conformance subset: {ok} of {len(results['conformance'])} cases match.")
    lines.append("")
    lines.append("| model | Kiln ms | Kiln, cuDNN's convolution API ms | torch eager ms | "
                 "torch.compile reduce-overhead ms | Kiln host overhead a replay, us (of it "
                 "staging the input) | the same from the input buffer, us |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- |")
    for n, s in results["speed"].items():
        lines.append(f"| {n} | {s['kiln_ms']:.3f} | {s.get('kiln_api_ms', float('nan')):.3f} | "
                     f"{s.get('torch_eager_ms', float('nan')):.3f} | "
                     f"{s.get('torch_compile_ms', float('nan')):.3f} | "
                     f"{s['host_us']:.2f} ({s['staging_us']:.2f}) | {s['buffer_host_us']:.2f} |")
    lines.append("")
    for n, s in results["speed"].items():
        st = s["stats"]
        if st.get("cudnn_graph_plans", 0) + st.get("cudnn_api_plans", 0):
            lines.append(f"{n}: cuDNN convolution plans: {st['cudnn_graph_plans']} as fused "
                         f"graphs, {st['cudnn_api_plans']} through the convolution API"
                         + (f" (first: {st['cudnn_fallback']})" if st["cudnn_fallback"] else ""))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gpu-results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "gpu-results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    print("\n".join(lines))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
