#!/usr/bin/env python3
"""Kiln against ONNX Runtime on the reference models, in one run.

usage: run.py --build BUILD [--models a,b] [--batches 1,8] [--threads 2]
              [--runs 15] [--repeats 5] [--out docs/Performance.md]
              [--busy] [--quick]

For every model and batch: Kiln's latency (bench/kiln_bench.c through the
runtime alone) and ONNX Runtime's (CPU execution provider, the same
thread count, inter-op 1, sequential, graph optimisation on), interleaved
on the same inputs, each figure the minimum of `--repeats` medians of
`--runs` runs; the same for single operators (bench/op_models.py: TopK of
5 over 32,000 classes; `--ops-only` prints just that table). Also: the
machine's limit (bench/peak.c: FMA peak with the
widest vectors, stream triad) and each model's FLOP rate as a fraction of
it; time to first result and peak RSS for resnet50 (a C program, and
ONNX Runtime's process); the runtime's per-run overhead (a one-element
model); resnet50's compile time. With --busy, every model again at batch
1 with a busy loop pinned to one core (at the lowest priority, then at
the benchmark's), Kiln with 1 and 2 threads and with 2 threads and the
adaptive thread count. Writes the tables to --out and a bar chart beside it
(PNG, when matplotlib is there).

Without onnxruntime (the Debian python in `make test`) the peer's columns
say so; `make bench` runs this in the project's venv, which has it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALL_MODELS = ["resnet50", "mobilenet_v2", "bert_encoder", "squeezenet1_1", "resnet18", "mlp"]
HEADLINE = ["resnet50", "mobilenet_v2", "bert_encoder"]
DEBIAN_PYTHON = "/usr/bin/python3"


def parse_figures(text):
    """`key value` lines -> {key: [values]}."""
    figures = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                figures.setdefault(parts[0], []).append(float(parts[1]))
            except ValueError:
                pass
    return figures


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


# ---------------------------------------------------------------- the peer

def ort_worker(args):
    """Runs in a child process: ONNX Runtime's figures for one model."""
    import numpy as np
    import onnxruntime as ort
    start = time.perf_counter()
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(args.ort_worker, options, providers=["CPUExecutionProvider"])
    created = time.perf_counter()
    feeds = {session.get_inputs()[0].name: np.load(args.input)}
    session.run(None, feeds)
    first = time.perf_counter()
    print(f"create_ms {(created - start) * 1e3:.3f}")
    print(f"first_run_ms {(first - created) * 1e3:.3f}")
    for _ in range(2):
        session.run(None, feeds)
    for _ in range(args.repeats):
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            session.run(None, feeds)
            times.append((time.perf_counter() - t) * 1e3)
        print(f"median_ms {statistics.median(times):.4f}")
    # VmHWM: this process's own peak (ru_maxrss would keep the parent's).
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                print(f"peak_rss_kib {line.split()[1]}")


def have_ort():
    try:
        import onnxruntime  # noqa: F401
        return True
    except ImportError:
        return False


def ort_figures(model_path, input_path, threads, runs, repeats):
    out = run([sys.executable, os.path.abspath(__file__), "--ort-worker", model_path,
               "--input", input_path, "--threads", str(threads), "--runs", str(runs),
               "--repeats", str(repeats)])
    return parse_figures(out)


# ---------------------------------------------------------------- FLOPs

def model_flops(onnx_path, batch):
    """2 x multiply-adds of every Conv, MatMul and Gemm at `batch`."""
    try:
        import onnx
        from onnx import shape_inference
    except ImportError:
        return None
    model = onnx.load(onnx_path)
    for value in list(model.graph.input) + list(model.graph.output):
        dims = value.type.tensor_type.shape.dim
        if dims and not dims[0].HasField("dim_value"):
            dims[0].dim_value = batch
    model = shape_inference.infer_shapes(model, data_prop=True)
    shapes = {}
    for value in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        dims = value.type.tensor_type.shape.dim
        shapes[value.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)

    def known(name):
        s = shapes.get(name)
        return s if s and all(d for d in s) else None

    flops = 0
    for node in model.graph.node:
        if node.op_type == "Conv":
            w, out = known(node.input[1]), known(node.output[0])
            if w and out:
                macs = 1
                for d in out:
                    macs *= d
                for d in w[1:]:
                    macs *= d
                flops += 2 * macs
        elif node.op_type in ("MatMul", "Gemm"):
            a, out = known(node.input[0]), known(node.output[0])
            if a and out:
                k = a[-1] if not (node.op_type == "Gemm" and any(
                    at.name == "transA" and at.i for at in node.attribute)) else a[-2]
                macs = k
                for d in out:
                    macs *= d
                flops += 2 * macs
    return flops


