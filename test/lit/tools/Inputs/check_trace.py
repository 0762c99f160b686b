"""check_trace.py TRACE.json KERNELS RUNS: the trace `kiln bench --trace`
wrote has RUNS run slices, each holding one slice per kernel (KERNELS of
them, in order, inside the run, not overlapping), each with its model
nodes and bytes. Prints what it checked; exits 1 on the first problem."""
import json
import sys

trace, kernels, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
events = json.load(open(trace))["traceEvents"]
run_slices = [e for e in events if e.get("cat") == "run"]
kernel_slices = [e for e in events if e.get("cat") == "kernel"]
assert len(run_slices) == runs, f"{len(run_slices)} runs, expected {runs}"
assert len(kernel_slices) == runs * kernels, f"{len(kernel_slices)} kernel slices, expected {runs * kernels}"
for r, run in enumerate(run_slices):
    inside = [k for k in kernel_slices if run["ts"] <= k["ts"] <= run["ts"] + run["dur"]]
    assert [k["args"]["kernel"] for k in inside] == list(range(kernels)), f"run {r}: kernels out of order"
    for a, b in zip(inside, inside[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + 1e-3, f"run {r}: kernels overlap"
    assert inside[-1]["ts"] + inside[-1]["dur"] <= run["ts"] + run["dur"] + 1e-3, "a kernel outlives its run"
for k in kernel_slices:
    assert k["ph"] == "X" and k["dur"] >= 0 and k["name"].startswith(f"#{k['args']['kernel']} ")
    assert k["args"]["model nodes"], f"{k['name']}: no model nodes"
    assert k["args"]["bytes"] > 0, f"{k['name']}: no bytes"
print(f"trace ok: {runs} runs x {kernels} kernels, nested, in order, with nodes and bytes")
