//===- ElementwiseRules.cpp - gradients of elementwise ops ----------------===//
//
// For y = f(x) elementwise: dx = dy * f'(x), written with the forward
// values (y where it is cheaper: exp, sigmoid, tanh). Binary ops undo their
// broadcasting by summing (unbroadcast). Piecewise-constant ops (floor,
// ceil, round, sign) have a zero gradient; comparisons, logic and integer
// ops produce no float result, so no gradient reaches them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"

#include <cmath>

using namespace mlir;

namespace kiln::autodiff {
namespace {

using Grads = llvm::SmallVectorImpl<Value>;

Value mul(OpBuilder &b, Location loc, Value x, Value y) { return MulOp::create(b, loc, x, y); }
Value sub(OpBuilder &b, Location loc, Value x, Value y) { return SubOp::create(b, loc, x, y); }
Value add(OpBuilder &b, Location loc, Value x, Value y) { return AddOp::create(b, loc, x, y); }
Value div(OpBuilder &b, Location loc, Value x, Value y) { return DivOp::create(b, loc, x, y); }
Value num(OpBuilder &b, Location loc, Value like, double v) {
  return scalar(b, loc, typeOf(like).getElementType(), v);
}

/// dx = dy * d, for a unary op.
template <typename Op>
LogicalResult unary(Op op, OpBuilder &b, ArrayRef<Value> g, Grads &out,
                    llvm::function_ref<Value(Location, Value x, Value y)> derivative) {
  Location loc = op.getLoc();
  out.push_back(mul(b, loc, g[0], derivative(loc, op.getInput(), op.getResult())));
  return success();
}

#define KILN_UNARY_RULE(OP, BODY)                                                               \
  LogicalResult OP##Rule(OP op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {                   \
    return unary(op, b, g, out, [&](Location loc, Value x, Value y) -> Value { BODY; });         \
  }

KILN_UNARY_RULE(ExpOp, return y)
KILN_UNARY_RULE(LogOp, return ReciprocalOp::create(b, loc, x))
KILN_UNARY_RULE(SqrtOp, return div(b, loc, num(b, loc, y, 0.5), y))
// rsqrt: y = x^-1/2, y' = -y^3 / 2
KILN_UNARY_RULE(RsqrtOp, return mul(b, loc, num(b, loc, y, -0.5), mul(b, loc, y, mul(b, loc, y, y))))
KILN_UNARY_RULE(ReciprocalOp, return NegOp::create(b, loc, mul(b, loc, y, y)))
KILN_UNARY_RULE(SigmoidOp, return mul(b, loc, y, sub(b, loc, num(b, loc, y, 1.0), y)))
KILN_UNARY_RULE(TanhOp, return sub(b, loc, num(b, loc, y, 1.0), mul(b, loc, y, y)))
KILN_UNARY_RULE(AbsOp, return SignOp::create(b, loc, x))
KILN_UNARY_RULE(SinOp, return CosOp::create(b, loc, x))
KILN_UNARY_RULE(CosOp, return NegOp::create(b, loc, SinOp::create(b, loc, x)))
KILN_UNARY_RULE(AtanOp, return ReciprocalOp::create(b, loc, add(b, loc, num(b, loc, x, 1.0),
                                                                mul(b, loc, x, x))))
// erf'(x) = 2 / sqrt(pi) * exp(-x^2)
KILN_UNARY_RULE(ErfOp, return mul(b, loc, num(b, loc, x, 2.0 / std::sqrt(M_PI)),
                                  ExpOp::create(b, loc, NegOp::create(b, loc, mul(b, loc, x, x)))))
// relu'(x) = 1 where x > 0 (0 at 0, as PyTorch)
KILN_UNARY_RULE(ReluOp, return CastOp::create(b, loc, typeOf(x),
                                              CompareOp::create(b, loc, ComparePredicate::gt, x,
                                                                num(b, loc, x, 0.0))))
#undef KILN_UNARY_RULE

LogicalResult NegOpRule(NegOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  out.push_back(NegOp::create(b, op.getLoc(), g[0]));
  return success();
}

/// Piecewise-constant ops: a zero gradient.
template <typename Op>
LogicalResult zeroRule(Op op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  out.push_back(filled(b, op.getLoc(), typeOf(op.getInput()), 0.0));
  return success();
}

LogicalResult StopGradientOpRule(StopGradientOp op, OpBuilder &, ArrayRef<Value>, Grads &out) {
  out.push_back(Value());
  return success();
}

// clip: the gradient passes where min <= x <= max (as PyTorch's clamp).
LogicalResult ClipOpRule(ClipOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  Value above = CompareOp::create(b, loc, ComparePredicate::ge, x,
                                  num(b, loc, x, op.getMin().convertToDouble()));
  Value below = CompareOp::create(b, loc, ComparePredicate::le, x,
                                  num(b, loc, x, op.getMax().convertToDouble()));
  Value inside = AndOp::create(b, loc, above, below);
  out.push_back(mul(b, loc, g[0], CastOp::create(b, loc, typeOf(x), inside)));
  return success();
}

// gelu: d/dx x * Phi(x) = Phi(x) + x * phi(x); with the tanh approximation,
// u = c (x + k x^3), d = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) c (1 + 3 k x^2).
LogicalResult GeluOpRule(GeluOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  auto c = [&](double v) { return num(b, loc, x, v); };
  Value d;
  if (op.getApproximation() == GeluApproximation::none) {
    Value cdf = mul(b, loc, c(0.5),
                    add(b, loc, c(1.0), ErfOp::create(b, loc, mul(b, loc, x, c(M_SQRT1_2)))));
    Value pdf = mul(b, loc, c(1.0 / std::sqrt(2.0 * M_PI)),
                    ExpOp::create(b, loc, mul(b, loc, c(-0.5), mul(b, loc, x, x))));
    d = add(b, loc, cdf, mul(b, loc, x, pdf));
  } else {
    double k = 0.044715, s = std::sqrt(2.0 / M_PI);
    Value x2 = mul(b, loc, x, x);
    Value u = mul(b, loc, c(s), add(b, loc, x, mul(b, loc, c(k), mul(b, loc, x2, x))));
    Value t = TanhOp::create(b, loc, u);
    Value left = mul(b, loc, c(0.5), add(b, loc, c(1.0), t));
    Value dt = sub(b, loc, c(1.0), mul(b, loc, t, t));
    Value du = mul(b, loc, c(s), add(b, loc, c(1.0), mul(b, loc, c(3 * k), x2)));
    d = add(b, loc, left, mul(b, loc, mul(b, loc, c(0.5), x), mul(b, loc, dt, du)));
  }
  out.push_back(mul(b, loc, g[0], d));
  return success();
}

LogicalResult CastOpRule(CastOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  if (!isDifferentiable(op.getInput())) {
    out.push_back(Value());
    return success();
  }
  out.push_back(CastOp::create(b, op.getLoc(), typeOf(op.getInput()), g[0]));
  return success();
}

LogicalResult AddOpRule(AddOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  return pushUnbroadcast(b, op.getLoc(), {{g[0], op.getLhs()}, {g[0], op.getRhs()}}, out);
}
LogicalResult SubOpRule(SubOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Value neg = NegOp::create(b, op.getLoc(), g[0]);
  return pushUnbroadcast(b, op.getLoc(), {{g[0], op.getLhs()}, {neg, op.getRhs()}}, out);
}
LogicalResult MulOpRule(MulOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  return pushUnbroadcast(b, loc,
                         {{mul(b, loc, g[0], op.getRhs()), op.getLhs()},
                          {mul(b, loc, g[0], op.getLhs()), op.getRhs()}},
                         out);
}
// a / b: da = g / b, db = -g * y / b
LogicalResult DivOpRule(DivOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value da = div(b, loc, g[0], op.getRhs());
  Value db = NegOp::create(b, loc, mul(b, loc, da, op.getResult()));
  return pushUnbroadcast(b, loc, {{da, op.getLhs()}, {db, op.getRhs()}}, out);
}
// a ^ b: da = g * b * a^(b - 1), db = g * y * log(a)
LogicalResult PowOpRule(PowOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value a = op.getLhs(), e = op.getRhs();
  Value da = mul(b, loc, g[0],
                 mul(b, loc, e, PowOp::create(b, loc, a, sub(b, loc, e, num(b, loc, e, 1.0)))));
  Value db = mul(b, loc, g[0], mul(b, loc, op.getResult(), LogOp::create(b, loc, a)));
  return pushUnbroadcast(b, loc, {{da, a}, {db, e}}, out);
}
/// max/min: the gradient goes to the operand chosen (lhs on ties).
template <typename Op, ComparePredicate predicate>
LogicalResult chooseRule(Op op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value lhsWins = CompareOp::create(b, loc, predicate, op.getLhs(), op.getRhs());
  Value zero = num(b, loc, g[0], 0.0);
  Value da = SelectOp::create(b, loc, lhsWins, g[0], zero);
  Value db = SelectOp::create(b, loc, lhsWins, zero, g[0]);
  return pushUnbroadcast(b, loc, {{da, op.getLhs()}, {db, op.getRhs()}}, out);
}
LogicalResult SelectOpRule(SelectOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value zero = num(b, loc, g[0], 0.0);
  Value onTrue = SelectOp::create(b, loc, op.getCondition(), g[0], zero);
  Value onFalse = SelectOp::create(b, loc, op.getCondition(), zero, g[0]);
  out.push_back(Value());
  return pushUnbroadcast(b, loc, {{onTrue, op.getOnTrue()}, {onFalse, op.getOnFalse()}}, out);
}

} // namespace

