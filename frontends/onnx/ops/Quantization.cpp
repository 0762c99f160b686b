//===- Quantization.cpp - ONNX quantisation ops ----------------------------===//
//
// (De)quantisation is arithmetic on casts: dequantize is (x - zero) *
// scale, quantize is saturate(round_half_even(x / scale) + zero). The
// integer matmul and convolution ops subtract their zero points in i32 and
// contract exactly (convolution in f64, whose 53-bit mantissa holds every
// int8 x int8 sum of a real kernel); the QLinear forms rescale the exact
// integer result and requantize it.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/TensorData.h"
#include "frontends/onnx/ops/Helpers.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

/// `scaleOrZero` ([C] per-axis, or a scalar) shaped to broadcast along
/// `axis` of a rank-`rank` tensor.
Value alongAxis(NodeContext &ctx, Value scaleOrZero, int64_t axis, int64_t rank) {
  if (!scaleOrZero || NodeContext::rankOf(scaleOrZero) == 0)
    return scaleOrZero;
  if (NodeContext::rankOf(scaleOrZero) != 1) {
    ctx.unsupported("blocked (rank > 1) scales and zero points");
    return {};
  }
  if (axis < 0 || axis >= rank) {
    ctx.invalid("axis " + llvm::Twine(axis) + " is out of range for rank " +
                llvm::Twine(rank));
    return {};
  }
  SmallVector<int64_t> axes;
  for (int64_t d = axis + 1; d < rank; ++d)
    axes.push_back(d - axis);
  return axes.empty() ? scaleOrZero : unsqueeze(ctx, scaleOrZero, axes);
}

/// A blocked scale or zero point (opset 21: `block_size` > 0; the rank of
/// x, dim `axis` of ceil(n / block_size)) spread to x's shape: entry i
/// along `axis` is block i / block_size's.
Value blockedAlongAxis(NodeContext &ctx, Value scaleOrZero, int64_t axis, Value x,
                       int64_t blockSize) {
  if (!scaleOrZero)
    return scaleOrZero;
  int64_t rank = NodeContext::rankOf(x);
  if (NodeContext::rankOf(scaleOrZero) != rank) {
    ctx.invalid("a blocked scale or zero point must have x's rank");
    return {};
  }
  if (axis < 0 || axis >= rank) {
    ctx.invalid("axis " + llvm::Twine(axis) + " is out of range for rank " + llvm::Twine(rank));
    return {};
  }
  std::optional<int64_t> n = staticDim(ctx, x, axis, "a blocked (De)QuantizeLinear's x");
  if (!n)
    return {};
  int64_t blocks = NodeContext::typeOf(scaleOrZero).getDimSize(axis);
  if (!ShapedType::isDynamic(blocks) && blocks != (*n + blockSize - 1) / blockSize) {
    ctx.invalid("a blocked scale or zero point has " + llvm::Twine(blocks) +
                " blocks along axis " + llvm::Twine(axis) + ", not ceil(" + llvm::Twine(*n) +
                " / " + llvm::Twine(blockSize) + ")");
    return {};
  }
  SmallVector<int64_t> index;
  for (int64_t i = 0; i < *n; ++i)
    index.push_back(i / blockSize);
  return ctx.make<GatherOp>(scaleOrZero, ctx.indices(index), ctx.i64(axis));
}

/// The scale or zero point of (De)QuantizeLinear broadcast against x:
/// blocked, per axis or scalar.
Value spreadAlongAxis(NodeContext &ctx, Value scaleOrZero, int64_t axis, Value x) {
  int64_t blockSize = ctx.intAttr("block_size", 0);
  if (blockSize < 0) {
    ctx.invalid("block_size must not be negative");
    return {};
  }
  // One value of any rank is per tensor (as in ONNX's reference and ONNX
  // Runtime), whatever the axis.
  if (scaleOrZero && NodeContext::rankOf(scaleOrZero) > 0 &&
      NodeContext::typeOf(scaleOrZero).hasStaticShape() &&
      NodeContext::typeOf(scaleOrZero).getNumElements() == 1)
    return ctx.make<ReshapeOp>(scaleOrZero, ctx.i64s({}));
  if (blockSize > 0)
    return blockedAlongAxis(ctx, scaleOrZero, axis, x, blockSize);
  return alongAxis(ctx, scaleOrZero, axis, NodeContext::rankOf(x));
}

