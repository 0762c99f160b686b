"""Neural-network aten ops: convolution (transposed too), pools,
normalisations, softmax, matrix products, embedding."""

import math

import numpy as np

from ..convert import Unsupported
from ..ir import Attr
from . import MAX_PAIRS, converts


def _pair(v, n=2):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 else v


@converts("aten.convolution.default")
def convolution(ctx):
    x, w = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(1))
    bias = ctx.arg(2)
    stride, padding, dilation = ctx.arg(3), ctx.arg(4), ctx.arg(5)
    transposed, groups = ctx.arg(6), ctx.arg(8)
    spatial = x.rank - 2
    padding = _pair(padding, spatial)
    if transposed:
        y = _transposed(ctx, x, w, _pair(stride, spatial), padding, _pair(dilation, spatial),
                        _pair(ctx.arg(7), spatial), groups)
        return y if bias is None else _add_channel_bias(ctx, y, bias, spatial)
    attrs = {"strides": Attr.i64s(_pair(stride, spatial)),
             "pads": Attr.i64s(list(padding) + list(padding)),
             "dilations": Attr.i64s(_pair(dilation, spatial)),
             "groups": Attr.i64(groups)}
    element, dims = ctx.out_type()
    y = ctx.f.op("conv", [x, w], attrs, [(element, dims)])
    if bias is None:
        return y
    return _add_channel_bias(ctx, y, bias, spatial)


def _add_channel_bias(ctx, y, bias, spatial):
    b = ctx.value(bias)
    b = ctx.f.op("reshape", [b], {"shape": Attr.i64s([-1] + [1] * spatial)},
                 [(b.element, [b.dims[0]] + [1] * spatial)])
    return ctx.op("add", [y, b])


def _transposed(ctx, x, w, stride, padding, dilation, output_padding, groups):
    """A transposed convolution: kiln.conv_transpose, which
    kiln-expand-composites writes as a convolution (as for ONNX's
    ConvTranspose)."""
    if any(d is None for d in x.dims[1:]) or any(d is None for d in w.dims):
        raise Unsupported("transposed convolution over dims known only at run time "
                          "(only the batch may be)")
    if groups <= 0 or x.dims[1] % groups:
        raise Unsupported("weight channels that do not divide into the groups")
    attrs = {"strides": Attr.i64s(stride), "pads": Attr.i64s(list(padding) * 2),
             "dilations": Attr.i64s(dilation), "output_padding": Attr.i64s(output_padding),
             "groups": Attr.i64(groups)}
    return ctx.f.op("conv_transpose", [x, w], attrs, [ctx.out_type()])


def _pool_attrs(ctx, kernel, stride, padding, dilation, ceil_mode, extra=None):
    x = ctx.value(ctx.arg(0))
    spatial = x.rank - 2
    kernel = _pair(kernel, spatial)
    stride = _pair(stride, spatial) if stride else kernel
    padding = _pair(padding, spatial)
    attrs = {"kernel_shape": Attr.i64s(kernel), "strides": Attr.i64s(stride),
             "pads": Attr.i64s(list(padding) + list(padding)),
             "dilations": Attr.i64s(_pair(dilation, spatial)),
             "ceil_mode": Attr.bool(ceil_mode)}
    attrs.update(extra or {})
    return attrs


@converts("aten.max_pool2d_with_indices.default", "aten.max_pool2d.default",
          "aten.max_pool3d_with_indices.default", "aten.max_pool3d.default")
def max_pool(ctx):
    attrs = _pool_attrs(ctx, ctx.arg(1), ctx.arg(2, []), ctx.arg(3, 0), ctx.arg(4, 1),
                  ctx.arg(5, False))
    with_indices = "with_indices" in str(ctx.node.target)
    result = ctx.f.op("max_pool", [ctx.value(ctx.arg(0))], attrs,
                      [ctx.out_type(0) if with_indices else ctx.out_type()])
    # getitem 1 (the indices) has no value: refused where it is used.
    return (result, None) if with_indices else result


@converts("aten.avg_pool2d.default", "aten.avg_pool3d.default")
def avg_pool(ctx):
    if ctx.arg(6) is not None:
        raise Unsupported("avg_pool2d with divisor_override")
    attrs = _pool_attrs(ctx, ctx.arg(1), ctx.arg(2, []), ctx.arg(3, 0), 1, ctx.arg(4, False),
                  {"count_include_pad": Attr.bool(ctx.arg(5, True))})
    return ctx.op("avg_pool", [ctx.value(ctx.arg(0))], attrs)


