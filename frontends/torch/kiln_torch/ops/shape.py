"""Data movement: reshapes, permutations, concatenation, slicing,
splitting, broadcasting, tuple items, and tensors made from shapes."""

import numpy as np

from ..convert import Unsupported
from ..ir import ELEMENT_TYPES, Attr
from . import converts


class Symbolic:
    """A sym_size result: a dim known only at run time."""


def _target_shape(ctx, x):
    """The reshape's target as kiln.reshape reads it: static dims as they
    are, a dynamic dim equal to the input's dim at the same position as 0
    (copy), one other dynamic dim as -1 (inferred)."""
    out = ctx.out_meta()
    in_symbols = [str(d) for d in ctx.node.args[0].meta["val"].shape]
    shape, inferred = [], 0
    for i, d in enumerate(out.shape):
        if isinstance(d, int) or (hasattr(d, "node") and d.node.is_constant()):
            shape.append(int(d))
        elif i < len(in_symbols) and in_symbols[i] == str(d):
            shape.append(0)
        else:
            shape.append(-1)
            inferred += 1
    if inferred > 1:
        raise Unsupported("a reshape with more than one new dynamic dim")
    if 0 in [int(d) for d in out.shape if isinstance(d, int)]:
        raise Unsupported("a reshape to a zero-size dim")
    return shape


@converts("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
          "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default",
          "aten.unsqueeze.default", "aten.flatten.using_ints")
def reshape(ctx):
    x = ctx.value(ctx.arg(0))
    return ctx.op("reshape", [x], {"shape": Attr.i64s(_target_shape(ctx, x))})


@converts("aten.permute.default")
def permute(ctx):
    x = ctx.value(ctx.arg(0))
    return ctx.op("transpose", [x], {"permutation": Attr.i64s([d % x.rank for d in ctx.arg(1)])})


@converts("aten.t.default", "aten.transpose.int")
def transpose(ctx):
    x = ctx.value(ctx.arg(0))
    a, b = (ctx.arg(1), ctx.arg(2)) if len(ctx.args) > 1 else (0, 1)
    perm = list(range(x.rank))
    if x.rank >= 2:
        a, b = a % x.rank, b % x.rank
        perm[a], perm[b] = perm[b], perm[a]
    return ctx.op("transpose", [x], {"permutation": Attr.i64s(perm)})


@converts("aten.cat.default")
def cat(ctx):
    element, dims = ctx.out_type()
    inputs = [ctx.value(t) for t in ctx.arg(0)]
    inputs = [v for v in inputs if not (v.rank == 1 and v.dims[0] == 0)]  # torch drops [0]
    axis = ctx.arg(1, 0, name="dim") % len(dims)
    if len(inputs) == 1:
        return inputs[0]
    return ctx.op("concat", inputs, {"axis": Attr.i64(axis)})


def _slice_attrs(x, dim, start, end, step):
    starts, ends, steps = [0] * x.rank, [], [1] * x.rank
    for d in range(x.rank):
        ends.append(np.iinfo(np.int64).max)
    starts[dim] = start if start is not None else 0
    ends[dim] = end if end is not None else np.iinfo(np.int64).max
    steps[dim] = step
    return {"starts": Attr.i64s(starts), "ends": Attr.i64s(ends), "steps": Attr.i64s(steps)}


@converts("aten.slice.Tensor")
def slice_(ctx):
    x = ctx.value(ctx.arg(0))
    dim = ctx.arg(1, 0) % x.rank
    start, end, step = ctx.arg(2), ctx.arg(3), ctx.arg(4, 1)
    if any(not isinstance(v, (int, type(None))) for v in (start, end, step)):
        raise Unsupported("a slice with run-time bounds")
    return ctx.op("slice", [x], _slice_attrs(x, dim, start, end, step))


@converts("aten.select.int")
def select(ctx):
    x = ctx.value(ctx.arg(0))
    dim, index = ctx.arg(1) % x.rank, ctx.arg(2)
    if not isinstance(index, int):
        raise Unsupported("a select with a run-time index")
    if index < 0:
        if x.dims[dim] is None:
            raise Unsupported("a negative select on a dynamic dim")
        index += x.dims[dim]
    dims = list(x.dims)
    dims[dim] = 1
    part = ctx.f.op("slice", [x], _slice_attrs(x, dim, index, index + 1, 1), [(x.element, dims)])
    shape = [(0 if x.dims[i] is None else x.dims[i]) for i in range(x.rank) if i != dim]
    # a 0 copies the dim at the same position of the input: only valid
    # for dims before `dim`.
    for j, i in enumerate([i for i in range(x.rank) if i != dim]):
        if x.dims[i] is None and i != j:
            shape[j] = -1
    return ctx.op("reshape", [part], {"shape": Attr.i64s(shape)})


