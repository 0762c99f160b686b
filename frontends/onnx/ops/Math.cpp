//===- Math.cpp - ONNX trigonometric and floating-point class ops ---------===//
//
// Trigonometric and hyperbolic functions beyond kiln's sin/cos/atan/tanh
// are built from them with the textbook identities; IsNaN and IsInf are
// comparisons.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {


LogicalResult importTan(NodeContext &ctx) {
  Value x = ctx.input(0);
  return ctx.setOutput(0, ctx.make<DivOp>(ctx.make<SinOp>(x), ctx.make<CosOp>(x)));
}

/// asin(x) = atan(x / sqrt(1 - x^2)); at |x| = 1 the quotient is +-inf and
/// atan gives +-pi/2 as it should.
Value asin(NodeContext &ctx, Value x) {
  Value oneMinusSquare =
      ctx.make<SubOp>(ctx.scalarLike(x, 1), ctx.make<MulOp>(x, x));
  return ctx.make<AtanOp>(ctx.make<DivOp>(x, ctx.make<SqrtOp>(oneMinusSquare)));
}

LogicalResult importAsin(NodeContext &ctx) {
  return ctx.setOutput(0, asin(ctx, ctx.input(0)));
}

LogicalResult importAcos(NodeContext &ctx) {
  Value x = ctx.input(0);
  return ctx.setOutput(0, ctx.make<SubOp>(ctx.scalarLike(x, M_PI / 2), asin(ctx, x)));
}

/// (exp(x) + sign * exp(-x)) / 2
Value expPair(NodeContext &ctx, Value x, bool plus) {
  Value ex = ctx.make<ExpOp>(x);
  Value enx = ctx.make<ExpOp>(ctx.make<NegOp>(x));
  Value combined = plus ? ctx.make<AddOp>(ex, enx) : ctx.make<SubOp>(ex, enx);
  return ctx.make<MulOp>(combined, ctx.scalarLike(x, 0.5));
}

LogicalResult importSinh(NodeContext &ctx) {
  return ctx.setOutput(0, expPair(ctx, ctx.input(0), false));
}

LogicalResult importCosh(NodeContext &ctx) {
  return ctx.setOutput(0, expPair(ctx, ctx.input(0), true));
}

/// log(x + sqrt(x^2 + sign))
Value logRoot(NodeContext &ctx, Value x, double sign) {
  Value root = ctx.make<SqrtOp>(
      ctx.make<AddOp>(ctx.make<MulOp>(x, x), ctx.scalarLike(x, sign)));
  return ctx.make<LogOp>(ctx.make<AddOp>(x, root));
}

LogicalResult importAsinh(NodeContext &ctx) {
  return ctx.setOutput(0, logRoot(ctx, ctx.input(0), 1));
}

LogicalResult importAcosh(NodeContext &ctx) {
  return ctx.setOutput(0, logRoot(ctx, ctx.input(0), -1));
}

LogicalResult importAtanh(NodeContext &ctx) {
  // 0.5 * log((1 + x) / (1 - x))
  Value x = ctx.input(0);
  Value one = ctx.scalarLike(x, 1);
  Value ratio = ctx.make<DivOp>(ctx.make<AddOp>(one, x), ctx.make<SubOp>(one, x));
  return ctx.setOutput(
      0, ctx.make<MulOp>(ctx.make<LogOp>(ratio), ctx.scalarLike(x, 0.5)));
}

LogicalResult importIsNaN(NodeContext &ctx) {
  Value x = ctx.input(0);
  return ctx.setOutput(0, compare(ctx, ComparePredicate::ne, x, x));
}

LogicalResult importIsInf(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool positive = ctx.intAttr("detect_positive", 1) != 0;
  bool negative = ctx.intAttr("detect_negative", 1) != 0;
  double inf = std::numeric_limits<double>::infinity();
  Value isPos = compare(ctx, ComparePredicate::eq, x, ctx.scalarLike(x, inf));
  Value isNeg = compare(ctx, ComparePredicate::eq, x, ctx.scalarLike(x, -inf));
  if (positive && negative)
    return ctx.setOutput(0, ctx.make<OrOp>(isPos, isNeg));
  if (positive)
    return ctx.setOutput(0, isPos);
  if (negative)
    return ctx.setOutput(0, isNeg);
  // Neither: all false.
  return ctx.setOutput(0, ctx.make<AndOp>(isPos, isNeg));
}

} // namespace

void registerMathOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Tan", 7, any, importTan);
  r.add("Asin", 7, any, importAsin);
  r.add("Acos", 7, any, importAcos);
  r.add("Sinh", 9, any, importSinh);
  r.add("Cosh", 9, any, importCosh);
  r.add("Asinh", 9, any, importAsinh);
  r.add("Acosh", 9, any, importAcosh);
  r.add("Atanh", 9, any, importAtanh);
  r.add("IsNaN", 9, any, importIsNaN);
  r.add("IsInf", 10, any, importIsInf);
}

} // namespace kiln::onnx_frontend
