"""Indexing aten ops: index_select, advanced indexing (index.Tensor),
gather, slice_scatter, and the scatters (scatter, scatter_add,
scatter_reduce) by comparing every target position with every update's
(per batch row)."""

import numpy as np

from ..convert import Unsupported
from ..ir import Attr
from . import MAX_PAIRS, converts
from .shape import _slice_attrs


@converts("aten.index_select.default")
def index_select(ctx):
    x, index = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(2))
    return ctx.op("gather", [x, index], {"axis": Attr.i64(ctx.arg(1) % x.rank)})


def _flat_positions(ctx, tensors, sizes):
    """The flat position, within dims of `sizes`, that index tensors (one
    a dim, broadcast together; negative entries count from the end) name:
    (i64 tensor of the broadcast shape, that shape)."""
    shape = []
    for t in tensors:
        shape = [a if b == 1 else b for a, b in zip([1] * (t.rank - len(shape)) + shape,
                                                     [1] * (len(shape) - t.rank) + t.dims)]
    flat, stride = None, 1
    for t, size in reversed(list(zip(tensors, sizes))):
        t = ctx.f.op("cast", [t], {}, [("i64", t.dims)]) if t.element != "i64" else t
        negative = ctx.f.op("compare", [t, ctx.scalar(0, "i64")], {"predicate": Attr.i32(2)},
                            [("i1", t.dims)])
        wrapped = ctx.f.op("add", [t, ctx.scalar(size, "i64")], {}, [("i64", t.dims)])
        t = ctx.f.op("select", [negative, wrapped, t], {}, [("i64", t.dims)])
        if stride != 1:
            t = ctx.f.op("mul", [t, ctx.scalar(stride, "i64")], {}, [("i64", t.dims)])
        flat = t if flat is None else ctx.f.op("add", [flat, t], {}, [("i64", shape)])
        stride *= size
    return flat, shape


def _element_positions(ctx, idx, x, dim, lead):
    """For GatherElements-style indices into `x` along `dim`: each
    element's flat position in x's dims from `lead` on (the index along
    `dim`, the element's own coordinates elsewhere: iotas over idx's shape,
    read at run time where dynamic). Those dims of x must be static."""
    if idx.element != "i64":
        idx = ctx.f.op("cast", [idx], {}, [("i64", idx.dims)])
    strides = [int(np.prod(x.dims[d + 1:], dtype=np.int64)) for d in range(x.rank)]
    shape = ctx.f.op("shape_of", [idx], {}, [("i64", [idx.rank])])
    flat = ctx.f.op("mul", [idx, ctx.scalar(strides[dim], "i64")], {}, [("i64", idx.dims)])
    for d in range(lead, x.rank):
        if d == dim:
            continue
        position = ctx.f.op("iota", [shape], {"axis": Attr.i64(d)}, [("i64", idx.dims)])
        if strides[d] != 1:
            position = ctx.f.op("mul", [position, ctx.scalar(strides[d], "i64")], {},
                                [("i64", idx.dims)])
        flat = ctx.f.op("add", [flat, position], {}, [("i64", idx.dims)])
    return flat


@converts("aten.index.Tensor")
def index(ctx):
    """Advanced indexing x[i0, i1, ...] by integer tensors (None: the whole
    dim): one index tensor is a gather along its dim; several are
    broadcast together, their dims of x flattened into one and gathered by
    the flat position (the indexed dims moved first when they are not
    adjacent, NumPy's rule). Negative indices count from the end."""
    x = ctx.value(ctx.arg(0))
    given = list(ctx.arg(1))
    at = [d for d, t in enumerate(given) if t is not None]
    tensors = [ctx.value(given[d]) for d in at]
    if any(t.element == "i1" for t in tensors):
        raise Unsupported("indexing by a boolean mask (its result's size depends on the data)")
    if len(at) == 1:
        return ctx.op("gather", [x, tensors[0]], {"axis": Attr.i64(at[0])})
    if any(x.dims[d] is None for d in at):
        raise Unsupported("indexing several dims known only at run time")
    if at != list(range(at[0], at[0] + len(at))):
        perm = at + [d for d in range(x.rank) if d not in at]
        x = ctx.f.op("transpose", [x], {"permutation": Attr.i64s(perm)},
                     [(x.element, [x.dims[p] for p in perm])])
        at = list(range(len(at)))
    first, sizes = at[0], [x.dims[d] for d in at]
    flat, _ = _flat_positions(ctx, tensors, sizes)
    merged = x.dims[:first] + [int(np.prod(sizes, dtype=np.int64))] + x.dims[first + len(at):]
    # Dims known only at run time: a 0 (the input's) before the merged
    # ones, or one -1 anywhere.
    spec = [0 if d is None else d for d in merged]
    if any(d is None for d in x.dims[first + len(at):]):
        if merged.count(None) > 1:
            raise Unsupported("indexing a tensor with several dims known only at run time")
        spec = [-1 if d is None else d for d in merged]
    x = ctx.f.op("reshape", [x], {"shape": Attr.i64s(spec)}, [(x.element, merged)])
    return ctx.op("gather", [x, flat], {"axis": Attr.i64(first)})