void registerElementwiseRules(MLIRContext *context) {
#define KILN_ATTACH(OP) OP::attachInterface<RuleModel<OP, OP##Rule>>(*context);
  KILN_ATTACH(ExpOp)
  KILN_ATTACH(LogOp)
  KILN_ATTACH(SqrtOp)
  KILN_ATTACH(RsqrtOp)
  KILN_ATTACH(ReciprocalOp)
  KILN_ATTACH(SigmoidOp)
  KILN_ATTACH(TanhOp)
  KILN_ATTACH(AbsOp)
  KILN_ATTACH(SinOp)
  KILN_ATTACH(CosOp)
  KILN_ATTACH(AtanOp)
  KILN_ATTACH(ErfOp)
  KILN_ATTACH(ReluOp)
  KILN_ATTACH(NegOp)
  KILN_ATTACH(StopGradientOp)
  KILN_ATTACH(ClipOp)
  KILN_ATTACH(GeluOp)
  KILN_ATTACH(CastOp)
  KILN_ATTACH(AddOp)
  KILN_ATTACH(SubOp)
  KILN_ATTACH(MulOp)
  KILN_ATTACH(DivOp)
  KILN_ATTACH(PowOp)
  KILN_ATTACH(SelectOp)
#undef KILN_ATTACH
  MaxOp::attachInterface<RuleModel<MaxOp, chooseRule<MaxOp, ComparePredicate::ge>>>(*context);
  MinOp::attachInterface<RuleModel<MinOp, chooseRule<MinOp, ComparePredicate::le>>>(*context);
  FloorOp::attachInterface<RuleModel<FloorOp, zeroRule<FloorOp>>>(*context);
  CeilOp::attachInterface<RuleModel<CeilOp, zeroRule<CeilOp>>>(*context);
  RoundOp::attachInterface<RuleModel<RoundOp, zeroRule<RoundOp>>>(*context);
  SignOp::attachInterface<RuleModel<SignOp, zeroRule<SignOp>>>(*context);
}

} // namespace kiln::autodiff
