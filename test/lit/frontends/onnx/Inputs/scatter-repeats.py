"""Inputs and expected outputs for indexing.test's scatter-repeats case:
scatters whose updates hit some rows more than once, written in turn as
ONNX's reference implementation writes them (the last write wins)."""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
data = rng.standard_normal((6, 3)).astype(np.float32)
idx = np.array([[1], [4], [1], [-2], [0], [1]], dtype=np.int64)
upd = rng.standard_normal((6, 3)).astype(np.float32)
eidx = np.array([[1, 2, 2], [4, 2, 0], [1, 5, 0], [3, 2, 1], [0, 0, 0], [5, 2, 1]], dtype=np.int64)
y = data.copy()
for i in range(len(idx)):
    y[idx[i, 0]] = upd[i]
e = data.copy()
for i in range(eidx.shape[0]):
    for j in range(eidx.shape[1]):
        e[eidx[i, j], j] = upd[i, j]
a = data.copy()
for i in range(len(idx)):
    a[idx[i, 0]] += upd[i]
for name, value in [("data", data), ("idx", idx), ("upd", upd), ("eidx", eidx), ("y", y),
                    ("e", e), ("a", a)]:
    np.save(f"{out}/{name}.npy", value)
