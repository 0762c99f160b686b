"""Inputs for exp-values.test, and the check of its outputs against numpy."""
import sys

import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)
SMALLEST_NORMAL = 2.0 ** -126


def make(path):
    special = [-np.inf, -1e30, -104.0, -88.0, -87.5, -87.33, -87.0, -50.0, -10.0, -1.0,
               -1e-3, -0.0, 0.0, 1e-7, 1e-3, 0.5, 1.0, 2.0, 10.0, 50.0, 80.0, 88.0, 88.7,
               88.8, 89.0, 100.0, 1e30, np.inf, np.nan]
    rng = np.random.default_rng(7)
    x = np.empty((4, 32), np.float32)
    x[0, :len(special)] = special
    x[0, len(special):] = rng.uniform(-5, 5, 32 - len(special))
    x[1] = rng.uniform(-87, 88, 32)
    x[2] = rng.standard_normal(32) * 30
    x[3] = rng.uniform(-0.5, 0.5, 32)
    np.save(path, x)


def check(x_path, out_dir):
    x = np.load(x_path)
    got = np.load(out_dir + "/exp.npy").astype(np.float64)
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64))
    bad = []
    for i, (xi, g, w) in enumerate(zip(x.ravel(), got.ravel(), want.ravel())):
        if np.isnan(xi):
            ok = np.isnan(g)
        elif w > FLT_MAX:
            ok = g == np.inf
        elif w > FLT_MAX / 1.0001:
            ok = g >= FLT_MAX / 1.0001  # the largest float or inf
        elif w < SMALLEST_NORMAL:
            ok = 0.0 <= g < SMALLEST_NORMAL  # flushed to 0, or a denormal
        else:
            ok = abs(g - w) <= 1e-6 * w
        if not ok:
            bad.append((i, float(xi), g, w))
    for b in bad:
        print("exp(%r) = %r, want %r" % b[1:])
    print("exp: %d values checked, %d wrong" % (x.size, len(bad)))

    x64 = x.astype(np.float64)
    rows = [r for r in range(1, 4)] + [0]
    got_s = np.load(out_dir + "/softmax.npy").astype(np.float64)
    wrong = 0
    for r in rows:
        if r == 0:
            # Row 0 holds inf and nan: every output is nan, as in numpy.
            wrong += int(not np.isnan(got_s[0]).all())
            continue
        e = np.exp(x64[r] - x64[r].max())
        want_s = e / e.sum()
        err = np.abs(got_s[r] - want_s)
        if (err > 1e-6 * want_s + 1e-12).any():
            wrong += 1
            print("softmax row %d: max error %g" % (r, err.max()))
    print("softmax: %d rows checked, %d wrong" % (len(rows), wrong))
    return 1 if bad or wrong else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
