"""Reductions: mean, sum, max/min over dims, argmax, running sums."""

import numpy as np

from ..convert import Unsupported
from ..ir import Attr
from . import MAX_PAIRS, converts


def _axes(x, dims):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(x.rank))
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    return sorted(d % x.rank for d in dims)


def _as_output_type(ctx, x):
    """`x` cast to the node's element type (a reduction's `dtype`)."""
    element, _ = ctx.out_type()
    return x if x.element == element else ctx.f.op("cast", [x], {}, [(element, x.dims)])


def _reduce(kind):
    def convert(ctx):
        x = _as_output_type(ctx, ctx.value(ctx.arg(0)))
        axes = _axes(x, ctx.arg(1))
        keepdim = ctx.arg(2, False, name="keepdim")
        return ctx.op(kind, [x], {"axes": Attr.i64s(axes), "keepdims": Attr.bool(keepdim)})
    return convert


converts("aten.mean.dim")(_reduce("reduce_mean"))
converts("aten.sum.dim_IntList")(_reduce("reduce_sum"))
converts("aten.amax.default")(_reduce("reduce_max"))
converts("aten.amin.default")(_reduce("reduce_min"))
converts("aten.prod.dim_int")(_reduce("reduce_prod"))


@converts("aten.prod.default")
def prod_all(ctx):
    x = _as_output_type(ctx, ctx.value(ctx.arg(0)))
    return ctx.op("reduce_prod", [x], {"axes": Attr.i64s(range(x.rank)),
                                       "keepdims": Attr.bool(False)})


@converts("aten.max.dim", "aten.min.dim")
def max_dim(ctx):
    """(values, indices) along a dim: a reduction and an arg-reduction
    (the first position of the extreme, as PyTorch's CPU kernels)."""
    x = ctx.value(ctx.arg(0))
    dim, keepdim = ctx.arg(1) % x.rank, ctx.arg(2, False)
    kind = "max" if "max" in str(ctx.node.target) else "min"
    attrs = {"axes": Attr.i64s([dim]), "keepdims": Attr.bool(keepdim)}
    values = ctx.f.op(f"reduce_{kind}", [x], attrs, [ctx.out_type(0)])
    indices = ctx.f.op(f"arg{kind}", [x], {"axis": Attr.i64(dim), "keepdims": Attr.bool(keepdim)},
                       [ctx.out_type(1)])
    return (values, indices)


@converts("aten.var.correction", "aten.var.dim", "aten.var_mean.correction")
def var(ctx):
    """sum((x - mean)^2) / (n - correction) over the dims (all by
    default); var_mean also gives the mean."""
    x = ctx.value(ctx.arg(0))
    axes = _axes(x, ctx.arg(1))
    if str(ctx.node.target).endswith(".dim"):
        correction = 1 if ctx.arg(2, True, name="unbiased") else 0
        keepdim = ctx.arg(3, False, name="keepdim")
    else:
        correction = ctx.kwargs.get("correction", None)
        correction = 1 if correction is None else correction
        keepdim = ctx.kwargs.get("keepdim", False)
    if any(x.dims[a] is None for a in axes):
        raise Unsupported("a variance over dims known only at run time")
    n = int(np.prod([x.dims[a] for a in axes], dtype=np.int64))
    kept = [1 if d in axes else x.dims[d] for d in range(x.rank)]
    mean = ctx.f.op("reduce_mean", [x], {"axes": Attr.i64s(axes), "keepdims": Attr.bool(True)},
                    [(x.element, kept)])
    centred = ctx.f.op("sub", [x, mean], {}, [(x.element, x.dims)])
    square = ctx.f.op("mul", [centred, centred], {}, [(x.element, x.dims)])
    out = kept if keepdim else [x.dims[d] for d in range(x.rank) if d not in axes]
    total = ctx.f.op("reduce_sum", [square], {"axes": Attr.i64s(axes),
                                              "keepdims": Attr.bool(keepdim)},
                     [(x.element, out)])
    divisor = max(n - correction, 0)
    variance = ctx.f.op("div", [total, ctx.scalar(float(divisor), x.element)], {},
                        [(x.element, out)])
    if "var_mean" not in str(ctx.node.target):
        return variance
    if not keepdim:
        mean = ctx.f.op("reshape", [mean], {"shape": Attr.i64s([0 if d is None else d
                                                                 for d in out])},
                        [(x.element, out)])
    return (variance, mean)