@converts("aten.expand.default")
def expand(ctx):
    x = ctx.value(ctx.arg(0))
    out = ctx.out_meta()
    in_shape = list(ctx.node.args[0].meta["val"].shape)
    shape = []
    offset = len(out.shape) - len(in_shape)
    for i, d in enumerate(out.shape):
        if isinstance(d, int) or (hasattr(d, "node") and d.node.is_constant()):
            shape.append(int(d))
        elif i >= offset and str(in_shape[i - offset]) == str(d):
            shape.append(1)  # the input's own dim
        else:
            shape.append(None)  # a new dynamic dim: broadcast below
    if None not in shape:
        return ctx.op("expand", [x], {"shape": Attr.i64s(shape)})
    static = [1 if d is None else d for d in shape]
    element, dims = ctx.out_type()
    partial = [(x.dims[i - offset] if i >= offset and x.dims[i - offset] is not None else 1)
               if d is None else d for i, d in enumerate(shape)]
    if static != [1] * len(static):
        x = ctx.f.op("expand", [x], {"shape": Attr.i64s(static)}, [(element, partial)])
    return broadcast_dynamic(ctx, x, out)


def broadcast_dynamic(ctx, x, out):
    """`x` broadcast to `out`'s dims where they are dynamic: a select whose
    condition (all true) takes each such dim from a graph input that has
    the same symbolic size."""
    symbols = {i: str(d) for i, d in enumerate(out.shape)
               if not (isinstance(d, int) or (hasattr(d, "node") and d.node.is_constant()))}
    return ctx.op("select", [_all_true(ctx, symbols, len(out.shape), "an expand"), x, x])


def _all_true(ctx, symbols, rank, what):
    """An all-true i1 tensor of `rank` dims whose dim at each position of
    `symbols` ({position: symbolic size}) is that size, taken from a graph
    input that has it (1 elsewhere): a select on it broadcasts there."""
    condition = None
    for position, symbol in symbols.items():
        carrier = ctx.dim_carrier(symbol, position, rank)
        if carrier is None:
            raise Unsupported(f"{what} to the dynamic size {symbol}, which no input has")
        condition = carrier if condition is None else ctx.f.op(
            "and", [condition, carrier], {},
            [("i1", _broadcast_dims(condition.dims, carrier.dims))])
    return condition


@converts("aten.repeat.default")
def repeat(ctx):
    """x tiled `repeats` times along each dim (leading new dims first): x
    as [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], merged. A
    repeat count known only at run time (InstanceNorm's weights repeated
    for the batch) is broadcast from a graph input that has it."""
    x = ctx.value(ctx.arg(0))
    repeats = list(ctx.arg(1))
    if len(repeats) < x.rank:
        raise Unsupported("repeat with fewer counts than dims")
    if any(d is None for d in x.dims):
        raise Unsupported("repeat of a tensor with dims known only at run time")
    element, dims = ctx.out_type()
    sizes = [1] * (len(repeats) - x.rank) + list(x.dims)
    interleaved = []
    for size in sizes:
        interleaved += [1, size]
    t = ctx.f.op("reshape", [x], {"shape": Attr.i64s(interleaved)}, [(element, interleaved)])
    counts, symbols = [], {}
    for i, r in enumerate(repeats):
        if isinstance(r, int):
            counts.append(r)
        else:
            counts.append(None)
            symbols[2 * i] = str(r.meta["val"]) if hasattr(r, "meta") else str(r)
    static = []
    for count, size in zip(counts, sizes):
        static += [count if count is not None else 1, size]
    if static != interleaved:
        t = ctx.f.op("expand", [t], {"shape": Attr.i64s(static)}, [(element, static)])
    if len(symbols) > 1:
        raise Unsupported("repeat with several counts known only at run time")
    if symbols:
        full = [None if i in symbols else d for i, d in enumerate(static)]
        condition = _all_true(ctx, symbols, len(static), "a repeat")
        t = ctx.f.op("select", [condition, t, t], {}, [(element, full)])
    merged = [c * s if c is not None else -1 for c, s in zip(counts, sizes)]
    return ctx.op("reshape", [t], {"shape": Attr.i64s(merged)})


def _broadcast_dims(a, b):
    return [x if y == 1 else y for x, y in zip(a, b)]


@converts("getitem")
def getitem(ctx):
    source = ctx.values.get(ctx.arg(0))
    index = ctx.arg(1)
    if source is None:
        from ..convert import AfterFailure
        raise AfterFailure()
    if not isinstance(source, (tuple, list)):
        raise Unsupported(f"{ctx.arg(0).name} has one result, not several")
    if source[index] is None:
        from ..convert import NotComputed
        return NotComputed(f"result {index} of {ctx.arg(0).name}, which Kiln does not compute")
    return source[index]


@converts("aten.split_with_sizes.default", "aten.split.Tensor")
def split(ctx):
    x = ctx.value(ctx.arg(0))
    dim = ctx.arg(2, 0, name="dim") % x.rank
    metas = ctx.out_meta()
    sizes = [int(m.shape[dim]) for m in metas]
    types = [ctx.out_type(i) for i in range(len(metas))]
    return tuple(ctx.f.op("split", [x], {"axis": Attr.i64(dim), "sizes": Attr.i64s(sizes)},
                          types, count=len(types)))