/// round-half-even, add the zero point, clamp to `type`'s range, cast.
Value quantize(NodeContext &ctx, Value scaled, Value zeroPoint, Type type) {
  Value y = ctx.make<RoundOp>(scaled);
  // A rounded float16 or bfloat16 is exact in float32, where the zero point
  // and the bounds are too (in float16, 2050 + 3 is 2052 and 32767 is 32768).
  if (y && NodeContext::elementTypeOf(y).getIntOrFloatBitWidth() < 32)
    y = ctx.cast(y, ctx.b.getF32Type());
  // 32-bit results: float32 holds neither their bounds (2^31 - 1 became
  // 2^31, which wrapped to -2^31) nor every zero point; float64 does.
  if (y && type && type.isInteger() && type.getIntOrFloatBitWidth() > 16)
    y = ctx.cast(y, ctx.b.getF64Type());
  if (zeroPoint)
    y = ctx.make<AddOp>(y, ctx.cast(zeroPoint, NodeContext::elementTypeOf(y)));
  // A missing or non-integer zero point (the output type) was reported
  // where it was read, or is reported here.
  if (!y || !type)
    return {};
  if (!type.isInteger() || type.getIntOrFloatBitWidth() > 32) {
    ctx.invalid("the quantized type must be an integer of at most 32 bits");
    return {};
  }
  unsigned width = type.getIntOrFloatBitWidth();
  double lo = type.isUnsignedInteger() ? 0 : -std::ldexp(1.0, width - 1);
  double hi = type.isUnsignedInteger() ? std::ldexp(1.0, width) - 1
                                       : std::ldexp(1.0, width - 1) - 1;
  y = ctx.make<ClipOp>(y, ctx.b.getF64FloatAttr(lo), ctx.b.getF64FloatAttr(hi));
  return ctx.cast(y, type);
}

/// The `axis` attribute made non-negative; only per-axis (1-D) scales use
/// it, so a scalar scale does not care that it is out of range.
int64_t quantAxis(NodeContext &ctx, Value x) {
  int64_t axis = ctx.intAttr("axis", 1);
  return axis < 0 ? axis + NodeContext::rankOf(x) : axis;
}

LogicalResult importDequantizeLinear(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1), zero = ctx.optionalInput(2);
  if (!x || !scale)
    return failure();
  int64_t axis = quantAxis(ctx, x);
  // The result in the scale's type, or output_dtype's (opset 23), which
  // ONNX's reference computes in float32 and converts.
  Type f = NodeContext::elementTypeOf(scale);
  Type out = f;
  if (int64_t outputDtype = ctx.intAttr("output_dtype", 0)) {
    out = elementTypeOf(ctx.context(), static_cast<int>(outputDtype));
    if (!out || !(out.isF32() || out.isF16() || out.isBF16()))
      return ctx.invalid("output_dtype " + dataTypeName(static_cast<int>(outputDtype)) +
                         " is not float, float16 or bfloat16");
    f = ctx.b.getF32Type();
  }
  Value v = ctx.cast(x, f);
  if (zero)
    v = ctx.make<SubOp>(v, ctx.cast(spreadAlongAxis(ctx, zero, axis, x), f));
  Value y = ctx.make<MulOp>(v, ctx.cast(spreadAlongAxis(ctx, scale, axis, x), f));
  return ctx.setOutput(0, ctx.cast(y, out));
}