@converts("aten.any.dim", "aten.all.dim", "aten.any.dims", "aten.any.default",
          "aten.all.default", "aten.all.dims")
def any_all(ctx):
    """Whether any (all) entry along the dims is nonzero: the flags as
    integers, their max (min), compared with 0."""
    x = ctx.value(ctx.arg(0))
    flags = x if x.element == "i1" else ctx.f.op(
        "compare", [x, ctx.scalar(0, x.element)], {"predicate": Attr.i32(1)}, [("i1", x.dims)])
    ints = ctx.f.op("cast", [flags], {}, [("i64", x.dims)])
    target = str(ctx.node.target)
    dims = None if target.endswith(".default") else ctx.arg(1)
    axes = _axes(x, dims)
    keepdim = ctx.arg(2, False) if not target.endswith(".default") else False
    out = [1 if d in axes else x.dims[d] for d in range(x.rank)] if keepdim else \
        [x.dims[d] for d in range(x.rank) if d not in axes]
    kind = "reduce_max" if ".any" in target or "any." in target else "reduce_min"
    r = ctx.f.op(kind, [ints], {"axes": Attr.i64s(axes), "keepdims": Attr.bool(keepdim)},
                 [("i64", out)])
    return ctx.op("compare", [r, ctx.scalar(0, "i64")], {"predicate": Attr.i32(1)})


@converts("aten.cumprod.default")
def cumprod(ctx):
    """Running products along a dim of static length: each output the
    product over the inputs up to it, the others replaced by 1 (as the
    ONNX importer's CumProd)."""
    element, dims = ctx.out_type()
    x = _as_output_type(ctx, ctx.value(ctx.arg(0)))
    if x.rank == 0:
        return x
    axis = ctx.arg(1) % x.rank
    n = x.dims[axis]
    if n is None:
        raise Unsupported("a running product along a dim known only at run time")
    perm = [d for d in range(x.rank) if d != axis] + [axis]
    back = [perm.index(d) for d in range(x.rank)]
    moved = [x.dims[p] for p in perm]
    t = ctx.f.op("transpose", [x], {"permutation": Attr.i64s(perm)}, [(element, moved)])
    t = ctx.f.op("reshape", [t], {"shape": Attr.i64s([0] * (x.rank - 1) + [n, 1])},
                 [(element, moved + [1])])
    upto = ctx.f.constant(np.triu(np.ones((n, n), np.bool_)), "i1")
    terms = ctx.f.op("select", [upto, t, ctx.scalar(1, element)], {},
                     [(element, moved[:-1] + [n, n])])
    product = ctx.f.op("reduce_prod", [terms], {"axes": Attr.i64s([x.rank - 1]),
                                                "keepdims": Attr.bool(False)},
                       [(element, moved)])
    return ctx.op("transpose", [product], {"permutation": Attr.i64s(back)})


@converts("aten.mean.default", "aten.sum.default")
def reduce_all(ctx):
    x = ctx.value(ctx.arg(0))
    kind = "reduce_mean" if "mean" in str(ctx.node.target) else "reduce_sum"
    return ctx.op(kind, [x], {"axes": Attr.i64s(range(x.rank)), "keepdims": Attr.bool(False)})


