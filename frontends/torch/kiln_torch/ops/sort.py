"""Sorting aten ops: topk, sort and argsort along a dim of static length
as kiln.topk (as the ONNX importer's TopK), which Kiln lowers to one scan
of every row keeping the k best in order (equal values in index order; NaN
above every number, as PyTorch). bucketize and searchsorted: the count of
sorted boundaries each element passes."""

import numpy as np

from ..convert import Unsupported
from ..ir import Attr
from . import MAX_PAIRS, converts

def _best(ctx, x, dim, k, largest):
    """(values, indices) of the k best entries along `dim`, best first:
    kiln.topk."""
    if x.dims[dim] is None:
        raise Unsupported("sorting along a dim known only at run time")
    out = [k if d == dim else size for d, size in enumerate(x.dims)]
    attrs = {"axis": Attr.i64(dim), "k": Attr.i64(k), "largest": Attr.bool(largest)}
    return tuple(ctx.f.op("topk", [x], attrs, [(x.element, out), ("i64", out)], count=2))


@converts("aten.topk.default")
def topk(ctx):
    x = ctx.value(ctx.arg(0))
    k, dim = ctx.arg(1), ctx.arg(2, -1, name="dim") % x.rank
    largest = ctx.arg(3, True, name="largest")
    if not isinstance(k, int):
        raise Unsupported("topk with k known only at run time")
    if k == 0:
        raise Unsupported("topk with k = 0 (empty results)")
    return _best(ctx, x, dim, k, largest)


@converts("aten.sort.default", "aten.sort.stable")
def sort(ctx):
    """Ascending by default; equal values keep their order (stable)."""
    x = ctx.value(ctx.arg(0))
    stable = str(ctx.node.target).endswith(".stable")
    dim = ctx.kwargs.get("dim", ctx.arg(1 if not stable else 2, -1)) % x.rank
    descending = ctx.kwargs.get("descending", ctx.arg(2 if not stable else 3, False))
    if x.dims[dim] is None:
        raise Unsupported("sorting along a dim known only at run time")
    return _best(ctx, x, dim, x.dims[dim], bool(descending))


def _kth_smallest(ctx, x, dim, k, keepdim):
    """(value, index) of the k-th smallest entry (1-based) along `dim`: the
    last of the k smallest."""
    values, indices = _best(ctx, x, dim, k, False)
    one = [1 if i == dim else d for i, d in enumerate(x.dims)]
    out = one if keepdim else [d for i, d in enumerate(x.dims) if i != dim]
    top = np.iinfo(np.int64).max
    starts = [0] * x.rank
    starts[dim] = k - 1
    attrs = {"starts": Attr.i64s(starts), "ends": Attr.i64s([top] * x.rank),
             "steps": Attr.i64s([1] * x.rank)}
    shape = [-1 if d is None else d for d in out]
    if shape.count(-1) > 1:
        raise Unsupported("a k-th value of a tensor with several dims known only at run time")
    picked = []
    for v, element in ((values, x.element), (indices, "i64")):
        s = ctx.f.op("slice", [v], attrs, [(element, one)])
        picked.append(ctx.f.op("reshape", [s], {"shape": Attr.i64s(shape)}, [(element, out)]))
    return tuple(picked)


@converts("aten.median.dim")
def median(ctx):
    """The lower median along a dim (PyTorch's: the ((n - 1) // 2 + 1)-th
    smallest) and its index."""
    x = ctx.value(ctx.arg(0))
    dim = ctx.arg(1) % x.rank
    if x.dims[dim] is None:
        raise Unsupported("a median along a dim known only at run time")
    return _kth_smallest(ctx, x, dim, (x.dims[dim] - 1) // 2 + 1, ctx.arg(2, False))


@converts("aten.kthvalue.default")
def kthvalue(ctx):
    x = ctx.value(ctx.arg(0))
    k, dim = ctx.arg(1), ctx.arg(2, -1) % x.rank
    if not isinstance(k, int) or x.dims[dim] is None or not 1 <= k <= x.dims[dim]:
        raise Unsupported("a k-th value with k or the dim known only at run time")
    return _kth_smallest(ctx, x, dim, k, ctx.arg(3, False))


@converts("aten.bucketize.Tensor", "aten.searchsorted.Tensor")
def bucketize(ctx):
    """The bucket of each element among 1-D sorted boundaries: how many
    boundaries lie below it (at or below it with right=True), as PyTorch's
    binary search (NaN past every boundary): x compared with every
    boundary, the not-(x <= b) (or not-(x < b)) flags counted."""
    if "searchsorted" in str(ctx.node.target):
        boundaries, x = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(1))
        if ctx.kwargs.get("sorter") is not None:
            raise Unsupported("searchsorted with a sorter")
        right = ctx.kwargs.get("right", False) or ctx.kwargs.get("side") == "right"
    else:
        x, boundaries = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(1))
        right = ctx.arg(3, False, name="right")
    if boundaries.rank != 1 or boundaries.dims[0] is None:
        raise Unsupported("bucketize over boundaries other than one static dim")
    n = boundaries.dims[0]
    if None not in x.dims and int(np.prod(x.dims, dtype=np.int64)) * n > MAX_PAIRS:
        raise Unsupported(f"bucketize of {int(np.prod(x.dims))} elements over {n} boundaries "
                          f"(at most {MAX_PAIRS} pairs)")
    if boundaries.element != x.element:
        boundaries = ctx.f.op("cast", [boundaries], {}, [(x.element, [n])])
    column = ctx.f.op("reshape", [x], {"shape": Attr.i64s([0] * x.rank + [1])},
                      [(x.element, x.dims + [1])])
    pairs = x.dims + [n]
    # x <= b (x < b with right); NaN neither.
    within = ctx.f.op("compare", [column, boundaries],
                      {"predicate": Attr.i32(2 if right else 3)}, [("i1", pairs)])
    past = ctx.f.op("cast", [ctx.f.op("not", [within], {}, [("i1", pairs)])], {}, [("i64", pairs)])
    count = ctx.f.op("reduce_sum", [past], {"axes": Attr.i64s([x.rank]),
                                            "keepdims": Attr.bool(False)}, [("i64", x.dims)])
    element, _ = ctx.out_type()
    return count if element == "i64" else ctx.op("cast", [count])