@converts("aten.slice_scatter.default")
def slice_scatter(ctx):
    """`input` with input[start:end] along `dim` replaced by `src` (step 1):
    the part before, `src` and the part after, concatenated."""
    x, src = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(1))
    dim = ctx.arg(2, 0) % x.rank
    start, end, step = ctx.arg(3), ctx.arg(4), ctx.arg(5, 1)
    size = x.dims[dim]
    if size is None or any(not isinstance(v, (int, type(None))) for v in (start, end, step)):
        raise Unsupported("a slice scatter along a dim known only at run time")
    if step != 1:
        raise Unsupported("a slice scatter with a step")
    start, end, _ = slice(start, end).indices(size)
    end = max(end, start)
    pieces = []
    for lo, hi in ((0, start), (end, size)):
        if hi > lo:
            dims = list(x.dims)
            dims[dim] = hi - lo
            pieces.append((lo, ctx.f.op("slice", [x], _slice_attrs(x, dim, lo, hi, 1),
                                        [(x.element, dims)])))
    parts = [p for lo, p in pieces if lo == 0] + [src] + [p for lo, p in pieces if lo > 0]
    return parts[0] if len(parts) == 1 else ctx.op("concat", parts, {"axis": Attr.i64(dim)})


@converts("aten.gather.default")
def gather_elements(ctx):
    """out[i][j][k] = x[i][index[i][j][k]][k] (along `dim`): one gather
    from the flattened input by flat positions (_element_positions). The
    input's dims but the first must be static (torch checks that indices
    are in range; Kiln does not)."""
    x, idx = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(2))
    dim = ctx.arg(1) % max(x.rank, 1)
    if any(d is None for d in x.dims[1:]):
        raise Unsupported("gather from a tensor with dims known only at run time past the first")
    if x.dims[dim] is None:
        raise Unsupported("gather along a dim known only at run time")
    flat = _element_positions(ctx, idx, x, dim, 0)
    total = None if x.dims[0] is None else int(np.prod(x.dims, dtype=np.int64))
    line = ctx.f.op("reshape", [x], {"shape": Attr.i64s([-1])}, [(x.element, [total])])
    return ctx.op("gather", [line, flat], {"axis": Attr.i64(0)})


