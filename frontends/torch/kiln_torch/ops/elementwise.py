"""Elementwise aten ops: arithmetic (with alpha), comparisons, where,
unary math, clamps and activations."""

from ..convert import Unsupported
from ..ir import Attr
from . import converts


def _cast(ctx, v, element):
    if v.element == element:
        return v
    return ctx.f.op("cast", [v], {}, [(element, v.dims)])


def _operands(ctx, a, b, element):
    """Both operands as values of `element` (Python scalars too)."""
    like = None
    for x in (a, b):
        if not isinstance(x, (int, float, bool)):
            like = ctx.value(x)
    va = ctx.value(a, like)
    vb = ctx.value(b, like)
    return _cast(ctx, va, element), _cast(ctx, vb, element)


def _binary(kind, swap=False):
    """`a <kind> alpha * b` (rsub: `b <kind> alpha * a`)."""
    def convert(ctx):
        element, dims = ctx.out_type()
        a, b = _operands(ctx, ctx.arg(0), ctx.arg(1), element)
        if swap:
            a, b = b, a
        alpha = ctx.arg(2, 1, name="alpha")
        if alpha != 1:
            b = ctx.f.op("mul", [b, ctx.scalar(alpha, element)], {}, [(element, b.dims)])
        return ctx.op(kind, [a, b])
    return convert


converts("aten.add.Tensor", "aten.add.Scalar")(_binary("add"))
converts("aten.sub.Tensor", "aten.sub.Scalar")(_binary("sub"))
converts("aten.mul.Tensor", "aten.mul.Scalar")(_binary("mul"))
converts("aten.maximum.default")(_binary("max"))
converts("aten.minimum.default")(_binary("min"))
converts("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor")(_binary("pow"))
converts("aten.logical_and.default", "aten.bitwise_and.Tensor")(_binary("and"))
converts("aten.logical_or.default", "aten.bitwise_or.Tensor")(_binary("or"))


converts("aten.rsub.Scalar")(_binary("sub", swap=True))
# C's fmod: the dividend's sign, as kiln.rem.
converts("aten.fmod.Tensor", "aten.fmod.Scalar")(_binary("rem"))


def _floor_adjust(ctx, r, b):
    """Where the truncated remainder `r` of a / b is nonzero and its sign
    differs from b's: the quotient rounded toward minus infinity is one less,
    the remainder b more (i1, the node's dims)."""
    _, dims = ctx.out_type()
    zero = ctx.scalar(0, r.element)
    flag = lambda x, p: ctx.f.op("compare", [x, zero], {"predicate": Attr.i32(p)},  # noqa: E731
                                 [("i1", x.dims)])
    differ = ctx.f.op("xor", [flag(r, _PREDICATES["lt"]), flag(b, _PREDICATES["lt"])], {},
                      [("i1", dims)])
    return ctx.f.op("and", [flag(r, _PREDICATES["ne"]), differ], {}, [("i1", dims)])


@converts("aten.remainder.Tensor", "aten.remainder.Scalar")
def remainder(ctx):
    """Python's modulus: the sign of the divisor (kiln.rem keeps the
    dividend's), as PyTorch computes it: fmod, then + b where they differ."""
    element, _ = ctx.out_type()
    a, b = _operands(ctx, ctx.arg(0), ctx.arg(1), element)
    r = ctx.op("rem", [a, b])
    return ctx.op("select", [_floor_adjust(ctx, r, b), ctx.op("add", [r, b]), r])


@converts("aten.div.Tensor", "aten.div.Scalar", "aten.div.Tensor_mode")
def div(ctx):
    element, dims = ctx.out_type()
    a, b = _operands(ctx, ctx.arg(0), ctx.arg(1), element)
    mode = ctx.kwargs.get("rounding_mode")
    q = ctx.op("div", [a, b])
    if mode is None:
        return q
    floating = element.startswith("f") or element.startswith("bf")
    if mode == "floor" and floating:
        return ctx.op("floor", [q])
    if mode == "trunc" and floating:
        negative = ctx.f.op("compare", [q, ctx.scalar(0, element)],
                            {"predicate": Attr.i32(_PREDICATES["lt"])}, [("i1", dims)])
        return ctx.op("select", [negative, ctx.op("ceil", [q]), ctx.op("floor", [q])])
    if mode == "trunc":  # kiln.div truncates integers
        return q
    if mode == "floor":
        r = ctx.op("rem", [a, b])
        one = ctx.op("cast", [_floor_adjust(ctx, r, b)])
        return ctx.op("sub", [q, one])
    raise Unsupported(f"division with rounding_mode={mode!r}")