LogicalResult importQuantizeLinear(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1), zero = ctx.optionalInput(2);
  if (!x || !scale)
    return failure();
  int64_t axis = quantAxis(ctx, x);
  // The zero point's type, else output_dtype (opset 21), else uint8.
  int64_t outputDtype = ctx.intAttr("output_dtype", 0);
  // saturate concerns float8 results only (ONNX ignores it for the others).
  bool saturateAttr = ctx.intAttr("saturate", 1) != 0;
  Type type = zero          ? NodeContext::elementTypeOf(zero)
              : outputDtype ? elementTypeOf(ctx.context(), static_cast<int>(outputDtype))
                            : ctx.b.getIntegerType(8, /*isSigned=*/false);
  if (!type)
    return ctx.unsupported("quantising to " + dataTypeName(static_cast<int>(outputDtype)));
  if (zero && outputDtype &&
      type != elementTypeOf(ctx.context(), static_cast<int>(outputDtype)))
    return ctx.invalid("output_dtype " + dataTypeName(static_cast<int>(outputDtype)) +
                       " differs from the zero point's type");
  // x / scale in the scale's type, or in precision's (opset 23).
  Type f = NodeContext::elementTypeOf(scale);
  if (int64_t precision = ctx.intAttr("precision", 0)) {
    f = elementTypeOf(ctx.context(), static_cast<int>(precision));
    if (!f || !(f.isF32() || f.isF16() || f.isBF16() || f.isF64()))
      return ctx.invalid("precision " + dataTypeName(static_cast<int>(precision)) +
                         " is not a float type");
  }
  Value scaled = ctx.make<DivOp>(ctx.cast(x, f),
                                 ctx.cast(spreadAlongAxis(ctx, scale, axis, x), f));
  if (isLowPrecisionFloat(type)) {
    // float8: x / scale converted (saturating unless saturate = 0; the
    // zero point must be 0 and is not read, as ONNX's reference); float4
    // adds its zero point and always saturates.
    bool isFloat4 = isa<Float4E2M1FNType>(type);
    if (isFloat4 && zero)
      scaled = ctx.make<AddOp>(scaled, ctx.cast(spreadAlongAxis(ctx, zero, axis, x), f));
    bool saturate = !isFloat4 && saturateAttr;
    return ctx.setOutput(0, ctx.cast(scaled, type, saturate));
  }
  return ctx.setOutput(0, quantize(ctx, scaled, spreadAlongAxis(ctx, zero, axis, x), type));
}

LogicalResult importDynamicQuantizeLinear(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  Value zero = ctx.scalarLike(x, 0);
  auto reduce = [&](auto opTag) {
    using OpTy = decltype(opTag);
    return ctx.make<OpTy>(x, ctx.i64s(all), ctx.b.getBoolAttr(false));
  };
  Value hi = ctx.make<MaxOp>(reduce(ReduceMaxOp()), zero);
  Value lo = ctx.make<MinOp>(reduce(ReduceMinOp()), zero);
  Value scale = ctx.make<DivOp>(ctx.make<SubOp>(hi, lo), ctx.scalarLike(x, 255));
  Type u8 = ctx.b.getIntegerType(8, /*isSigned=*/false);
  Value zeroPoint = quantize(ctx, ctx.make<DivOp>(ctx.make<NegOp>(lo), scale), {}, u8);
  ctx.bindOutput(1, scale);
  ctx.bindOutput(2, zeroPoint);
  return ctx.setOutput(0, quantize(ctx, ctx.make<DivOp>(x, scale), zeroPoint, u8));
}

/// `v` as i32 minus its zero point (which broadcasts along `axis`).
Value centered(NodeContext &ctx, Value v, Value zero, int64_t axis, int64_t rank) {
  Type i32 = ctx.b.getI32Type();
  Value c = ctx.cast(v, i32);
  if (!zero)
    return c;
  if (NodeContext::rankOf(zero) == 1 && axis >= 0)
    zero = alongAxis(ctx, zero, axis, rank);
  return ctx.make<SubOp>(c, ctx.cast(zero, i32));
}

LogicalResult importMatMulInteger(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  int64_t rankA = NodeContext::rankOf(a), rankB = NodeContext::rankOf(b);
  // A's zero point may be per row (axis rank-2), B's per column (last axis).
  Value ca = centered(ctx, a, ctx.optionalInput(2), rankA - 2, rankA);
  Value cb = centered(ctx, b, ctx.optionalInput(3), rankB - 1, rankB);
  return ctx.setOutput(0, numpyMatmul(ctx, ca, cb));
}