@converts("aten.sym_size.int", "mul", "add", "sub", "floordiv", "truediv", "neg",
          "sym_float", "sym_int")
def sym_size(ctx):
    """Shape arithmetic on symbolic sizes: the ops that read it take their
    shapes from torch's metadata instead."""
    return Symbolic()


def _constant_of(ctx, array):
    element, dims = ctx.out_type()
    if None in dims:
        raise Unsupported("a tensor made at run time from a dynamic shape")
    np_type = next(t for e, t in ELEMENT_TYPES.values() if e == element)
    return ctx.f.constant(np.asarray(array, dtype=np_type).reshape(dims), element)


def _filled(ctx, fill):
    """A tensor of the node's shape holding `fill`: a constant, broadcast
    to the dims known only at run time (a batch of zeros, an LSTM's
    initial state) from a graph input that has them."""
    if not isinstance(fill, (int, float, bool)):
        raise Unsupported("a fill value known only at run time")
    element, dims = ctx.out_type()
    np_type = next(t for e, t in ELEMENT_TYPES.values() if e == element)
    static = [1 if d is None else d for d in dims]
    value = ctx.f.constant(np.full(static, fill, dtype=np_type), element)
    return value if None not in dims else broadcast_dynamic(ctx, value, ctx.out_meta())


@converts("aten.full.default", "aten.zeros.default", "aten.ones.default",
          "aten.scalar_tensor.default")
def full(ctx):
    target = str(ctx.node.target)
    fill = 0 if "zeros" in target else 1 if "ones" in target else \
        ctx.arg(0) if "scalar_tensor" in target else ctx.arg(1)
    return _filled(ctx, fill)


@converts("aten.arange.start_step", "aten.arange.default", "aten.arange.start")
def arange(ctx):
    """A constant; with an end known only at run time (0, 5, ... up to 5
    times the batch: EmbeddingBag's offsets for a 2-D input), an iota over
    a graph input's dim of the result's size, times the step, plus the
    start."""
    args = [a for a in ctx.args]
    if all(isinstance(a, (int, float)) for a in args):
        return _constant_of(ctx, np.arange(*args))
    bounds = args if len(args) > 1 else [0] + args
    start, step = bounds[0], bounds[2] if len(bounds) > 2 else 1
    element, dims = ctx.out_type()
    if not isinstance(start, int) or not isinstance(step, int) or element != "i64":
        raise Unsupported("an arange with run-time bounds other than an integer end")
    carrier = ctx.dim_carrier(str(ctx.out_meta().shape[0]), 0, 1)
    if carrier is None:
        raise Unsupported(f"an arange of {ctx.out_meta().shape[0]} elements, a size no input has")
    shape = ctx.f.op("shape_of", [carrier], {}, [("i64", [1])])
    t = ctx.f.op("iota", [shape], {"axis": Attr.i64(0)}, [("i64", dims)])
    if step != 1:
        t = ctx.f.op("mul", [t, ctx.scalar(step, "i64")], {}, [("i64", dims)])
    return t if start == 0 else ctx.op("add", [t, ctx.scalar(start, "i64")])


@converts("aten.as_strided.default")
def as_strided(ctx):
    """Only the restrides that are no-ops on contiguous data (torch emits
    them to mark a layout, e.g. after a global pool): same sizes, and every
    dim of more than one element at its contiguous stride."""
    x = ctx.value(ctx.arg(0))
    in_shape = [str(d) for d in ctx.node.args[0].meta["val"].shape]
    out_shape = [str(d) for d in ctx.out_meta().shape]
    strides = list(ctx.arg(2))
    offset = ctx.arg(3, 0)
    if in_shape != out_shape or offset not in (0, None):
        raise Unsupported("as_strided other than a same-shape restride")
    expected = 1
    for d in reversed(range(x.rank)):
        size = x.dims[d]
        if size != 1:
            if not isinstance(strides[d], int) or strides[d] != expected:
                raise Unsupported("as_strided with strides that reorder the data")
            if size is None:
                return x if d == 0 else _reorder_error()
            expected *= size
    return x


def _reorder_error():
    raise Unsupported("as_strided over a dynamic inner dim")


@converts("aten.full_like.default")
def full_like(ctx):
    """A tensor of the input's shape holding the fill value."""
    return _filled(ctx, ctx.arg(1))


@converts("aten.flip.default")
def flip(ctx):
    """A slice with step -1 along each named dim."""
    x = ctx.value(ctx.arg(0))
    dims = {d % x.rank for d in ctx.arg(1)}
    top, bottom = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    return ctx.op("slice", [x], {
        "starts": Attr.i64s([-1 if d in dims else 0 for d in range(x.rank)]),
        "ends": Attr.i64s([bottom if d in dims else top for d in range(x.rank)]),
        "steps": Attr.i64s([-1 if d in dims else 1 for d in range(x.rank)])})