@converts("aten._adaptive_avg_pool2d.default", "aten.adaptive_avg_pool2d.default")
def adaptive_avg_pool(ctx):
    x = ctx.value(ctx.arg(0))
    out = _pair(ctx.arg(1))
    if out == [1, 1]:
        return ctx.op("reduce_mean", [x], {"axes": Attr.i64s([2, 3]), "keepdims": Attr.bool(True)})
    h, w = x.dims[2], x.dims[3]
    if h is None or w is None:
        raise Unsupported("adaptive average pool over spatial dims known only at run time")
    if h % out[0] or w % out[1]:
        return _adaptive_avg_by_matmuls(ctx, x, out)
    kernel = [h // out[0], w // out[1]]
    attrs = {"kernel_shape": Attr.i64s(kernel), "strides": Attr.i64s(kernel),
             "pads": Attr.i64s([0, 0, 0, 0]), "dilations": Attr.i64s([1, 1]),
             "ceil_mode": Attr.bool(False), "count_include_pad": Attr.bool(False)}
    return ctx.op("avg_pool", [x], attrs)


def _windows(n_in, n_out):
    """PyTorch's adaptive pooling windows: [floor(i n_in / n_out),
    ceil((i + 1) n_in / n_out)) for each output i."""
    return [(i * n_in // n_out, -(-(i + 1) * n_in // n_out)) for i in range(n_out)]


def _adaptive_avg_by_matmuls(ctx, x, out):
    """Windows that overlap or differ in size: the mean is separable, so
    A_h x A_w^T with each row of A the window's 1/size entries."""
    h, w = x.dims[2], x.dims[3]
    rows = np.zeros((out[0], h), np.float32)
    for i, (a, b) in enumerate(_windows(h, out[0])):
        rows[i, a:b] = 1.0 / (b - a)
    cols = np.zeros((w, out[1]), np.float32)
    for j, (a, b) in enumerate(_windows(w, out[1])):
        cols[a:b, j] = 1.0 / (b - a)
    right = ctx.f.op("matmul", [x, ctx.f.constant(cols, x.element)], {},
                     [(x.element, x.dims[:3] + [out[1]])])
    return ctx.op("matmul", [ctx.f.constant(rows, x.element), right])


@converts("aten.adaptive_max_pool2d.default")
def adaptive_max_pool(ctx):
    """Each output the max over its window (PyTorch's windows): a slice
    and a reduction a window, concatenated (at most 64 windows); the
    indices are not computed."""
    x = ctx.value(ctx.arg(0))
    out = _pair(ctx.arg(1))
    h, w = x.dims[2], x.dims[3]
    if h is None or w is None:
        raise Unsupported("adaptive max pool over spatial dims known only at run time")
    if out[0] * out[1] > 64:
        raise Unsupported(f"adaptive max pool to {out[0]}x{out[1]} (at most 64 windows)")
    top, attrs = np.iinfo(np.int64).max, {"axes": Attr.i64s([2, 3]), "keepdims": Attr.bool(True)}
    rows = []
    for a, b in _windows(h, out[0]):
        cells = []
        for c, d in _windows(w, out[1]):
            window = ctx.f.op("slice", [x], {"starts": Attr.i64s([0, 0, a, c]),
                                             "ends": Attr.i64s([top, top, b, d]),
                                             "steps": Attr.i64s([1, 1, 1, 1])},
                              [(x.element, x.dims[:2] + [b - a, d - c])])
            cells.append(ctx.f.op("reduce_max", [window], attrs,
                                  [(x.element, x.dims[:2] + [1, 1])]))
        rows.append(cells[0] if len(cells) == 1 else ctx.f.op(
            "concat", cells, {"axis": Attr.i64(3)}, [(x.element, x.dims[:2] + [1, out[1]])]))
    result = rows[0] if len(rows) == 1 else ctx.f.op(
        "concat", rows, {"axis": Attr.i64(2)}, [(x.element, x.dims[:2] + out)])
    return (result, None)


def _vector(ctx, arg, channels, fill, element):
    if arg is not None:
        return ctx.value(arg)
    return ctx.f.constant(np.full([channels], fill, dtype=np.float32), element)


@converts("aten._native_batch_norm_legit_no_training.default")
def batch_norm(ctx):
    x = ctx.value(ctx.arg(0))
    channels = x.dims[1]
    scale = _vector(ctx, ctx.arg(1), channels, 1.0, x.element)
    bias = _vector(ctx, ctx.arg(2), channels, 0.0, x.element)
    mean, var = ctx.value(ctx.arg(3)), ctx.value(ctx.arg(4))
    eps = ctx.arg(6)
    y = ctx.f.op("batch_norm", [x, scale, bias, mean, var], {"epsilon": Attr.f32(eps)},
                 [ctx.out_type(0)])
    return (y, None, None)


@converts("aten._native_batch_norm_legit_functional.default",
          "aten._native_batch_norm_legit.default", "aten._native_batch_norm_legit.no_stats")
def batch_norm_training(ctx):
    """BatchNorm in training form (allow_training_mode): normalised with the
    batch's own statistics over every dim but the channels; the running
    statistics' update is not kept. Without running statistics (no_stats)
    it is InstanceNorm's form in any mode: [1, N * C, ...] normalised per
    (sample, channel)."""
    x = ctx.value(ctx.arg(0))
    no_stats = str(ctx.node.target).endswith(".no_stats")
    if not ctx.arg(3 if no_stats else 5):
        raise Unsupported("batch norm with training=False in its training form")
    y = _standardize(ctx, x, [d for d in range(x.rank) if d != 1], ctx.arg(5 if no_stats else 7))
    return (_channel_affine(ctx, y, x.dims[1]), None, None, None, None)


@converts("aten.native_dropout.default")
def dropout_training(ctx):
    if ctx.arg(2) is False or ctx.arg(1) == 0:
        return (ctx.value(ctx.arg(0)), None)
    raise Unsupported("Dropout in training mode draws random numbers, which Kiln's compiled "
                      "models do not: call .eval() on it (inference) or remove it")


@converts("aten.native_layer_norm.default")
def layer_norm(ctx):
    x = ctx.value(ctx.arg(0))
    shape = list(ctx.arg(1))
    scale = ctx.value(ctx.arg(2)) if ctx.arg(2) is not None else \
        ctx.f.constant(np.ones(shape, np.float32), x.element)
    bias = ctx.value(ctx.arg(3)) if ctx.arg(3) is not None else \
        ctx.f.constant(np.zeros(shape, np.float32), x.element)
    y = ctx.f.op("layer_norm", [x, scale, bias],
                 {"axis": Attr.i64(x.rank - len(shape)), "epsilon": Attr.f32(ctx.arg(4))},
                 [ctx.out_type(0)])
    return (y, None, None)


@converts("aten.native_group_norm.default")
def group_norm(ctx):
    """Each sample's channels in `group` groups, each normalised over its
    channels and positions (biased variance), then the per-channel weight
    and bias."""
    x = ctx.value(ctx.arg(0))
    groups, eps = ctx.arg(6), ctx.arg(7)
    channels, spatial = x.dims[1], x.dims[2:]
    if channels is None or any(d is None for d in spatial):
        raise Unsupported("group norm over dims known only at run time (only the batch may be)")
    per_group = channels // groups * int(np.prod(spatial, dtype=np.int64))
    rows = [x.dims[0], groups, per_group]
    r = ctx.f.op("reshape", [x], {"shape": Attr.i64s([0, groups, per_group])},
                 [(x.element, rows)])
    y = _standardize(ctx, r, [2], eps)
    y = ctx.f.op("reshape", [y], {"shape": Attr.i64s([0, channels] + spatial)},
                 [(x.element, x.dims)])
    return (_channel_affine(ctx, y, channels), None, None)


def _standardize(ctx, x, axes, eps):
    """(x - mean) / sqrt(var + eps) over `axes` (the biased variance, as
    PyTorch's normalisations)."""
    stats = [1 if d in axes else x.dims[d] for d in range(x.rank)]
    attrs = {"axes": Attr.i64s(axes), "keepdims": Attr.bool(True)}
    mean = ctx.f.op("reduce_mean", [x], attrs, [(x.element, stats)])
    centred = ctx.f.op("sub", [x, mean], {}, [(x.element, x.dims)])
    square = ctx.f.op("mul", [centred, centred], {}, [(x.element, x.dims)])
    var = ctx.f.op("reduce_mean", [square], attrs, [(x.element, stats)])
    var = ctx.f.op("add", [var, ctx.scalar(eps, x.element)], {}, [(x.element, stats)])
    scale = ctx.f.op("rsqrt", [var], {}, [(x.element, stats)])
    return ctx.f.op("mul", [centred, scale], {}, [(x.element, x.dims)])


def _channel_affine(ctx, y, channels):
    """y * weight + bias per channel (dim 1), from the node's arguments 1
    and 2 where given."""
    shape = [-1] + [1] * (y.rank - 2)
    dims = [channels] + [1] * (y.rank - 2)
    for i, op in ((1, "mul"), (2, "add")):
        if ctx.arg(i) is not None:
            v = ctx.f.op("reshape", [ctx.value(ctx.arg(i))], {"shape": Attr.i64s(shape)},
                         [(y.element, dims)])
            y = ctx.f.op(op, [y, v], {}, [(y.element, y.dims)])
    return y


def _softmax(kind):
    def convert(ctx):
        x = ctx.value(ctx.arg(0))
        axis = ctx.arg(1)
        return ctx.op(kind, [x], {"axis": Attr.i64(axis % x.rank)})
    return convert


converts("aten._softmax.default", "aten.softmax.int")(_softmax("softmax"))
converts("aten._log_softmax.default", "aten.log_softmax.int")(_softmax("log_softmax"))


@converts("aten.mm.default", "aten.bmm.default", "aten.matmul.default")
def matmul(ctx):
    return ctx.op("matmul", [ctx.value(ctx.arg(0)), ctx.value(ctx.arg(1))])


@converts("aten.addmm.default")
def addmm(ctx):
    bias, a, b = (ctx.value(ctx.arg(i)) for i in range(3))
    beta, alpha = ctx.kwargs.get("beta", 1), ctx.kwargs.get("alpha", 1)
    element, dims = ctx.out_type()
    y = ctx.f.op("matmul", [a, b], {}, [(element, dims)])
    if alpha != 1:
        y = ctx.f.op("mul", [y, ctx.scalar(alpha, element)], {}, [(element, dims)])
    if beta != 1:
        bias = ctx.f.op("mul", [bias, ctx.scalar(beta, element)], {}, [(element, bias.dims)])
    return ctx.op("add", [y, bias])


@converts("aten.linear.default")
def linear(ctx):
    x, w = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(1))
    wt = ctx.f.op("transpose", [w], {"permutation": Attr.i64s([1, 0])},
                  [(w.element, [w.dims[1], w.dims[0]])])
    element, dims = ctx.out_type()
    y = ctx.f.op("matmul", [x, wt], {}, [(element, dims)])
    if ctx.arg(2) is None:
        return y
    return ctx.op("add", [y, ctx.value(ctx.arg(2))])


@converts("aten.embedding.default")
def embedding(ctx):
    weight, indices = ctx.value(ctx.arg(0)), ctx.value(ctx.arg(1))
    return ctx.op("gather", [weight, indices], {"axis": Attr.i64(0)})


@converts("aten._embedding_bag.default", "aten._embedding_bag_forward_only.default")
def embedding_bag(ctx):
    """The rows of each bag gathered and summed, averaged or maxed (modes
    0, 1, 2), skipping padding_idx, weighted by per_sample_weights (sum).
    Bags of L indices each (a 2-D input: offsets arange(0, N, L)) are a
    reshape of the gathered rows to [bags, L, D]; bags given by offsets
    are a [bags, N] membership mask (offsets[b] <= j < the next offset, or
    N), summed as a matmul. An empty bag is zeros. Only the first result
    (the bags) is computed."""
    weight, indices, offsets = (ctx.value(ctx.arg(i)) for i in range(3))
    mode = ctx.arg(4, 0, name="mode")
    samples = ctx.arg(6, None, name="per_sample_weights")
    last_offset = ctx.arg(7, False, name="include_last_offset")
    padding = ctx.arg(8, -1, name="padding_idx")
    if indices.rank != 1:
        raise Unsupported("embedding_bag with indices of rank other than 1")
    element, (bags, depth) = ctx.out_type(0)
    f32 = weight.element
    n = indices.dims[0]
    rows = ctx.f.op("gather", [weight, indices], {"axis": Attr.i64(0)}, [(f32, [n, depth])])
    keep = None  # i1 [N]: not padding
    if padding is not None and padding >= 0:
        keep = ctx.f.op("compare", [indices, ctx.scalar(padding, indices.element)],
                        {"predicate": Attr.i32(1)}, [("i1", [n])])
    if samples is not None:
        s = ctx.value(samples)
        rows = ctx.f.op("mul", [rows, ctx.f.op("reshape", [s], {"shape": Attr.i64s([-1, 1])},
                                               [(s.element, [n, 1])])], {}, [(f32, [n, depth])])
    width = _equal_bags(ctx)
    if width is not None:
        # [bags, L, D] rows, [bags, L, 1] membership.
        rows = ctx.f.op("reshape", [rows], {"shape": Attr.i64s([-1, width, depth])},
                        [(f32, [bags, width, depth])])
        member = None if keep is None else ctx.f.op(
            "reshape", [keep], {"shape": Attr.i64s([-1, width, 1])}, [("i1", [bags, width, 1])])
    else:
        if bags is not None and n is not None and bags * n > MAX_PAIRS:
            raise Unsupported(f"an embedding_bag of {bags} bags over {n} indices "
                              f"(at most {MAX_PAIRS} pairs)")
        member = _bag_membership(ctx, indices, offsets, last_offset, bags, n)
        if keep is not None:
            member = ctx.f.op("and", [member, keep], {}, [("i1", [bags, n])])
        if mode != 2:
            weights = ctx.f.op("cast", [member], {}, [(f32, [bags, n])])
            total = ctx.f.op("matmul", [weights, rows], {}, [(f32, [bags, depth])])
            if mode == 0:
                return (total, None, None, None)
            count = ctx.f.op("reduce_sum", [weights], {"axes": Attr.i64s([1]),
                                                       "keepdims": Attr.bool(True)},
                             [(f32, [bags, 1])])
            return (_divide_by_count(ctx, total, count, [bags, depth]), None, None, None)
        rows = ctx.f.op("reshape", [rows], {"shape": Attr.i64s([1, -1, depth])},
                        [(f32, [1, n, depth])])
        member = ctx.f.op("reshape", [member], {"shape": Attr.i64s([0, -1, 1])},
                          [("i1", [bags, n, 1])])
    dims3 = [bags, width if width is not None else n, depth]
    axes = {"axes": Attr.i64s([1]), "keepdims": Attr.bool(False)}
    if mode == 2:
        low = ctx.scalar(float("-inf"), f32)
        terms = rows if member is None else ctx.f.op("select", [member, rows, low], {},
                                                     [(f32, dims3)])
        top = ctx.f.op("reduce_max", [terms], axes, [(f32, [bags, depth])])
        if member is None:
            return (top, None, None, None)
        some = ctx.f.op("reduce_max", [ctx.f.op("cast", [member], {}, [("i64", dims3[:2] + [1])])],
                        axes, [("i64", [bags, 1])])
        empty = ctx.f.op("compare", [some, ctx.scalar(0, "i64")], {"predicate": Attr.i32(0)},
                         [("i1", [bags, 1])])
        return (ctx.f.op("select", [empty, ctx.scalar(0.0, f32), top], {},
                         [(f32, [bags, depth])]), None, None, None)
    if member is not None:
        rows = ctx.f.op("select", [member, rows, ctx.scalar(0.0, f32)], {}, [(f32, dims3)])
    total = ctx.f.op("reduce_sum", [rows], axes, [(f32, [bags, depth])])
    if mode == 0:
        return (total, None, None, None)
    if member is None:
        return (ctx.f.op("div", [total, ctx.scalar(float(width), f32)], {},
                         [(f32, [bags, depth])]), None, None, None)
    count = ctx.f.op("reduce_sum", [ctx.f.op("cast", [member], {}, [(f32, dims3[:2] + [1])])],
                     axes, [(f32, [bags, 1])])
    return (_divide_by_count(ctx, total, count, [bags, depth]), None, None, None)


def _equal_bags(ctx):
    """L when the offsets are arange(0, N, L) over indices that are a 2-D
    input [bags, L] flattened (nn.EmbeddingBag's 2-D form), else None."""
    offsets, indices = ctx.arg(2), ctx.arg(1)
    if ctx.arg(7, False, name="include_last_offset"):
        return None
    if not (hasattr(offsets, "target") and "arange" in str(offsets.target)):
        return None
    bounds = list(offsets.args) if len(offsets.args) > 1 else [0] + list(offsets.args)
    step = bounds[2] if len(bounds) > 2 else 1
    if bounds[0] != 0 or not isinstance(step, int) or step < 1:
        return None
    if not (hasattr(indices, "target") and str(indices.target) in (
            "aten.view.default", "aten.reshape.default", "aten._unsafe_view.default")):
        return None
    source = indices.args[0].meta["val"].shape
    return step if len(source) == 2 and isinstance(source[1], int) and source[1] == step \
        else None


def _bag_membership(ctx, indices, offsets, last_offset, bags, n):
    """i1 [bags, N]: index j is in bag b (offsets[b] <= j < the bag's end:
    the next offset, or N after the last bag; with include_last_offset
    the offsets hold every bag's end too)."""
    top = np.iinfo(np.int64).max
    if offsets.element != "i64":
        offsets = ctx.f.op("cast", [offsets], {}, [("i64", offsets.dims)])
    count = ctx.f.op("shape_of", [indices], {}, [("i64", [1])])
    positions = ctx.f.op("iota", [count], {"axis": Attr.i64(0)}, [("i64", [n])])
    one_less = None if offsets.dims[0] is None else offsets.dims[0] - 1

    def part(start, end, dims):
        return ctx.f.op("slice", [offsets], {"starts": Attr.i64s([start]),
                                             "ends": Attr.i64s([end]),
                                             "steps": Attr.i64s([1])}, [("i64", dims)])
    if last_offset:
        starts, ends = part(0, -1, [one_less]), part(1, top, [one_less])
    else:
        starts = offsets
        ends = ctx.f.op("concat", [part(1, top, [one_less]), count], {"axis": Attr.i64(0)},
                        [("i64", [offsets.dims[0]])])
    column = {"shape": Attr.i64s([-1, 1])}
    starts = ctx.f.op("reshape", [starts], column, [("i64", [bags, 1])])
    ends = ctx.f.op("reshape", [ends], column, [("i64", [bags, 1])])
    after = ctx.f.op("compare", [positions, starts], {"predicate": Attr.i32(5)},
                     [("i1", [bags, n])])
    before = ctx.f.op("compare", [positions, ends], {"predicate": Attr.i32(2)},
                      [("i1", [bags, n])])
    return ctx.f.op("and", [after, before], {}, [("i1", [bags, n])])


def _divide_by_count(ctx, total, count, dims):
    """total / count, an empty bag (count 0) staying 0."""
    element = total.element
    at_least_one = ctx.f.op("max", [count, ctx.scalar(1.0, element)], {},
                            [(element, count.dims)])
    return ctx.f.op("div", [total, at_least_one], {}, [(element, dims)])


@converts("aten.scaled_dot_product_attention.default")
def attention(ctx):
    """softmax(q k^T * scale [+ mask]) v, the mask boolean (True keeps) or
    additive; is_causal keeps the lower triangle."""
    q, k, v = (ctx.value(ctx.arg(i)) for i in range(3))
    mask = ctx.arg(3, None, name="attn_mask")
    if ctx.arg(4, 0.0, name="dropout_p"):
        raise Unsupported("attention with dropout")
    causal = ctx.arg(5, False, name="is_causal")
    scale = ctx.kwargs.get("scale", ctx.arg(6, None))
    if ctx.kwargs.get("enable_gqa", False):
        raise Unsupported("grouped-query attention (enable_gqa)")
    depth = q.dims[-1]
    if depth is None:
        raise Unsupported("attention with a dynamic head size")
    scale = scale if scale is not None else 1.0 / math.sqrt(depth)
    rank = k.rank
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    kt = ctx.f.op("transpose", [k], {"permutation": Attr.i64s(perm)},
                  [(k.element, [k.dims[p] for p in perm])])
    score_dims = q.dims[:-1] + [k.dims[-2]]
    s = ctx.f.op("matmul", [q, kt], {}, [(q.element, score_dims)])
    s = ctx.f.op("mul", [s, ctx.scalar(scale, q.element)], {}, [(q.element, score_dims)])
    minus_inf = ctx.scalar(float("-inf"), q.element)
    if causal:
        rows, cols = q.dims[-2], k.dims[-2]
        if rows is None or cols is None:
            raise Unsupported("causal attention over a dynamic sequence length")
        keep = ctx.f.constant(np.tril(np.ones((rows, cols), dtype=np.bool_)), "i1")
        s = ctx.f.op("select", [keep, s, minus_inf], {}, [(q.element, score_dims)])
    if mask is not None:
        m = ctx.value(mask)
        if m.element == "i1":
            s = ctx.f.op("select", [m, s, minus_inf], {}, [(q.element, score_dims)])
        else:
            s = ctx.f.op("add", [s, m], {}, [(q.element, score_dims)])
    p = ctx.f.op("softmax", [s], {"axis": Attr.i64(len(score_dims) - 1)},
                 [(q.element, score_dims)])
    return ctx.op("matmul", [p, v])