/// Exact integer convolution of i32 operands through f64, back to i32.
Value integerConv(NodeContext &ctx, Value x, Value w) {
  Type f64 = ctx.b.getF64Type();
  RankedTensorType wType = NodeContext::typeOf(w);
  if (!wType)
    return {};
  if (wType.getRank() < 3 || NodeContext::rankOf(x) != wType.getRank()) {
    ctx.invalid("input and weight must have the same rank, at least 3 ([N, C, D...] and "
                "[M, C/group, k...])");
    return {};
  }
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  std::optional<Window> window = readWindow(ctx, x, kernel);
  if (!window)
    return {};
  Value y = ctx.make<ConvOp>(ctx.cast(x, f64), ctx.cast(w, f64), ctx.i64s(window->strides),
                             ctx.i64s(window->pads), ctx.i64s(window->dilations),
                             ctx.i64(ctx.intAttr("group", 1)));
  return ctx.cast(y, ctx.b.getI32Type());
}

LogicalResult importConvInteger(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  int64_t rank = NodeContext::rankOf(w);
  Value cx = centered(ctx, x, ctx.optionalInput(2), -1, rank);
  Value cw = centered(ctx, w, ctx.optionalInput(3), 0, rank);
  return ctx.setOutput(0, integerConv(ctx, cx, cw));
}

/// Rescales an exact i32 accumulator by a_scale * b_scale / y_scale and
/// requantizes it with y's zero point.
Value requantize(NodeContext &ctx, Value acc, Value aScale, Value bScale,
                 Value yScale, Value yZero, int64_t channelAxis) {
  Type f = NodeContext::elementTypeOf(aScale);
  int64_t rank = NodeContext::rankOf(acc);
  Value factor = ctx.make<DivOp>(
      ctx.make<MulOp>(aScale, alongAxis(ctx, bScale, channelAxis, rank)), yScale);
  Value scaled = ctx.make<MulOp>(ctx.cast(acc, f), factor);
  return quantize(ctx, scaled, yZero, NodeContext::elementTypeOf(yZero));
}

LogicalResult importQLinearMatMul(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(3);
  int64_t rankA = NodeContext::rankOf(a), rankB = NodeContext::rankOf(b);
  Value ca = centered(ctx, a, ctx.input(2), rankA - 2, rankA);
  Value cb = centered(ctx, b, ctx.input(5), rankB - 1, rankB);
  Value acc = numpyMatmul(ctx, ca, cb);
  return ctx.setOutput(0, requantize(ctx, acc, ctx.input(1), ctx.input(4), ctx.input(6),
                                     ctx.input(7), NodeContext::rankOf(acc) - 1));
}

LogicalResult importQLinearConv(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(3);
  int64_t rank = NodeContext::rankOf(w);
  Value cx = centered(ctx, x, ctx.input(2), -1, rank);
  Value cw = centered(ctx, w, ctx.input(5), 0, rank);
  Value acc = integerConv(ctx, cx, cw);
  if (Value bias = ctx.optionalInput(8)) {
    SmallVector<int64_t> axes;
    for (int64_t d = 1; d < rank - 1; ++d)
      axes.push_back(d);
    acc = ctx.make<AddOp>(acc, unsqueeze(ctx, ctx.cast(bias, ctx.b.getI32Type()), axes));
  }
  return ctx.setOutput(0, requantize(ctx, acc, ctx.input(1), ctx.input(4), ctx.input(6),
                                     ctx.input(7), 1));
}

LogicalResult importBitShift(NodeContext &ctx) {
  std::string direction = ctx.stringAttr("direction", "");
  Value a = ctx.input(0), b = ctx.input(1);
  if (direction == "LEFT")
    return ctx.setOutput(0, ctx.make<ShiftLeftOp>(a, b));
  if (direction == "RIGHT")
    return ctx.setOutput(0, ctx.make<ShiftRightOp>(a, b));
  return ctx.invalid("direction must be LEFT or RIGHT");
}

} // namespace

void registerQuantizationOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("DequantizeLinear", 10, any, importDequantizeLinear);
  r.add("QuantizeLinear", 10, any, importQuantizeLinear);
  r.add("DynamicQuantizeLinear", 11, any, importDynamicQuantizeLinear);
  r.add("MatMulInteger", 10, any, importMatMulInteger);
  r.add("ConvInteger", 10, any, importConvInteger);
  r.add("QLinearMatMul", 10, any, importQLinearMatMul);
  r.add("QLinearConv", 10, any, importQLinearConv);
  r.add("BitShift", 11, any, importBitShift);
}

} // namespace kiln::onnx_frontend
