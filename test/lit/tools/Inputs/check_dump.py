"""check_dump.py MODEL.onnx INPUT.npy DUMP_DIR: the tensors `kiln run --dump
scale,relu1,fc2_bias` wrote for the digits model equal NumPy's evaluation
of those nodes from the model's own weights (within 1e-5 relative)."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model, image, dump = sys.argv[1:4]
weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(model).graph.initializer}
x = np.load(image).reshape(-1, 64)
scale = x / weights["sixteen"]
relu1 = np.maximum(scale @ weights["w1"] + weights["b1"], 0)
fc2_bias = relu1 @ weights["w2"] + weights["b2"]
for name, want in [("scale", scale), ("relu1", relu1), ("fc2_bias", fc2_bias)]:
    got = np.load(f"{dump}/{name}.npy")
    err = np.abs(got - want).max() / np.abs(want).max()
    assert got.shape == want.shape and err < 1e-5, f"{name}: {got.shape} vs {want.shape}, error {err}"
    print(f"{name}: {got.shape} matches NumPy (relative error {err:.1e})")
