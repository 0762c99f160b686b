//===- Activation.cpp - ONNX activation functions -------------------------===//
//
// Activations that kiln has no op for are built from its elementwise ops
// (select, compare, exp, ...); fusion turns each back into one loop.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {


/// x < 0 ? negative(x) : x
Value selectNegative(NodeContext &ctx, Value x, Value negative) {
  Value isNegative = compare(ctx, ComparePredicate::lt, x, ctx.scalarLike(x, 0));
  return ctx.make<SelectOp>(isNegative, negative, x);
}

LogicalResult importLeakyRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  Value alpha = ctx.scalarLike(x, ctx.floatAttr("alpha", 0.01f));
  return ctx.setOutput(0, selectNegative(ctx, x, ctx.make<MulOp>(x, alpha)));
}

LogicalResult importPRelu(NodeContext &ctx) {
  Value x = ctx.input(0), slope = broadcastOperand(ctx, 1);
  // Before opset 7 a per-channel slope [C] applied along dim 1.
  int64_t rank = NodeContext::rankOf(x);
  if (ctx.opset < 7 && slope && NodeContext::rankOf(slope) == 1 && rank > 2) {
    SmallVector<int64_t> axes;
    for (int64_t d = 1; d < rank - 1; ++d)
      axes.push_back(d);
    slope = unsqueeze(ctx, slope, axes);
  }
  return ctx.setOutput(0, selectNegative(ctx, x, ctx.make<MulOp>(x, slope)));
}

/// alpha * (exp(x) - 1), the negative branch of Elu, Selu and Celu.
Value expm1Scaled(NodeContext &ctx, Value x, double alpha) {
  Value em1 = ctx.make<SubOp>(ctx.make<ExpOp>(x), ctx.scalarLike(x, 1));
  return ctx.make<MulOp>(em1, ctx.scalarLike(x, alpha));
}

LogicalResult importElu(NodeContext &ctx) {
  Value x = ctx.input(0);
  double alpha = ctx.floatAttr("alpha", 1.0f);
  return ctx.setOutput(0, selectNegative(ctx, x, expm1Scaled(ctx, x, alpha)));
}

LogicalResult importSelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  double alpha = ctx.floatAttr("alpha", 1.67326319217681884765625f);
  double gamma = ctx.floatAttr("gamma", 1.05070102214813232421875f);
  Value elu = selectNegative(ctx, x, expm1Scaled(ctx, x, alpha));
  return ctx.setOutput(0, ctx.make<MulOp>(elu, ctx.scalarLike(x, gamma)));
}

LogicalResult importCelu(NodeContext &ctx) {
  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  Value x = ctx.input(0);
  double alpha = ctx.floatAttr("alpha", 1.0f);
  Value scaled = ctx.make<DivOp>(x, ctx.scalarLike(x, alpha));
  return ctx.setOutput(
      0, selectNegative(ctx, x, expm1Scaled(ctx, scaled, alpha)));
}

LogicalResult importThresholdedRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  Value alpha = ctx.scalarLike(x, ctx.floatAttr("alpha", 1.0f));
  Value above = compare(ctx, ComparePredicate::gt, x, alpha);
  return ctx.setOutput(0,
                       ctx.make<SelectOp>(above, x, ctx.scalarLike(x, 0)));
}

/// clip(alpha * x + beta, 0, 1)
Value hardSigmoid(NodeContext &ctx, Value x, double alpha, double beta) {
  Value linear = ctx.make<AddOp>(ctx.make<MulOp>(x, ctx.scalarLike(x, alpha)),
                                 ctx.scalarLike(x, beta));
  return ctx.make<ClipOp>(linear, ctx.b.getF64FloatAttr(0.0),
                          ctx.b.getF64FloatAttr(1.0));
}

LogicalResult importHardSigmoid(NodeContext &ctx) {
  Value x = ctx.input(0);
  return ctx.setOutput(0, hardSigmoid(ctx, x, ctx.floatAttr("alpha", 0.2f),
                                      ctx.floatAttr("beta", 0.5f)));
}

LogicalResult importHardSwish(NodeContext &ctx) {
  Value x = ctx.input(0);
  return ctx.setOutput(
      0, ctx.make<MulOp>(x, hardSigmoid(ctx, x, 1.0 / 6.0, 0.5)));
}

/// log(1 + exp(x)), computed as max(x, 0) + log(1 + exp(-|x|)) so large
/// inputs do not overflow.
Value softplus(NodeContext &ctx, Value x) {
  Value negAbs = ctx.make<NegOp>(ctx.make<AbsOp>(x));
  Value log1pExp = ctx.make<LogOp>(
      ctx.make<AddOp>(ctx.make<ExpOp>(negAbs), ctx.scalarLike(x, 1)));
  return ctx.make<AddOp>(ctx.make<ReluOp>(x), log1pExp);
}

LogicalResult importSoftplus(NodeContext &ctx) {
  return ctx.setOutput(0, softplus(ctx, ctx.input(0)));
}

LogicalResult importMish(NodeContext &ctx) {
  Value x = ctx.input(0);
  return ctx.setOutput(0, ctx.make<MulOp>(x, ctx.make<TanhOp>(softplus(ctx, x))));
}

LogicalResult importSoftsign(NodeContext &ctx) {
  Value x = ctx.input(0);
  Value denominator =
      ctx.make<AddOp>(ctx.make<AbsOp>(x), ctx.scalarLike(x, 1));
  return ctx.setOutput(0, ctx.make<DivOp>(x, denominator));
}

