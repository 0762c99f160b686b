"""Inputs for math-values.test, and the check of its outputs against float64."""
import math
import sys

import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)
SMALLEST_NORMAL = 2.0 ** -126


def make(path):
    special = [-np.inf, -1e30, -104.0, -88.0, -87.5, -87.33, -87.0, -50.0, -10.0, -1.0,
               -1e-3, -0.0, 0.0, 1e-7, 1e-3, 0.5, 1.0, 2.0, 10.0, 50.0, 80.0, 88.0, 88.7,
               88.8, 89.0, 100.0, 1e30, np.inf, np.nan]
    rng = np.random.default_rng(7)
    x = np.empty((6, 32), np.float32)
    x[0, :len(special)] = special
    x[0, len(special):] = rng.uniform(-5, 5, 32 - len(special))
    x[1] = rng.uniform(-87, 88, 32)
    x[2] = rng.standard_normal(32) * 30
    x[3] = rng.uniform(-0.5, 0.5, 32)
    # Where tanh and erf reach +-1, and denormals (log's scaled path).
    x[4, :16] = np.linspace(-12, 12, 16)
    x[4, 16:] = [1e-45, 1e-42, 1e-40, 1e-39, 1.1e-38, 1.2e-38, 2.0 ** -126, -1e-40,
                 1e-20, 1e-10, 0.999, 1.001, 0.9999999, 1.0000001, 3.4e38, 7.0]
    x[5] = np.exp(rng.uniform(-80, 80, 32))
    np.save(path, x)


def close(g, w, rel, absolute=0.0):
    return abs(g - w) <= rel * abs(w) + absolute


def check_exp(xi, g, w):
    if w > FLT_MAX:
        return g == np.inf
    if w < SMALLEST_NORMAL:
        return 0.0 <= g < SMALLEST_NORMAL  # flushed to 0, or a denormal
    return close(g, w, 1e-6)


def check_log(xi, g, w):
    if xi < 0:
        return np.isnan(g)
    if xi == 0:
        return g == -np.inf
    if np.isinf(xi):
        return g == np.inf
    return close(g, w, 1e-6, 1e-7)


FUNCTIONS = {
    "exp": (np.exp, check_exp),
    # A denormal result carries fewer digits: 1e-44 is 7 of its steps.
    "tanh": (np.tanh, lambda xi, g, w: close(g, w, 1e-6, 1e-44)),
    "erf": (np.vectorize(math.erf), lambda xi, g, w: close(g, w, 1e-6, 1e-44)),
    "log": (np.log, check_log),
}


def check(x_path, out_dir):
    x = np.load(x_path)
    x64 = x.astype(np.float64)
    failed = False
    for name, (reference, rule) in FUNCTIONS.items():
        got = np.load("%s/%s.npy" % (out_dir, name)).astype(np.float64)
        with np.errstate(all="ignore"):
            want = reference(x64)
        bad = []
        for xi, g, w in zip(x64.ravel(), got.ravel(), want.ravel()):
            ok = np.isnan(g) if np.isnan(xi) else bool(rule(xi, g, w))
            if not ok:
                bad.append((float(xi), g, w))
        for b in bad:
            print("%s(%r) = %r, want %r" % ((name,) + b))
        print("%s: %d values checked, %d wrong" % (name, x.size, len(bad)))
        failed = failed or bool(bad)

    got_s = np.load(out_dir + "/softmax.npy").astype(np.float64)
    wrong = 0
    for r in range(x.shape[0]):
        if np.isnan(x64[r]).any():
            # Row 0 holds inf and nan: every output is nan, as in numpy.
            wrong += int(not np.isnan(got_s[r]).all())
            continue
        e = np.exp(x64[r] - x64[r].max())
        want_s = e / e.sum()
        err = np.abs(got_s[r] - want_s)
        if (err > 1e-6 * want_s + 1e-12).any():
            wrong += 1
            print("softmax row %d: max error %g" % (r, err.max()))
    print("softmax: %d rows checked, %d wrong" % (x.shape[0], wrong))
    return 1 if failed or wrong else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