@converts("aten.argmax.default", "aten.argmin.default")
def arg_reduce(ctx):
    x = ctx.value(ctx.arg(0))
    dim = ctx.arg(1)
    kind = "argmax" if "argmax" in str(ctx.node.target) else "argmin"
    if dim is None:
        # Over the flattened tensor.
        if any(d is None for d in x.dims):
            raise Unsupported("argmax/argmin over all dims known only at run time")
        size = int(np.prod(x.dims, dtype=np.int64)) if x.rank else 1
        x = ctx.f.op("reshape", [x], {"shape": Attr.i64s([-1])}, [(x.element, [size])])
        return ctx.op(kind, [x], {"axis": Attr.i64(0), "keepdims": Attr.bool(False)})
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


@converts("aten.histc.default")
def histc(ctx):
    """Counts of the elements in `bins` equal bins over [min, max] (the
    data's own extremes when min == max, widened by 1 each way when those
    are equal too), as PyTorch's CPU kernel: bin = trunc((x - min) * bins /
    (max - min)) in the input's float arithmetic, max itself in the last
    bin, elements outside (and NaN) not counted. Where PyTorch raises (a
    range from the data that is not finite) every count is NaN."""
    x = ctx.value(ctx.arg(0))
    bins = ctx.arg(1, 100, name="bins")
    low, high = float(ctx.arg(2, 0, name="min")), float(ctx.arg(3, 0, name="max"))
    if low > high:
        raise Unsupported("histc with min above max")
    if not isinstance(bins, int) or bins < 1:
        raise Unsupported("histc with a bin count other than a positive integer")
    element = x.element
    size = None if None in x.dims else int(np.prod(x.dims, dtype=np.int64))
    if size is not None and size * bins > MAX_PAIRS:
        raise Unsupported(f"histc of {size} elements into {bins} bins "
                          f"(at most {MAX_PAIRS} pairs)")

    def op(name, operands, dims, out=None, attrs=None):
        return ctx.f.op(name, operands, attrs or {}, [(out or element, dims)])

    flat = op("reshape", [x], [size], attrs={"shape": Attr.i64s([-1])})
    whole = {"axes": Attr.i64s([0]), "keepdims": Attr.bool(False)}
    finite = None
    if low == high:
        lo = op("reduce_min", [flat], [], attrs=whole)
        hi = op("reduce_max", [flat], [], attrs=whole)
        same = op("compare", [lo, hi], [], "i1", {"predicate": Attr.i32(0)})
        lo = op("select", [same, op("sub", [lo, ctx.scalar(1.0, element)], []), lo], [])
        hi = op("select", [same, op("add", [hi, ctx.scalar(1.0, element)], []), hi], [])
        span = op("sub", [hi, lo], [])
        finite = op("compare", [op("abs", [span], []), ctx.scalar(float("inf"), element)], [],
                    "i1", {"predicate": Attr.i32(2)})  # false for inf and NaN
    else:
        lo, hi = ctx.scalar(low, element), ctx.scalar(high, element)
        span = op("sub", [hi, lo], [])
    scaled = op("mul", [op("sub", [flat, lo], [size]), ctx.scalar(float(bins), element)], [size])
    position = op("cast", [op("div", [scaled, span], [size])], [size], "i64")
    position = op("min", [position, ctx.scalar(bins - 1, "i64")], [size], "i64")
    inside = op("and", [op("compare", [flat, lo], [size], "i1", {"predicate": Attr.i32(5)}),
                        op("compare", [flat, hi], [size], "i1", {"predicate": Attr.i32(3)})],
                [size], "i1")
    column = {"shape": Attr.i64s([-1, 1])}
    position = op("reshape", [position], [size, 1], "i64", column)
    inside = op("reshape", [inside], [size, 1], "i1", column)
    slots = ctx.f.constant(np.arange(bins, dtype=np.int64).reshape(1, bins), "i64")
    hit = op("and", [op("compare", [position, slots], [size, bins], "i1",
                        {"predicate": Attr.i32(0)}), inside], [size, bins], "i1")
    counts = op("reduce_sum", [op("cast", [hit], [size, bins])], [bins], attrs=whole)
    if finite is None:
        return counts
    return ctx.op("select", [finite, counts, ctx.scalar(float("nan"), element)])