LogicalResult importShrink(NodeContext &ctx) {
  // x < -lambd ? x + bias : x > lambd ? x - bias : 0
  Value x = ctx.input(0);
  double lambd = ctx.floatAttr("lambd", 0.5f), bias = ctx.floatAttr("bias", 0.0f);
  Value below = compare(ctx, ComparePredicate::lt, x, ctx.scalarLike(x, -lambd));
  Value above = compare(ctx, ComparePredicate::gt, x, ctx.scalarLike(x, lambd));
  Value zero = ctx.scalarLike(x, 0);
  Value upper = ctx.make<SelectOp>(
      above, ctx.make<SubOp>(x, ctx.scalarLike(x, bias)), zero);
  return ctx.setOutput(
      0, ctx.make<SelectOp>(below, ctx.make<AddOp>(x, ctx.scalarLike(x, bias)),
                            upper));
}

/// Swish (opset 24): x * sigmoid(alpha * x).
Value swish(NodeContext &ctx, Value x, double alpha) {
  Value scaled = alpha == 1.0 ? x : ctx.make<MulOp>(x, ctx.scalarLike(x, alpha));
  return ctx.make<MulOp>(x, ctx.make<SigmoidOp>(scaled));
}

LogicalResult importSwish(NodeContext &ctx) {
  return ctx.setOutput(0, swish(ctx, ctx.input(0), ctx.floatAttr("alpha", 1.0f)));
}

/// SwiGLU (opset 28): Swish(A) * B, A and B of the same shape.
LogicalResult importSwiGLU(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  if (NodeContext::typeOf(a).getShape() != NodeContext::typeOf(b).getShape())
    return ctx.invalid("A and B must have the same shape (SwiGLU does not broadcast)");
  return ctx.setOutput(0, ctx.make<MulOp>(swish(ctx, a, ctx.floatAttr("alpha", 1.0f)), b));
}

LogicalResult importGelu(NodeContext &ctx) {
  std::string approximate = ctx.stringAttr("approximate", "none");
  GeluApproximation mode;
  if (approximate == "none")
    mode = GeluApproximation::none;
  else if (approximate == "tanh")
    mode = GeluApproximation::tanh;
  else
    return ctx.invalid("approximate '" + approximate +
                       "' is not 'none' or 'tanh'");
  return ctx.setOutput(
      0, ctx.make<GeluOp>(ctx.input(0),
                          GeluApproximationAttr::get(ctx.context(), mode)));
}

/// Clip: bounds are attributes before opset 11, optional inputs after.
LogicalResult importClip(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  bool isFloat = isa<FloatType>(NodeContext::elementTypeOf(x));
  double lowest = isFloat ? -std::numeric_limits<double>::infinity()
                          : static_cast<double>(INT64_MIN);
  double highest = isFloat ? std::numeric_limits<double>::infinity()
                           : static_cast<double>(INT64_MAX);
  if (ctx.opset < 11)
    return ctx.setOutput(
        0, ctx.make<ClipOp>(x, ctx.b.getF64FloatAttr(ctx.floatAttr("min", -3.4028234663852886e38f)),
                            ctx.b.getF64FloatAttr(ctx.floatAttr("max", 3.4028234663852886e38f))));
  Value lo = ctx.optionalInput(1), hi = ctx.optionalInput(2);
  DenseElementsAttr loConst = NodeContext::constantOf(lo);
  DenseElementsAttr hiConst = NodeContext::constantOf(hi);
  if ((!lo || loConst) && (!hi || hiConst)) {
    double loValue = lowest, hiValue = highest;
    if (lo && loConst.getNumElements() != 1)
      return ctx.invalid("min must be a scalar");
    if (hi && hiConst.getNumElements() != 1)
      return ctx.invalid("max must be a scalar");
    if (lo)
      loValue = (*ctx.floatsInput(1, "min"))[0];
    if (hi)
      hiValue = (*ctx.floatsInput(2, "max"))[0];
    if (loValue <= hiValue)
      return ctx.setOutput(0, ctx.make<ClipOp>(x, ctx.b.getF64FloatAttr(loValue),
                                               ctx.b.getF64FloatAttr(hiValue)));
  }
  // Bounds known only at run time (or min > max, where ONNX says the
  // result is max): apply them as max then min.
  Value result = x;
  if (lo)
    result = ctx.make<MaxOp>(result, lo);
  if (hi)
    result = ctx.make<MinOp>(result, hi);
  return ctx.setOutput(0, result);
}

} // namespace

void registerActivationOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("LeakyRelu", 1, any, importLeakyRelu);
  r.add("PRelu", 1, any, importPRelu);
  r.add("Elu", 1, any, importElu);
  r.add("Selu", 1, any, importSelu);
  r.add("Celu", 12, any, importCelu);
  r.add("Swish", 24, any, importSwish);
  r.add("SwiGLU", 28, any, importSwiGLU);
  r.add("ThresholdedRelu", 10, any, importThresholdedRelu);
  r.add("HardSigmoid", 1, any, importHardSigmoid);
  r.add("HardSwish", 14, any, importHardSwish);
  r.add("Softplus", 1, any, importSoftplus);
  r.add("Softsign", 1, any, importSoftsign);
  r.add("Mish", 18, any, importMish);
  r.add("Shrink", 9, any, importShrink);
  r.add("Gelu", 20, any, importGelu);
  r.add("Clip", 1, any, importClip);
}

} // namespace kiln::onnx_frontend