# ---------------------------------------------------------------- oneDNN alone

def primitive_breakdown(kiln_bench, so, inp, threads):
    """oneDNN's own timing of each primitive of one run (DNNL_VERBOSE):
    {kind: (calls, ms, GFLOP)} with the FLOPs of convolutions and matmuls."""
    import re
    env = dict(os.environ, DNNL_VERBOSE="1")
    out = subprocess.run([kiln_bench, "latency", so, inp, str(threads), "1", "1"],
                         capture_output=True, text=True, env=env).stdout
    lines = [l.split(",") for l in out.splitlines() if l.startswith("onednn_verbose,exec,cpu,")]
    lines = lines[-len(lines) // 4:] if lines else []  # the last of 3 warm-up runs + 1
    kinds = {}
    for f in lines:
        kind, problem, ms = f[3], f[-2], float(f[-1])
        flops = 0
        if kind == "convolution":
            d = dict((k, int(v)) for k, v in re.findall(r"([a-z]+)(\d+)", problem))
            g = int(re.match(r"g(\d+)", problem).group(1)) if problem.startswith("g") else 1
            flops = 2 * d["mb"] * d["oc"] * d["oh"] * d["ow"] * d["ic"] // g * d["kh"] * d["kw"]
        elif kind == "matmul":
            shapes = [list(map(int, x.split("x"))) for x in problem.split(":")]
            if len(shapes) == 3:
                src, dst = shapes[0], shapes[2]
                flops = 2 * src[-1]
                for v in dst:
                    flops *= v
        calls, total, gflop = kinds.get(kind, (0, 0.0, 0.0))
        kinds[kind] = (calls + 1, total + ms, gflop + flops / 1e9)
    return kinds


# ---------------------------------------------------------------- single operators

def op_rows(kiln, kiln_bench, work, threads, runs, repeats, peer, log):
    """Single operators (bench/op_models.py) against ONNX Runtime: each
    (operator, input, batch) timed like a model, interleaved."""
    ops = os.path.join(work, "ops")
    run([DEBIAN_PYTHON, os.path.join(ROOT, "bench", "op_models.py"), ops])
    cases = json.load(open(os.path.join(ops, "ops.json")))
    for model in sorted({c["model"] for c in cases}):
        run([kiln, "compile", os.path.join(ops, model + ".onnx"), "-o",
             os.path.join(ops, model + ".so")])
    rows = []
    for case in cases:
        so, onnx_path = (os.path.join(ops, case["model"] + ext) for ext in (".so", ".onnx"))
        inp = os.path.join(ops, case["file"])
        kiln_medians, ort_medians = [], []
        for _ in range(repeats):
            kiln_medians += parse_figures(run([kiln_bench, "latency", so, inp, str(threads),
                                               str(runs), "1"]))["median_ms"]
            if peer:
                ort_medians += ort_figures(onnx_path, inp, threads, runs, 1)["median_ms"]
        k, o = min(kiln_medians), (min(ort_medians) if ort_medians else None)
        rows.append(dict(case, kiln_ms=k, ort_ms=o))
        log(f"{case['model']} {case['input']} b{case['batch']}: kiln {k:.4f} ms, "
            f"ort {fmt(o, '.4f')} ms")
    return rows


def op_lines(rows, threads):
    lines = ["## Single operators", "",
             f"Operators one model each (bench/op_models.py), {threads} threads for both, timed "
             "like the models. TopK: the 5 best of 32,000 float32 class scores a row; `random`: "
             "standard normal rows (few entries beat the 5th best so far), `ascending`: each row "
             "0, 1, 2, ... (every entry does: the worst case of Kiln's scan, which keeps the best "
             "so far sorted; ONNX Runtime keeps a heap). ConvTranspose: a decoder's 2x "
             "upsampling, 4 x 4 kernel, stride 2 (Kiln: one stride-1 convolution of the "
             "input by output phase, in oneDNN, then interleaved; ONNX Runtime: its own "
             "transposed convolution).", "",
             "| operator | input | batch | Kiln ms | ORT ms | ORT / Kiln |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        ratio = r["ort_ms"] / r["kiln_ms"] if r["ort_ms"] else None
        lines.append(f"| {r['op']} | {r['input']} | {r['batch']} | {r['kiln_ms']:.4f} | "
                     f"{fmt(r['ort_ms'], '.4f')} | {fmt(ratio)} |")
    return lines + [""]


# ---------------------------------------------------------------- report

def fmt(x, spec=".2f"):
    return "n/a" if x is None else format(x, spec)


def write_chart(path, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    labels = [f"{r['model']}\nb{r['batch']}" for r in rows]
    kiln = [r["kiln_ms"] for r in rows]
    ort = [r["ort_ms"] or 0 for r in rows]
    ratio = [(o / k if o and k else 0) for k, o in zip(kiln, ort)]
    fig, ax = plt.subplots(figsize=(max(6, len(rows) * 0.9), 4))
    ax.bar(range(len(rows)), ratio, color=["#2a7" if x >= 1 else "#c52" for x in ratio])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("ONNX Runtime time / Kiln time (>1: Kiln faster)")
    ax.set_title("Kiln vs ONNX Runtime, same threads, same run")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default=",".join(ALL_MODELS))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "Performance.md"))
    ap.add_argument("--busy", action="store_true")
    ap.add_argument("--quick", action="store_true", help="one model's pipeline check (make test)")
    ap.add_argument("--ops-only", action="store_true",
                    help="only the single operators' table, printed (docs/Performance.md untouched)")
    ap.add_argument("--ort-worker")
    ap.add_argument("--input")
    args = ap.parse_args()
    if args.ort_worker:
        ort_worker(args)
        return

    build = os.path.abspath(args.build)
    kiln = os.path.join(build, "bin", "kiln")
    kiln_bench = os.path.join(build, "bin", "kiln_bench")
    peak_bin = os.path.join(build, "bin", "kiln_peak")
    models_dir = os.path.join(build, "models")
    work = os.path.join(build, "bench")
    os.makedirs(work, exist_ok=True)
    models = args.models.split(",")
    batches = [int(b) for b in args.batches.split(",")]
    peer = have_ort()
    log = print
    if args.ops_only:
        print("\n".join(op_lines(op_rows(kiln, kiln_bench, work, args.threads, args.runs,
                                          args.repeats, peer, log), args.threads)))
        return

    # The models (exported once, cached, by Debian's torch) and artifacts.
    run([DEBIAN_PYTHON, os.path.join(ROOT, "test", "models", "export_models.py"), models_dir,
         "--dynamic-batch"] + models)
    compile_s = {}
    for m in models:
        so = os.path.join(work, m + ".so")
        start = time.perf_counter()
        run([kiln, "compile", os.path.join(models_dir, m + ".onnx"), "-o", so])
        compile_s[m] = time.perf_counter() - start
        log(f"compiled {m} in {compile_s[m]:.1f} s")

    limits = parse_figures(run([peak_bin, str(args.threads)]))
    peak = (limits.get("fma_avx512_gflops") or limits.get("fma_avx2_gflops") or [None])[0]
    log(f"machine: {limits}")

    def input_of(m, batch):
        return os.path.join(models_dir, f"{m}.input{'' if batch == 1 else batch}.npy")

    rows = []
    for m in models:
        for batch in batches:
            so, onnx_path, inp = os.path.join(work, m + ".so"), os.path.join(models_dir, m + ".onnx"), input_of(m, batch)
            if not os.path.exists(inp):
                continue
            kiln_medians, ort_medians = [], []
            # Interleaved: one median of each, repeated.
            for _ in range(args.repeats):
                kiln_medians += parse_figures(run([kiln_bench, "latency", so, inp, str(args.threads),
                                                   str(args.runs), "1"]))["median_ms"]
                if peer:
                    ort_medians += ort_figures(onnx_path, inp, args.threads, args.runs, 1)["median_ms"]
            flops = model_flops(onnx_path, batch)
            k = min(kiln_medians)
            o = min(ort_medians) if ort_medians else None
            row = {"model": m, "batch": batch, "kiln_ms": k, "ort_ms": o,
                   "speedup": (o / k) if o else None, "gflop": flops / 1e9 if flops else None}
            row["kiln_limit"] = (flops / (k / 1e3) / 1e9 / peak) if flops and peak else None
            row["ort_limit"] = (flops / (o / 1e3) / 1e9 / peak) if flops and peak and o else None
            rows.append(row)
            log(f"{m} b{batch}: kiln {k:.2f} ms, ort {fmt(o)} ms, ort/kiln {fmt(row['speedup'])}")

    # Single operators (not in --quick, make test's pipeline check).
    operators = [] if args.quick else op_rows(kiln, kiln_bench, work, args.threads, args.runs,
                                              args.repeats, peer, log)

    # Start-up and memory: resnet50 (or the first model) at batch 1.
    first = "resnet50" if "resnet50" in models else models[0]
    so, onnx_path, inp = os.path.join(work, first + ".so"), os.path.join(models_dir, first + ".onnx"), input_of(first, 1)
    startup = parse_figures(run([kiln_bench, "startup", so, inp, str(args.threads)]))
    weights_mib = os.path.getsize(onnx_path) / 2**20
    ort_start = ort_figures(onnx_path, inp, args.threads, 3, 1) if peer else {}

    # Per-run overhead: a one-element model.
    tiny_dir = os.path.join(work, "tiny")
    os.makedirs(tiny_dir, exist_ok=True)
    tiny_so = os.path.join(tiny_dir, "tiny.so")
    run([kiln, "compile", os.path.join(ROOT, "bench", "tiny.mlir"), "-o", tiny_so])
    run([DEBIAN_PYTHON, "-c", "import numpy as np, sys; np.save(sys.argv[1], np.ones((1,), np.float32))",
         os.path.join(tiny_dir, "x.npy")])
    overhead = parse_figures(run([kiln_bench, "overhead", tiny_so, os.path.join(tiny_dir, "x.npy"),
                                  "2000" if args.quick else "100000"]))

    # oneDNN's primitives timed alone in resnet50 and bert_encoder (batch 1):
    # where Kiln's time goes, against the peer's whole model.
    breakdowns = []
    for m in [x for x in ("resnet50", "bert_encoder") if x in models] or models[:1]:
        kinds = primitive_breakdown(kiln_bench, os.path.join(work, m + ".so"), input_of(m, 1),
                                    args.threads)
        if kinds:
            breakdowns.append((m, kinds))

    busy_rows = []
    # The busy core: a loop at the lowest priority (what the goal names),
    # then one at the same priority as the benchmark.
    hogs = [("nice 19", ["nice", "-n", "19"]), ("same priority", [])] if args.busy else []
    for label, prefix in hogs:
        hog = subprocess.Popen(prefix + ["taskset", "-c", "1", "sh", "-c", "while :; do :; done"])
        try:
            for m in models:
                so, onnx_path, inp = os.path.join(work, m + ".so"), os.path.join(models_dir, m + ".onnx"), input_of(m, 1)
                figures = {}
                # 1 and 2 threads as they are, then 2 threads with the
                # adaptive thread count (KILN_ADAPTIVE_THREADS=1: half the
                # threads while that is faster).
                for key, threads, adaptive in (("kiln1", 1, "0"), ("kiln2", 2, "0"),
                                               ("kiln2a", 2, "1")):
                    ms = []
                    for _ in range(args.repeats):
                        ms += parse_figures(run([kiln_bench, "latency", so, inp, str(threads), str(args.runs), "1"],
                                                env=dict(os.environ, KILN_ADAPTIVE_THREADS=adaptive)))["median_ms"]
                    figures[key] = min(ms)
                for threads in (1, 2):
                    if peer:
                        figures[f"ort{threads}"] = min(ort_figures(onnx_path, inp, threads, args.runs, args.repeats)["median_ms"])
                busy_rows.append((label, m, figures))
                log(f"busy ({label}) {m}: {figures}")
        finally:
            hog.kill()

    # The report.
    def geomean(values):
        values = [v for v in values if v]
        if not values:
            return None
        product = 1.0
        for v in values:
            product *= v
        return product ** (1 / len(values))

    headline = geomean([r["speedup"] for r in rows if r["model"] in HEADLINE])
    lines = ["# Kiln's performance", "",
             "Written by `make bench` (bench/run.py) on "
             f"{time.strftime('%Y-%m-%d')}; do not edit by hand. Machine: "
             f"{os.cpu_count()} cores, {args.threads} threads for both Kiln and ONNX Runtime "
             f"({'onnxruntime ' + __import__('onnxruntime').__version__ if peer else 'ONNX Runtime not installed'}, "
             "CPU execution provider, inter-op 1, sequential, all graph optimisations). "
             f"Each latency is the minimum of {args.repeats} medians of {args.runs} runs, Kiln and "
             "ONNX Runtime interleaved, on the same inputs (the reference models' sample inputs).",
             "",
             f"Machine limit ({args.threads} threads): FMA peak "
             f"{fmt((limits.get('fma_avx512_gflops') or [None])[0], '.0f')} GFLOP/s with AVX-512, "
             f"{fmt((limits.get('fma_avx2_gflops') or [None])[0], '.0f')} with AVX2; stream triad "
             f"{fmt((limits.get('triad_gbs') or [None])[0], '.1f')} GB/s. "
             "\"% of limit\" is the model's FLOP rate (2 x the multiply-adds of its "
             "convolutions and matmuls) over the FMA peak.",
             "",
             "| model | batch | GFLOP | Kiln ms | ORT ms | ORT / Kiln | Kiln % of limit | ORT % of limit |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['batch']} | {fmt(r['gflop'])} | {r['kiln_ms']:.2f} | {fmt(r['ort_ms'])} | "
                     f"{fmt(r['speedup'])} | {fmt(r['kiln_limit'] * 100 if r['kiln_limit'] else None, '.0f')} | "
                     f"{fmt(r['ort_limit'] * 100 if r['ort_limit'] else None, '.0f')} |")
    lines += ["", f"Geometric mean of ORT / Kiln over {', '.join(HEADLINE)} at batch "
              f"{', '.join(map(str, batches))}: **{fmt(headline)}** (goal: >= 1.25; above 1 means Kiln is faster).",
              "", "![ORT time / Kiln time](Performance.png)", ""]
    if operators:
        lines += op_lines(operators, args.threads)
    lines += ["## Start-up, memory, overhead, compile time", "",
              f"{first}, batch 1, {args.threads} threads, measured by bench/kiln_bench.c (a C program linking "
              "only the runtime) and ONNX Runtime's own process:", "",
              "| figure | Kiln | ONNX Runtime | goal |", "| --- | ---: | ---: | --- |",
              f"| load + create session | {fmt((startup['load_ms'][0] + startup['create_ms'][0]))} ms | "
              f"{fmt((ort_start.get('create_ms') or [None])[0])} ms | |",
              f"| first run | {fmt(startup['first_run_ms'][0])} ms | {fmt((ort_start.get('first_run_ms') or [None])[0])} ms | |",
              f"| time to first result | {fmt(startup['first_result_ms'][0])} ms | "
              f"{fmt(ort_start['create_ms'][0] + ort_start['first_run_ms'][0] if ort_start else None)} ms | < 100 ms |",
              f"| peak RSS | {startup['peak_rss_kib'][0] / 1024:.0f} MiB | "
              f"{fmt(ort_start['peak_rss_kib'][0] / 1024 if ort_start else None, '.0f')} MiB (Python process) | "
              f"<= weights {weights_mib:.0f} MiB + arena {startup['arena_bytes'][0] / 2**20:.1f} MiB + 16 MiB "
              f"(the session's pool, which holds the arena and the intermediates a dynamic batch "
              f"keeps out of it: {startup.get('pool_reserved_bytes', [0])[0] / 2**20:.1f} MiB) |",
              f"| runtime overhead per run (one-element model, 1 thread) | {overhead['per_run_us'][0]:.2f} us | | < 2 us |",
              f"| compile time (`kiln compile`, {args.threads} cores) | {compile_s[first]:.1f} s | | < 15 s |",
              ""]
    if breakdowns:
        lines += ["## oneDNN's primitives alone", "",
                  "oneDNN's own timing (DNNL_VERBOSE) of each primitive in one warm run at batch 1: "
                  "the library calls Kiln cannot make faster itself. GFLOP/s over the FMA peak "
                  "shows how close the primitive runs to the machine.", "",
                  "| model | primitive | calls | ms | GFLOP | GFLOP/s | % of peak | whole model: Kiln ms / ORT ms |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for m, kinds in breakdowns:
            row = next((r for r in rows if r["model"] == m and r["batch"] == 1), None)
            whole = f"{row['kiln_ms']:.2f} / {fmt(row['ort_ms'])}" if row else "n/a"
            for kind, (calls, ms, gflop) in sorted(kinds.items()):
                rate = gflop / (ms / 1e3) if gflop and ms else None
                lines.append(f"| {m} | {kind} | {calls} | {ms:.2f} | {gflop:.2f} | {fmt(rate, '.0f')} | "
                             f"{fmt(rate / peak * 100 if rate and peak else None, '.0f')} | {whole} |")
        lines.append("")
    if busy_rows:
        lines += ["## With one core busy", "",
                  "A busy loop pinned to core 1, at the lowest priority (nice 19, the goal's "
                  "condition) and then at the benchmark's own priority; batch 1, ms. \"adaptive\": "
                  "the session's adaptive thread count on (KILN_ADAPTIVE_THREADS=1, off by default: "
                  "half the threads while that is faster).", "",
                  "| busy loop | model | Kiln 1 thread | Kiln 2 threads | Kiln 2 threads, adaptive "
                  "| ORT 1 thread | ORT 2 threads |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for label, m, f in busy_rows:
            lines.append(f"| {label} | {m} | {f['kiln1']:.2f} | {f['kiln2']:.2f} | {f['kiln2a']:.2f} | "
                         f"{fmt(f.get('ort1'))} | {fmt(f.get('ort2'))} |")
        lines.append("")
    # Training steps (K10): Kiln's compiled step against PyTorch eager.
    train_rows = None
    if not args.quick:
        torch_python = os.path.expanduser("~/.cache/kiln/torch-venv/bin/python")
        cmd = [os.path.join(ROOT, "scripts", "with-kiln-module.sh"), os.path.join(work, "train"),
               os.path.join(ROOT, "bench", "train_bench.py"), kiln, os.path.join(work, "train", "run"),
               "--threads", str(args.threads), "--json", os.path.join(work, "train.json")]
        if os.path.exists(torch_python):
            cmd += ["--torch-python", torch_python]
        try:
            subprocess.run(cmd, check=True, capture_output=True, text=True)
            train_rows = json.load(open(os.path.join(work, "train.json")))
        except (subprocess.CalledProcessError, OSError, ValueError) as e:
            log(f"training-step benchmark failed: {getattr(e, 'stderr', e)}")
    if train_rows:
        lines += ["## Training step", ""] + train_rows["markdown"] + [""]
    lines += ["## Compile times", "", "| model | seconds |", "| --- | ---: |"]
    lines += [f"| {m} | {s:.1f} |" for m, s in compile_s.items()]
    lines.append("")
    notes = os.path.join(ROOT, "bench", "notes.md")
    if os.path.exists(notes) and not args.quick:
        lines += [open(notes).read()]
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines))
    chart = os.path.splitext(out)[0] + ".png"
    drew = write_chart(chart, rows)
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"rows": rows, "limits": limits, "startup": startup, "ort_startup": ort_start,
                   "overhead": overhead, "compile_s": compile_s, "busy": busy_rows}, f, indent=1)
    log(f"wrote {out}" + (f" and {chart}" if drew else " (no chart: matplotlib missing)"))
    print(f"{len(rows)} passed, 0 failed")


if __name__ == "__main__":
    main()