_PREDICATES = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5}


def _compare(predicate):
    def convert(ctx):
        a, b = ctx.arg(0), ctx.arg(1)
        like = ctx.value(a)
        vb = ctx.value(b, like)
        if vb.element != like.element:
            vb = _cast(ctx, vb, like.element)
        return ctx.op("compare", [like, vb], {"predicate": Attr.i32(_PREDICATES[predicate])})
    return convert


for _p in _PREDICATES:
    converts(f"aten.{_p}.Tensor", f"aten.{_p}.Scalar")(_compare(_p))


@converts("aten.where.self")
def where(ctx):
    element, _ = ctx.out_type()
    cond = ctx.value(ctx.arg(0))
    a, b = _operands(ctx, ctx.arg(1), ctx.arg(2), element)
    return ctx.op("select", [cond, a, b])


def _unary(kind):
    def convert(ctx):
        element, _ = ctx.out_type()
        return ctx.op(kind, [_cast(ctx, ctx.value(ctx.arg(0)), element)])
    return convert


for _aten, _kiln in [("relu", "relu"), ("sigmoid", "sigmoid"), ("tanh", "tanh"), ("exp", "exp"),
                     ("log", "log"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"), ("neg", "neg"),
                     ("abs", "abs"), ("erf", "erf"), ("sin", "sin"), ("cos", "cos"),
                     ("reciprocal", "reciprocal"), ("floor", "floor"), ("ceil", "ceil"),
                     ("round", "round"), ("sign", "sign"), ("logical_not", "not"),
                     ("bitwise_not", "not")]:
    converts(f"aten.{_aten}.default")(_unary(_kiln))


@converts("aten.gelu.default")
def gelu(ctx):
    approximate = ctx.kwargs.get("approximate", ctx.arg(1, "none"))
    return ctx.op("gelu", [ctx.value(ctx.arg(0))],
                  {"approximation": Attr.i32(1 if approximate == "tanh" else 0)})


@converts("aten.clamp.default", "aten.hardtanh.default")
def clamp(ctx):
    is_hardtanh = "hardtanh" in str(ctx.node.target)
    lo = ctx.arg(1, -1.0 if is_hardtanh else None, name="min")
    hi = ctx.arg(2, 1.0 if is_hardtanh else None, name="max")
    return ctx.op("clip", [ctx.value(ctx.arg(0))],
                  {"min": Attr.f64(lo if lo is not None else -3.4028234663852886e38),
                   "max": Attr.f64(hi if hi is not None else 3.4028234663852886e38)})


@converts("aten.clamp_min.default")
def clamp_min(ctx):
    return ctx.op("clip", [ctx.value(ctx.arg(0))],
                  {"min": Attr.f64(ctx.arg(1)), "max": Attr.f64(3.4028234663852886e38)})


@converts("aten.leaky_relu.default")
def leaky_relu(ctx):
    x = ctx.value(ctx.arg(0))
    slope = ctx.arg(1, 0.01)
    zero = ctx.scalar(0.0, x.element)
    positive = ctx.f.op("compare", [x, zero], {"predicate": Attr.i32(4)}, [("i1", x.dims)])
    scaled = ctx.f.op("mul", [x, ctx.scalar(slope, x.element)], {}, [(x.element, x.dims)])
    return ctx.op("select", [positive, x, scaled])


def _hard_sigmoid(ctx, x):
    """clip(x / 6 + 1/2, 0, 1), written as the ONNX importer writes
    HardSigmoid (x times 1/6), so that a backend takes it, and HardSwish,
    as a library call's activation."""
    t = ctx.f.op("mul", [x, ctx.scalar(1.0 / 6.0, x.element)], {}, [(x.element, x.dims)])
    t = ctx.f.op("add", [t, ctx.scalar(0.5, x.element)], {}, [(x.element, x.dims)])
    return t, {"min": Attr.f64(0.0), "max": Attr.f64(1.0)}


@converts("aten.hardsigmoid.default")
def hardsigmoid(ctx):
    t, bounds = _hard_sigmoid(ctx, ctx.value(ctx.arg(0)))
    return ctx.op("clip", [t], bounds)


@converts("aten.hardswish.default")
def hardswish(ctx):
    x = ctx.value(ctx.arg(0))
    t, bounds = _hard_sigmoid(ctx, x)
    t = ctx.f.op("clip", [t], bounds, [(x.element, x.dims)])
    return ctx.op("mul", [x, t])


@converts("aten.silu.default")
def silu(ctx):
    x = ctx.value(ctx.arg(0))
    s = ctx.f.op("sigmoid", [x], {}, [(x.element, x.dims)])
    return ctx.op("mul", [x, s])


@converts("aten.elu.default")
def elu(ctx):
    """scale * x where x > 0, else scale * alpha * (exp(input_scale * x) - 1)."""
    x = ctx.value(ctx.arg(0))
    alpha, scale = ctx.arg(1, 1.0, name="alpha"), ctx.arg(2, 1.0, name="scale")
    input_scale = ctx.arg(3, 1.0, name="input_scale")
    t = lambda name, a, b: ctx.f.op(name, [a, b], {}, [(x.element, x.dims)])  # noqa: E731
    c = lambda v: ctx.scalar(v, x.element)  # noqa: E731
    e = ctx.f.op("exp", [t("mul", x, c(input_scale))], {}, [(x.element, x.dims)])
    negative = t("mul", t("sub", e, c(1.0)), c(alpha * scale))
    positive = t("mul", x, c(scale)) if scale != 1 else x
    above = ctx.f.op("compare", [x, c(0.0)], {"predicate": Attr.i32(_PREDICATES["gt"])},
                     [("i1", x.dims)])
    return ctx.op("select", [above, positive, negative])


@converts("aten.log1p.default")
def log1p(ctx):
    """log(1 + x), accurate for small x: log(u) * x / (u - 1) with u = 1 + x
    (x itself where u rounds to 1)."""
    element, dims = ctx.out_type()
    x = _cast(ctx, ctx.value(ctx.arg(0)), element)
    t = lambda name, a, b: ctx.f.op(name, [a, b], {}, [(element, dims)])  # noqa: E731
    one = ctx.scalar(1.0, element)
    u = t("add", x, one)
    d = t("sub", u, one)
    ratio = t("div", t("mul", ctx.f.op("log", [u], {}, [(element, dims)]), x), d)
    rounds = ctx.f.op("compare", [d, ctx.scalar(0.0, element)],
                      {"predicate": Attr.i32(_PREDICATES["eq"])}, [("i1", dims)])
    return ctx.op("select", [rounds, x, ratio])


@converts("aten._to_copy.default", "aten.to.dtype", "aten.type_as.default")
def to_copy(ctx):
    element, _ = ctx.out_type()
    return _cast(ctx, ctx.value(ctx.arg(0)), element)


@converts("aten.clone.default", "aten.alias.default", "aten.detach.default",
          "aten.lift_fresh_copy.default", "aten.contiguous.default")
def identity(ctx):
    return ctx.value(ctx.arg(0))


@converts("aten._assert_tensor_metadata.default")
def assert_metadata(ctx):
    """torch's check of a tensor's dtype and shape (before a cast): the
    trace already holds it; nothing to compute."""
    return None


converts("aten.bitwise_xor.Tensor", "aten.logical_xor.default")(_binary("xor"))
converts("aten.clamp_max.default")(
    lambda ctx: ctx.op("clip", [ctx.value(ctx.arg(0))],
                       {"min": Attr.f64(-3.4028234663852886e38), "max": Attr.f64(ctx.arg(1))}))


@converts("aten.clamp.Tensor")
def clamp_tensor(ctx):
    """Bounds given as tensors: max with the low, then min with the high."""
    element, _ = ctx.out_type()
    y = _cast(ctx, ctx.value(ctx.arg(0)), element)
    for i, kind in ((1, "max"), (2, "min")):
        bound = ctx.arg(i, None, name="min" if i == 1 else "max")
        if bound is not None:
            y = ctx.op(kind, [y, _cast(ctx, ctx.value(bound, y), element)])
    return y


def _math(build):
    """A unary op of float math composed from kiln's ops: `build(op, c, x)`
    with op(name, *operands) on the node's type and c(value) a scalar."""
    def convert(ctx):
        element, dims = ctx.out_type()
        x = _cast(ctx, ctx.value(ctx.arg(0)), element)
        flags = {"eq", "ne", "lt", "le", "gt", "ge"}

        def op(name, *operands):
            if name in flags:
                return ctx.f.op("compare", list(operands),
                                {"predicate": Attr.i32(_PREDICATES[name])}, [("i1", dims)])
            return ctx.f.op(name, list(operands), {}, [(element, dims)])
        return build(op, lambda v: ctx.scalar(v, element), x)
    return convert


_LN2, _LN10 = 0.6931471805599453, 2.302585092994046

converts("aten.tan.default")(_math(lambda op, c, x: op("div", op("sin", x), op("cos", x))))
converts("aten.log2.default")(_math(lambda op, c, x: op("mul", op("log", x), c(1 / _LN2))))
converts("aten.log10.default")(_math(lambda op, c, x: op("mul", op("log", x), c(1 / _LN10))))
converts("aten.exp2.default")(_math(lambda op, c, x: op("exp", op("mul", x, c(_LN2)))))
converts("aten.trunc.default")(_math(
    lambda op, c, x: op("select", op("lt", x, c(0)), op("ceil", x), op("floor", x))))
converts("aten.sinh.default")(_math(
    lambda op, c, x: op("mul", op("sub", op("exp", x), op("exp", op("neg", x))), c(0.5))))
converts("aten.cosh.default")(_math(
    lambda op, c, x: op("mul", op("add", op("exp", x), op("exp", op("neg", x))), c(0.5))))
# asin x = atan(x / sqrt(1 - x^2)) (NaN outside [-1, 1], +-pi/2 at +-1).
converts("aten.asin.default")(_math(
    lambda op, c, x: op("atan", op("div", x, op("sqrt", op("sub", c(1), op("mul", x, x)))))))
converts("aten.acos.default")(_math(
    lambda op, c, x: op("sub", c(1.5707963267948966), op("atan", op(
        "div", x, op("sqrt", op("sub", c(1), op("mul", x, x))))))))
converts("aten.atan.default")(_unary("atan"))
converts("aten.isnan.default")(
    lambda ctx: ctx.op("compare", [ctx.value(ctx.arg(0))] * 2,
                       {"predicate": Attr.i32(_PREDICATES["ne"])}))


@converts("aten.isinf.default")
def isinf(ctx):
    x = ctx.value(ctx.arg(0))
    magnitude = ctx.f.op("abs", [x], {}, [(x.element, x.dims)])
    return ctx.op("compare", [magnitude, ctx.scalar(float("inf"), x.element)],
                  {"predicate": Attr.i32(_PREDICATES["eq"])})


def _expm1(op, c, x):
    """exp(x) - 1, accurate near 0 (Kahan): (u - 1) x / log(u) with
    u = exp(x); x where u rounds to 1, -1 where it is 0, u - 1 where it is
    infinite."""
    u = op("exp", x)
    d = op("sub", u, c(1))
    ratio = op("div", op("mul", d, x), op("log", u))
    near = op("select", op("eq", u, c(1)), x, ratio)
    return op("select", op("eq", d, c(-1)), d,
              op("select", op("eq", u, c(float("inf"))), u, near))


converts("aten.expm1.default")(_math(_expm1))


@converts("aten.atan2.default")
def atan2(ctx):
    """atan(y / x), moved to (x, y)'s quadrant: + pi where x is negative
    (or -0) and y is not, - pi where both are; the signs of zeros read
    through 1 / v (so atan2(-0, -1) is -pi, as in C); both zero: y where
    x is +0, +-pi where it is -0. y / x of a zero x is an infinity, whose
    arc tangent is the +-pi/2 wanted."""
    element, dims = ctx.out_type()
    y, x = _operands(ctx, ctx.arg(0), ctx.arg(1), element)

    def op(name, *operands):
        return ctx.f.op(name, list(operands), {}, [(element, dims)])

    def flag(name, a, b):
        return ctx.f.op("compare", [a, b], {"predicate": Attr.i32(_PREDICATES[name])},
                        [("i1", dims)])

    def either(a, b):
        return ctx.f.op("or", [a, b], {}, [("i1", dims)])

    c = lambda v: ctx.scalar(v, element)  # noqa: E731
    pi = 3.141592653589793

    def negative(v):  # v < 0, or v is -0
        return either(flag("lt", v, c(0)), flag("lt", op("reciprocal", v), c(0)))

    shift = op("select", negative(y), c(-pi), c(pi))
    base = op("atan", op("div", y, x))
    result = op("select", negative(x), op("add", base, shift), base)
    zeros = ctx.f.op("and", [flag("eq", x, c(0)), flag("eq", y, c(0))], {}, [("i1", dims)])
    at_zero = op("select", negative(x), shift, y)
    return ctx.op("select", [zeros, at_zero, result])
