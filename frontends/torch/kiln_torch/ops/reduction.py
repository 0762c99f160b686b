"""Reductions: mean, sum, max/min over dims, argmax, running sums."""

import numpy as np

from ..convert import Unsupported
from ..ir import Attr
from . import converts


def _axes(x, dims):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(x.rank))
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    return sorted(d % x.rank for d in dims)


def _reduce(kind):
    def convert(ctx):
        x = ctx.value(ctx.arg(0))
        if ctx.kwargs.get("dtype") is not None:
            raise Unsupported("a reduction with a dtype argument")
        axes = _axes(x, ctx.arg(1))
        keepdim = ctx.arg(2, False, name="keepdim")
        return ctx.op(kind, [x], {"axes": Attr.i64s(axes), "keepdims": Attr.bool(keepdim)})
    return convert


converts("aten.mean.dim")(_reduce("reduce_mean"))
converts("aten.sum.dim_IntList")(_reduce("reduce_sum"))
converts("aten.amax.default")(_reduce("reduce_max"))
converts("aten.amin.default")(_reduce("reduce_min"))


@converts("aten.mean.default", "aten.sum.default")
def reduce_all(ctx):
    x = ctx.value(ctx.arg(0))
    kind = "reduce_mean" if "mean" in str(ctx.node.target) else "reduce_sum"
    return ctx.op(kind, [x], {"axes": Attr.i64s(range(x.rank)), "keepdims": Attr.bool(False)})


@converts("aten.argmax.default", "aten.argmin.default")
def arg_reduce(ctx):
    x = ctx.value(ctx.arg(0))
    dim = ctx.arg(1)
    if dim is None:
        raise Unsupported("argmax/argmin over all dims")
    kind = "argmax" if "argmax" in str(ctx.node.target) else "argmin"
    return ctx.op(kind, [x], {"axis": Attr.i64(dim % x.rank),
                              "keepdims": Attr.bool(ctx.arg(2, False))})


@converts("aten.cumsum.default")
def cumsum(ctx):
    """Running sums along a dim of static length: the dim moved last and
    multiplied by a constant triangular matrix (as the ONNX importer's
    CumSum)."""
    element, dims = ctx.out_type()
    x = ctx.value(ctx.arg(0))
    if x.element != element:
        x = ctx.f.op("cast", [x], {}, [(element, x.dims)])
    axis = ctx.arg(1) % max(x.rank, 1)
    if x.rank == 0:
        return x
    n = x.dims[axis]
    if n is None:
        raise Unsupported("a running sum along a dim known only at run time")
    from ..ir import ELEMENT_TYPES
    np_type = next(t for e, t in ELEMENT_TYPES.values() if e == element)
    upper = ctx.f.constant(np.triu(np.ones((n, n), np_type)), element)
    perm = [d for d in range(x.rank) if d != axis] + [axis]
    back = [perm.index(d) for d in range(x.rank)]
    moved = [x.dims[p] for p in perm]
    t = ctx.f.op("transpose", [x], {"permutation": Attr.i64s(perm)}, [(element, moved)])
    t = ctx.f.op("matmul", [t, upper], {}, [(element, moved)])
    return ctx.op("transpose", [t], {"permutation": Attr.i64s(back)})
