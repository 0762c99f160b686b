"""Inputs and expected outputs for nn.test's pad-pools case: zero padding
written out before average pools and a convolution (as torch exports
F.avg_pool2d with padding), computed with NumPy's sliding windows."""
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

out = sys.argv[1]
rng = np.random.default_rng(11)
x = rng.standard_normal((2, 4, 6, 7)).astype(np.float32)
w = rng.standard_normal((3, 4, 3, 3)).astype(np.float32)


def window_sums(v):
    return sliding_window_view(v, (3, 3), axis=(2, 3)).sum(axis=(-1, -2))


p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
# AveragePool of p without padding of its own: every window is 9 values.
a = window_sums(p) / 9
# With padding of its own left out of the divisor: p's zeros count, the
# pool's do not.
spread = ((0, 0), (0, 0), (1, 1), (1, 1))
b = window_sums(np.pad(p, spread)) / window_sums(np.pad(np.ones_like(p), spread))
q = np.pad(x, ((0, 0), (0, 0), (0, 1), (1, 0)))
c = np.einsum("nchwij,ocij->nohw", sliding_window_view(q, (3, 3), axis=(2, 3)), w)
for name, value in [("x", x), ("w", w), ("a", a), ("b", b), ("c", c)]:
    np.save(f"{out}/{name}.npy", value.astype(np.float32))