def _scatter(ctx, reduce, include_self=True):
    """self with src's entries (or a value) written, along `dim`, to the
    positions `index` names; per batch row (dim 0, when the scatter is
    along another dim) every target position compared with every
    update's: hit[b, r, p]. `reduce` None: where several updates hit a
    position the last one wins (as PyTorch's CPU kernel); else "sum",
    "prod", "mean", "amax" or "amin", with self's entry when
    `include_self`."""
    x, idx = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(2))
    dim = ctx.arg(1) % x.rank
    src = ctx.arg(3)
    element = x.element
    if any(d is None for d in x.dims[1:]) or any(d is None for d in idx.dims[1:]):
        raise Unsupported("a scatter over dims known only at run time past the first")
    by_rows = dim != 0 and x.rank > 1
    if not by_rows and (x.dims[0] is None or idx.dims[0] is None):
        raise Unsupported("a scatter along a dim known only at run time")
    # Row dims: [B, rest] (B = 1 when the scatter is along dim 0).
    lead = 1 if by_rows else 0
    rows = x.dims[0] if by_rows else 1
    width = int(np.prod(x.dims[lead:], dtype=np.int64))
    count = int(np.prod(idx.dims[lead:], dtype=np.int64))
    if width * count > MAX_PAIRS:
        raise Unsupported(f"a scatter of {count} updates into {width} positions a row "
                          f"(at most {MAX_PAIRS} pairs)")

    def op(name, operands, dims, out=None, attrs=None):
        return ctx.f.op(name, operands, attrs or {}, [(out or element, dims)])

    # The target of each update within its row.
    target = _element_positions(ctx, idx, x, dim, lead)
    keep = [0] if by_rows else [1]
    target = op("reshape", [target], [rows, 1, count], "i64",
                {"shape": Attr.i64s(keep + [1, count])})
    cells = ctx.f.constant(np.arange(width, dtype=np.int64).reshape(1, width, 1), "i64")
    pairs = [rows, width, count]
    hit = op("compare", [target, cells], pairs, "i1", {"predicate": Attr.i32(0)})
    if isinstance(src, (int, float, bool)):
        updates = ctx.scalar(src, element)
    else:
        s = ctx.value(src)
        if s.dims[lead:] != idx.dims[lead:]:
            # src may be larger than the index: its leading part is used.
            top = np.iinfo(np.int64).max
            s = op("slice", [s], s.dims[:lead] + idx.dims[lead:],
                   attrs={"starts": Attr.i64s([0] * s.rank),
                          "ends": Attr.i64s([top] * lead + idx.dims[lead:]),
                          "steps": Attr.i64s([1] * s.rank)})
        updates = op("reshape", [s], [rows, 1, count],
                     attrs={"shape": Attr.i64s(keep + [1, count])})
    flat = op("reshape", [x], [rows, width], attrs={"shape": Attr.i64s(keep + [width])})
    hits = op("cast", [hit], pairs, "i64")
    touched = op("compare", [op("reduce_max", [hits], [rows, width], "i64",
                                {"axes": Attr.i64s([2]), "keepdims": Attr.bool(False)}),
                             ctx.scalar(0, "i64")], [rows, width], "i1",
                 {"predicate": Attr.i32(4)})
    if reduce is None:
        # The last update that hits each position: the largest p.
        order = ctx.f.constant(np.arange(count, dtype=np.int64).reshape(1, 1, count), "i64")
        last = op("reduce_max", [op("select", [hit, order, ctx.scalar(-1, "i64")], pairs, "i64")],
                  [rows, width], "i64", {"axes": Attr.i64s([2]), "keepdims": Attr.bool(False)})
        pick = op("compare", [order, op("reshape", [last], [rows, width, 1], "i64",
                                        {"shape": Attr.i64s(keep + [width, 1])})],
                  pairs, "i1", {"predicate": Attr.i32(0)})
        chosen = op("select", [pick, updates, ctx.scalar(0, element)], pairs)
        written = op("reduce_sum", [chosen], [rows, width],
                     attrs={"axes": Attr.i64s([2]), "keepdims": Attr.bool(False)})
        result = op("select", [touched, written, flat], [rows, width])
    else:
        fill = {"sum": 0, "mean": 0, "prod": 1, "amax": float("-inf"),
                "amin": float("inf")}[reduce]
        kind = {"sum": "reduce_sum", "mean": "reduce_sum", "prod": "reduce_prod",
                "amax": "reduce_max", "amin": "reduce_min"}[reduce]
        terms = op("select", [hit, updates, ctx.scalar(fill, element)], pairs)
        combined = op(kind, [terms], [rows, width],
                      attrs={"axes": Attr.i64s([2]), "keepdims": Attr.bool(False)})
        if include_self:
            merge = {"sum": "add", "mean": "add", "prod": "mul", "amax": "max",
                     "amin": "min"}[reduce]
            combined = op(merge, [combined, flat], [rows, width])
        if reduce == "mean":
            n = op("reduce_sum", [hits], [rows, width], "i64",
                   {"axes": Attr.i64s([2]), "keepdims": Attr.bool(False)})
            if include_self:
                n = op("add", [n, ctx.scalar(1, "i64")], [rows, width], "i64")
            combined = op("div", [combined, op("cast", [n], [rows, width])], [rows, width])
        result = op("select", [touched, combined, flat], [rows, width])
    return ctx.op("reshape", [result], {"shape": Attr.i64s(
        ([0] if by_rows else [x.dims[0]]) + x.dims[1:])})


@converts("aten.scatter.src", "aten.scatter.value")
def scatter(ctx):
    return _scatter(ctx, None)


