#!/usr/bin/env python3
"""An artifact with more than 2 GiB of weights (two 1.2 GB constants):
it compiles, links and reads the last element of each. The weights go to
the large read-only section (.lrodata, after every other section) and the
code reaches them through the GOT; in .rodata they pushed the data, the
GOT and .bss beyond the 2 GiB a PC-relative reference reaches, and the
link failed ("relocation truncated to fit"; torchvision's vit_h_14).

usage: large_weights_test.py KILN WORK_DIR
Writes about 7.5 GB (the model, the artifact, the linker's input) and
removes them; skipped (exit 77, the reason printed) without 12 GB of free
disk and memory. Ends with the line `N passed, N failed`.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KILN, WORK = sys.argv[1], sys.argv[2]
NEED = 12 << 30


def available_memory():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
if shutil.disk_usage(WORK).free < NEED or available_memory() < NEED:
    print(f"SKIP: needs 12 GB of free disk and memory (disk {shutil.disk_usage(WORK).free >> 30} "
          f"GB, memory {available_memory() >> 30} GB)")
    sys.exit(77)

n = 300_000_000  # float32: 1.2 GB each, 2.4 GB in all
inits = []
for k in range(2):
    w = np.zeros(n, np.float32)
    w[0], w[n // 2], w[-1] = 1.5 + k, -2.5 - 2 * k, 7.25 + 3 * k
    inits.append(numpy_helper.from_array(w, f"w{k}"))
    del w
nodes = [helper.make_node("Gather", ["w0", "i"], ["a"], axis=0),
         helper.make_node("Gather", ["w1", "i"], ["b"], axis=0),
         helper.make_node("Sub", ["b", "a"], ["y"])]
graph = helper.make_graph(nodes, "large", [helper.make_tensor_value_info("i", TensorProto.INT64, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
path = os.path.join(WORK, "large.onnx")
onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                location="large.bin")
del model, graph, inits
np.save(os.path.join(WORK, "i.npy"), np.array([0, n // 2, n - 1], np.int64))
artifact = os.path.join(WORK, "large.so")
failed = 0
p = subprocess.run([KILN, "compile", path, "-o", artifact], capture_output=True, text=True)
os.remove(os.path.join(WORK, "large.bin"))
if p.returncode != 0:
    print("FAIL: compile: " + (p.stdout + p.stderr).strip()[-600:])
    failed = 1
else:
    p = subprocess.run([KILN, "run", artifact, "--input", f"i={WORK}/i.npy", "--output-dir",
                        os.path.join(WORK, "out")], capture_output=True, text=True)
    got = np.load(os.path.join(WORK, "out", "y.npy")) if p.returncode == 0 else None
    want = np.array([1.0, -2.0, 3.0], np.float32)
    if got is None or not np.array_equal(got, want):
        print(f"FAIL: run: {(p.stdout + p.stderr).strip()[-300:]} got {got}, want {want}")
        failed = 1
    else:
        print("PASS: 2.4 GB of weights compile, link and read back at both ends")
shutil.rmtree(WORK, ignore_errors=True)
print(f"{1 - failed} passed, {failed} failed")
sys.exit(failed)
