"""Reductions: mean, sum, max/min over dims, argmax."""

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
