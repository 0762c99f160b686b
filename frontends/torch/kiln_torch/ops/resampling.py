"""Resampling and padding aten ops: nearest and (bi/tri)linear upsampling
as gathers of constant source indices with constant weights, and the
constant, reflect and replicate pads as kiln.pad."""

import numpy as np

from ..convert import Unsupported
from ..ir import Attr
from . import converts


def _scales(ctx, spatial, first):
    """The scale factors given to the op (None where it computes them from
    the sizes): `.vec` overloads take a list, the others one per dim."""
    if str(ctx.node.target).endswith(".vec"):
        factors = ctx.arg(first)
        return list(factors) if factors is not None else [None] * spatial
    return [ctx.arg(first + d) for d in range(spatial)]


def _source_scale(n_in, n_out, factor, align_corners=False):
    """PyTorch's area_pixel_compute_scale, in float32 as its kernels."""
    if align_corners:
        return np.float32(n_in - 1) / np.float32(n_out - 1) if n_out > 1 else np.float32(0)
    if factor is not None and factor > 0:
        return np.float32(1.0 / factor)
    return np.float32(n_in) / np.float32(n_out)


def _gather(ctx, x, indices, axis):
    dims = list(x.dims)
    dims[axis] = len(indices)
    index = ctx.f.constant(np.asarray(indices, np.int64), "i64")
    return ctx.f.op("gather", [x, index], {"axis": Attr.i64(axis)}, [(x.element, dims)])


def _weights(ctx, x, weights, axis):
    shape = [1] * x.rank
    shape[axis] = len(weights)
    return ctx.f.constant(np.asarray(weights, np.float32).reshape(shape), x.element)


def _sizes(ctx, x):
    out = ctx.out_type()[1]
    spatial = x.rank - 2
    if any(d is None for d in x.dims[2:]) or any(d is None for d in out[2:]):
        raise Unsupported("upsampling over spatial dims known only at run time "
                          "(only the batch may be)")
    return spatial, x.dims[2:], out[2:]


@converts("aten.upsample_nearest1d.vec", "aten.upsample_nearest2d.vec",
          "aten.upsample_nearest3d.vec", "aten.upsample_nearest1d.default",
          "aten.upsample_nearest2d.default", "aten.upsample_nearest3d.default")
def upsample_nearest(ctx):
    """Output position i reads min(floor(i * scale), n_in - 1) along each
    spatial dim (PyTorch's `nearest`, not `nearest-exact`)."""
    x = ctx.value(ctx.arg(0))
    spatial, sizes, outs = _sizes(ctx, x)
    factors = _scales(ctx, spatial, 2)
    for d in range(spatial):
        n_in, n_out = sizes[d], outs[d]
        if n_in == n_out:
            continue
        scale = _source_scale(n_in, n_out, factors[d])
        source = [min(int(np.floor(np.float32(i) * scale)), n_in - 1) for i in range(n_out)]
        x = _gather(ctx, x, source, 2 + d)
    return x


@converts("aten.upsample_linear1d.vec", "aten.upsample_bilinear2d.vec",
          "aten.upsample_trilinear3d.vec", "aten.upsample_linear1d.default",
          "aten.upsample_bilinear2d.default", "aten.upsample_trilinear3d.default")
def upsample_linear(ctx):
    """Along each spatial dim, last first (the order of PyTorch's kernel),
    output position i blends the two source positions around its source
    coordinate: a gather of each, weighted, summed."""
    x = ctx.value(ctx.arg(0))
    spatial, sizes, outs = _sizes(ctx, x)
    align_corners = bool(ctx.arg(2))
    factors = _scales(ctx, spatial, 3)
    for d in reversed(range(spatial)):
        n_in, n_out = sizes[d], outs[d]
        scale = _source_scale(n_in, n_out, factors[d], align_corners)
        low, high, w_low, w_high = [], [], [], []
        for i in range(n_out):
            if align_corners:
                src = scale * np.float32(i)
            else:
                src = max(scale * (np.float32(i) + np.float32(0.5)) - np.float32(0.5),
                          np.float32(0))
            i0 = int(src)
            lam = np.float32(src - np.float32(i0))
            low.append(i0)
            high.append(i0 + (1 if i0 < n_in - 1 else 0))
            w_low.append(np.float32(1) - lam)
            w_high.append(lam)
        a = _gather(ctx, x, low, 2 + d)
        b = _gather(ctx, x, high, 2 + d)
        a = ctx.f.op("mul", [a, _weights(ctx, x, w_low, 2 + d)], {}, [(x.element, a.dims)])
        b = ctx.f.op("mul", [b, _weights(ctx, x, w_high, 2 + d)], {}, [(x.element, b.dims)])
        x = ctx.f.op("add", [a, b], {}, [(x.element, a.dims)])
    return x


def _pad(mode):
    """kiln.pad of the last dims: torch lists (low, high) pairs from the
    last dim backwards."""
    def convert(ctx):
        x = ctx.value(ctx.arg(0))
        pairs = list(ctx.arg(1))
        if len(pairs) % 2 or len(pairs) // 2 > x.rank:
            raise Unsupported(f"a pad of {len(pairs)} entries for a tensor of rank {x.rank}")
        if any(not isinstance(p, int) for p in pairs):
            raise Unsupported("pads known only at run time")
        lo, hi = [0] * x.rank, [0] * x.rank
        for k in range(len(pairs) // 2):
            lo[x.rank - 1 - k], hi[x.rank - 1 - k] = pairs[2 * k], pairs[2 * k + 1]
        value = float(ctx.arg(2, 0.0) or 0.0) if mode == 0 else 0.0
        return ctx.op("pad", [x], {"pads": Attr.i64s(lo + hi), "mode": Attr.i32(mode),
                                   "value": Attr.f64(value)})
    return convert


converts("aten.constant_pad_nd.default")(_pad(0))
converts("aten.reflection_pad1d.default", "aten.reflection_pad2d.default",
         "aten.reflection_pad3d.default")(_pad(1))
converts("aten.replication_pad1d.default", "aten.replication_pad2d.default",
         "aten.replication_pad3d.default")(_pad(2))
