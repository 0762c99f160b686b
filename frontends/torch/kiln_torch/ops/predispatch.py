"""Ops of torch.export's graph before decomposition, so that a model whose
every op is here skips torch's decomposition pass (seconds for a large
CNN): conv1d/2d, batch_norm, dropout, and in-place activations, which
become their out-of-place form with the mutated value rebound."""

from ..convert import Unsupported
from ..ir import Attr
from . import TABLE, converts
from .nn import batch_norm, batch_norm_training, convolution


@converts("aten.conv2d.default", "aten.conv1d.default")
def conv(ctx):
    padding = ctx.arg(4, 0)
    if isinstance(padding, str):
        if padding != "valid":
            raise Unsupported(f"padding='{padding}'")
        padding = 0
    x = ctx.value(ctx.arg(0))
    spatial = x.rank - 2
    args = (ctx.arg(0), ctx.arg(1), ctx.arg(2), ctx.arg(3, 1), padding, ctx.arg(5, 1), False,
            [0] * spatial, ctx.arg(6, 1))
    return _with_args(ctx, args, convolution)


@converts("aten.batch_norm.default")
def batch_norm_predispatch(ctx):
    training = ctx.arg(5, False)
    if not training:
        args = (ctx.arg(0), ctx.arg(1), ctx.arg(2), ctx.arg(3), ctx.arg(4), ctx.arg(6),
                ctx.arg(7))
        return _with_args(ctx, args, batch_norm, tuple_meta=True)[0]
    args = (ctx.arg(0), ctx.arg(1), ctx.arg(2), ctx.arg(3), ctx.arg(4), True, ctx.arg(6),
            ctx.arg(7))
    return _with_args(ctx, args, batch_norm_training, tuple_meta=True)[0]


@converts("aten.dropout.default", "aten.dropout_.default", "aten.feature_dropout.default")
def dropout(ctx):
    if ctx.arg(2, False) and ctx.arg(1, 0.0):
        raise Unsupported("Dropout in training mode draws random numbers, which Kiln's compiled "
                          "models do not: call .eval() on it (inference) or remove it")
    return ctx.value(ctx.arg(0))


class _Node:
    """The node with other arguments (and, for ops that return tuples in
    their decomposed form, its result metadata as a tuple)."""

    def __init__(self, node, args, tuple_meta):
        self.target, self.kwargs, self.args = node.target, {}, args
        self.meta = dict(node.meta)
        if tuple_meta:
            self.meta["val"] = (node.meta["val"],)


def _with_args(ctx, args, fn, tuple_meta=False):
    saved = ctx.node
    ctx.node = _Node(saved, args, tuple_meta)
    try:
        return fn(ctx)
    finally:
        ctx.node = saved


_VIEWS = ("view", "reshape", "slice", "select", "expand", "permute", "transpose", "t.",
          "squeeze", "unsqueeze", "alias", "as_strided", "split", "unbind", "narrow", "flatten",
          "diagonal", "unfold")


def _in_place(base):
    def convert(ctx):
        target = ctx.arg(0)
        if target.op == "placeholder":
            raise Unsupported("an in-place op on a graph input, parameter or buffer")
        if target.op == "call_function" and any(v in str(target.target) for v in _VIEWS):
            raise Unsupported("an in-place op on a view of another tensor")
        result = TABLE[base](ctx)
        ctx.values[target] = result  # later readers of the mutated value see the result
        return result
    return convert


for _name in ["relu", "sigmoid", "tanh", "hardtanh", "silu", "hardswish", "hardsigmoid", "gelu",
              "leaky_relu", "clamp", "clamp_min", "neg", "exp", "sqrt", "rsqrt"]:
    converts(f"aten.{_name}_.default")(_in_place(f"aten.{_name}.default"))
for _name in ["add", "sub", "mul", "div"]:
    converts(f"aten.{_name}_.Tensor")(_in_place(f"aten.{_name}.Tensor"))
    converts(f"aten.{_name}_.Scalar")(_in_place(f"aten.{_name}.Scalar"))