@converts("aten.scatter_add.default")
def scatter_add(ctx):
    return _scatter(ctx, "sum")


@converts("aten.scatter_reduce.two")
def scatter_reduce(ctx):
    reduce = ctx.arg(4)
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise Unsupported(f"scatter_reduce with reduce={reduce!r}")
    return _scatter(ctx, reduce, ctx.kwargs.get("include_self", ctx.arg(5, True)))


@converts("aten.index_put.default", "aten._unsafe_index_put.default")
def index_put(ctx):
    """x[..., i0, i1, ...] = values (accumulate: +=; F.fold is one), the
    index tensors on adjacent dims after dims taken whole: those dims
    flattened into M positions, every position compared with every
    update's target ([M, P]); accumulate sums the updates through a matmul,
    otherwise the last update of a position wins (as PyTorch's CPU kernel).
    The dims after the first must be static; the leading ones are rows."""
    x, values = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(2))
    given = list(ctx.arg(1)) + [None] * (x.rank - len(ctx.arg(1)))
    accumulate = ctx.arg(3, False)
    at = [d for d, t in enumerate(given) if t is not None]
    if not at or at != list(range(at[0], at[0] + len(at))):
        raise Unsupported("index_put with index tensors on dims that are not adjacent")
    tensors = [ctx.value(given[d]) for d in at]
    if any(t.element == "i1" for t in tensors):
        raise Unsupported("index_put by a boolean mask (its positions depend on the data)")
    if any(d is None for d in x.dims[1:]) or (at[0] == 0 and x.dims[0] is None):
        raise Unsupported("index_put into dims known only at run time past the first")
    first, k = at[0], len(at)
    lead, sizes, rest = x.dims[:first], x.dims[first:first + k], x.dims[first + k:]
    m = int(np.prod(sizes, dtype=np.int64))
    r = int(np.prod(rest, dtype=np.int64))
    if any(d is None for t in tensors for d in t.dims):
        raise Unsupported("index_put with index tensors of dims known only at run time")
    element = x.element

    def op(name, operands, dims, out=None, attrs=None):
        return ctx.f.op(name, operands, attrs or {}, [(out or element, dims)])

    flat, shape = _flat_positions(ctx, tensors, sizes)
    p = int(np.prod(shape, dtype=np.int64))
    flat = op("reshape", [flat], [1, p], "i64", {"shape": Attr.i64s([1, p])})
    cells = ctx.f.constant(np.arange(m, dtype=np.int64).reshape(m, 1), "i64")
    hit = op("compare", [cells, flat], [m, p], "i1", {"predicate": Attr.i32(0)})
    rows = lead[0] if len(lead) == 1 else (
        None if None in lead else int(np.prod(lead, dtype=np.int64)))
    want = lead + shape + rest
    if values.dims != want:
        if None in want:
            raise Unsupported("index_put of values that broadcast to a dim known only at run "
                              "time")
        values = op("expand", [values], want, attrs={"shape": Attr.i64s(want)})
    updates = op("reshape", [values], [rows, p, r],
                 attrs={"shape": Attr.i64s([-1 if rows is None else rows, p, r])})
    table = op("reshape", [x], [rows, m, r],
               attrs={"shape": Attr.i64s([-1 if rows is None else rows, m, r])})
    if accumulate:
        weights = op("cast", [hit], [m, p])
        result = op("add", [table, op("matmul", [weights, updates], [rows, m, r])], [rows, m, r])
    else:
        order = ctx.f.constant(np.arange(p, dtype=np.int64).reshape(1, p), "i64")
        last = op("reduce_max", [op("select", [hit, order, ctx.scalar(-1, "i64")], [m, p], "i64")],
                  [m], "i64", {"axes": Attr.i64s([1]), "keepdims": Attr.bool(False)})
        touched = op("compare", [last, ctx.scalar(0, "i64")], [m], "i1",
                     {"predicate": Attr.i32(5)})
        source = op("max", [last, ctx.scalar(0, "i64")], [m], "i64")
        picked = op("gather", [updates, source], [rows, m, r], attrs={"axis": Attr.i64(1)})
        touched = op("reshape", [touched], [m, 1], "i1", {"shape": Attr.i64s([m, 1])})
        result = op("select", [touched, picked, table], [rows, m, r])
    return ctx.op("reshape", [result], {"shape": Attr.i64s([-1 if d is None else d
                                                            for d in x.dims])})
