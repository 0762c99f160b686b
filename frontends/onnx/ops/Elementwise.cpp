//===- Elementwise.cpp - ONNX elementwise ops -----------------------------===//
//
// Unary and binary arithmetic, logic and comparisons, variadic Max/Min/
// Sum/Mean, Where, Cast and Identity. Opset < 7 binary ops use legacy
// broadcasting (see broadcastOperand).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/TensorData.h"
#include "frontends/onnx/ops/Helpers.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

LogicalResult importIdentity(NodeContext &ctx) {
  return ctx.setOutput(0, ctx.input(0));
}

template <ComparePredicate predicate>
LogicalResult importCompare(NodeContext &ctx) {
  auto attr = ComparePredicateAttr::get(ctx.context(), predicate);
  return ctx.setOutput(0, ctx.make<CompareOp>(attr, broadcastOperand(ctx, 0),
                                              broadcastOperand(ctx, 1)));
}

/// Equal: of numbers, or of strings (ops/Strings.cpp).
LogicalResult importEqual(NodeContext &ctx) {
  if (ctx.isString(0) || ctx.isString(1))
    return compareStrings(ctx);
  return importCompare<ComparePredicate::eq>(ctx);
}

/// Pow: the exponent may have another type than the base (opset 12+), and
/// integer bases are computed in f64 and cast back.
LogicalResult importPow(NodeContext &ctx) {
  Value base = broadcastOperand(ctx, 0), exponent = broadcastOperand(ctx, 1);
  if (!base || !exponent)
    return failure();
  Type baseType = NodeContext::elementTypeOf(base);
  Type computeType = isa<FloatType>(baseType) ? baseType
                                              : ctx.b.getF64Type();
  Value lhs = ctx.cast(base, computeType);
  Value rhs = ctx.cast(exponent, computeType);
  Value result = ctx.make<PowOp>(lhs, rhs);
  return ctx.setOutput(0, ctx.cast(result, baseType));
}

/// Mod: fmod = 1 takes the sign of the dividend (C fmod); fmod = 0 (ints
/// only) takes the sign of the divisor (Python %).
LogicalResult importMod(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  Value rem = ctx.make<RemOp>(a, b);
  if (ctx.intAttr("fmod", 0) == 1)
    return ctx.setOutput(0, rem);
  bool isFloat = isa<FloatType>(NodeContext::elementTypeOf(a));
  if (isFloat && ctx.opset < 28)
    return ctx.invalid("Mod with fmod = 0 requires integer inputs before opset 28");
  Value zero = ctx.scalarLike(a, 0);
  auto pred = [&](ComparePredicate p) {
    return ComparePredicateAttr::get(ctx.context(), p);
  };
  if (isFloat) {
    // Opset 28: A - floor(A / B) * B, from the truncated remainder. A zero
    // remainder takes B's sign; one whose sign differs from B's moves by B
    // (NaN and infinities follow from fmod and the addition).
    Value bNegative = ctx.make<CompareOp>(pred(ComparePredicate::lt), b, zero);
    Value remZero = ctx.make<CompareOp>(pred(ComparePredicate::eq), rem, zero);
    Value remNegative = ctx.make<CompareOp>(pred(ComparePredicate::lt), rem, zero);
    Value moved = ctx.make<SelectOp>(ctx.make<XorOp>(remNegative, bNegative),
                                     ctx.make<AddOp>(rem, b), rem);
    Value signedZero =
        ctx.make<SelectOp>(bNegative, ctx.scalarLike(a, -0.0), zero);
    return ctx.setOutput(0, ctx.make<SelectOp>(remZero, signedZero, moved));
  }
  Value remNonZero = ctx.make<CompareOp>(pred(ComparePredicate::ne), rem, zero);
  Value remNegative = ctx.make<CompareOp>(pred(ComparePredicate::lt), rem, zero);
  Value divisorNegative =
      ctx.make<CompareOp>(pred(ComparePredicate::lt), b, zero);
  Value signsDiffer = ctx.make<XorOp>(remNegative, divisorNegative);
  Value adjust = ctx.make<AndOp>(remNonZero, signsDiffer);
  return ctx.setOutput(
      0, ctx.make<SelectOp>(adjust, ctx.make<AddOp>(rem, b), rem));
}

/// Max, Min, Sum: fold the inputs pairwise (with broadcasting).
template <typename OpTy> LogicalResult importVariadic(NodeContext &ctx) {
  if (ctx.numInputs() == 0)
    return ctx.invalid("needs at least one input");
  Value acc = ctx.input(0);
  for (size_t i = 1; i < ctx.numInputs(); ++i)
    acc = ctx.make<OpTy>(acc, ctx.input(i));
  return ctx.setOutput(0, acc);
}

LogicalResult importMean(NodeContext &ctx) {
  if (ctx.numInputs() == 0)
    return ctx.invalid("needs at least one input");
  Value acc = ctx.input(0);
  for (size_t i = 1; i < ctx.numInputs(); ++i)
    acc = ctx.make<AddOp>(acc, ctx.input(i));
  return ctx.setOutput(
      0, ctx.make<DivOp>(acc, ctx.scalarLike(acc, ctx.numInputs())));
}

LogicalResult importWhere(NodeContext &ctx) {
  return ctx.setOutput(0, ctx.make<SelectOp>(ctx.input(0), ctx.input(1),
                                             ctx.input(2)));
}

/// The element type attribute `to` names, or null (recorded) when kiln has
/// none.
Type targetType(NodeContext &ctx, llvm::StringRef what) {
  int to = static_cast<int>(ctx.intAttr("to", 0));
  Type element = elementTypeOf(ctx.context(), to);
  if (!element)
    ctx.unsupported(what + " to " + dataTypeName(to) + " (kiln has no such element type)");
  return element;
}

/// Cast / CastLike to `element` with their attributes: `saturate` (opset
/// 19; on by default) for the float8 types, and `round_mode` (opset 24)
/// for float8e8m0, of which kiln has ONNX's default, "up". Both are read
/// for every target: ONNX ignores them for the others.
LogicalResult castWithAttributes(NodeContext &ctx, Type element) {
  bool saturateAttr = ctx.intAttr("saturate", 1) != 0;
  bool saturate = isLowPrecisionFloat(element) && !isa<Float4E2M1FNType>(element) &&
                  saturateAttr;
  std::string mode = ctx.stringAttr("round_mode", "up");
  if (isa<Float8E8M0FNUType>(element)) {
    if (mode != "up")
      return ctx.unsupported("cast to float8e8m0 with round_mode '" + mode +
                             "' (kiln rounds up, ONNX's default)");
  }
  return ctx.setOutput(0, ctx.cast(ctx.input(0), element, saturate));
}

LogicalResult importCast(NodeContext &ctx) {
  int to = static_cast<int>(ctx.intAttr("to", 0));
  if (to == onnx::TensorProto::STRING || ctx.isString(0))
    return castStrings(ctx, to, to == onnx::TensorProto::STRING ? Type() : elementTypeOf(ctx.context(), to));
  Type element = targetType(ctx, "cast");
  return element ? castWithAttributes(ctx, element) : failure();
}

/// BitCast (opset 26): the same bits read as another type of the same width.
LogicalResult importBitCast(NodeContext &ctx) {
  Type element = targetType(ctx, "bitcast");
  return element ? ctx.setOutput(0, ctx.bitcast(ctx.input(0), element)) : failure();
}

LogicalResult importCastLike(NodeContext &ctx) {
  Value like = ctx.input(1);
  if (!like)
    return failure();
  if (ctx.isString(0) || ctx.isString(1))
    return castStrings(ctx, ctx.isString(1) ? onnx::TensorProto::STRING : 0,
                       NodeContext::elementTypeOf(like));
  return castWithAttributes(ctx, NodeContext::elementTypeOf(like));
}

} // namespace

void registerElementwiseOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Identity", 1, any, importIdentity);
  r.add("Abs", 1, any, importUnary<AbsOp>);
  r.add("Neg", 1, any, importUnary<NegOp>);
  r.add("Exp", 1, any, importUnary<ExpOp>);
  r.add("Log", 1, any, importUnary<LogOp>);
  r.add("Sqrt", 1, any, importUnary<SqrtOp>);
  r.add("Reciprocal", 1, any, importUnary<ReciprocalOp>);
  r.add("Relu", 1, any, importUnary<ReluOp>);
  r.add("Sigmoid", 1, any, importUnary<SigmoidOp>);
  r.add("Tanh", 1, any, importUnary<TanhOp>);
  r.add("Erf", 9, any, importUnary<ErfOp>);
  r.add("Sin", 7, any, importUnary<SinOp>);
  r.add("Cos", 7, any, importUnary<CosOp>);
  r.add("Atan", 7, any, importUnary<AtanOp>);
  r.add("Floor", 1, any, importUnary<FloorOp>);
  r.add("Ceil", 1, any, importUnary<CeilOp>);
  r.add("Round", 11, any, importUnary<RoundOp>);
  r.add("Sign", 9, any, importUnary<SignOp>);
  r.add("Not", 1, any, importUnary<NotOp>);

  r.add("Add", 1, any, importBinary<AddOp>);
  r.add("Sub", 1, any, importBinary<SubOp>);
  r.add("Mul", 1, any, importBinary<MulOp>);
  r.add("Div", 1, any, importBinary<DivOp>);
  r.add("Pow", 1, any, importPow);
  r.add("Mod", 10, any, importMod);
  r.add("And", 1, any, importBinary<AndOp>);
  r.add("Or", 1, any, importBinary<OrOp>);
  r.add("Xor", 1, any, importBinary<XorOp>);
  // kiln's logical ops are bitwise on integers.
  r.add("BitwiseAnd", 18, any, importBinary<AndOp>);
  r.add("BitwiseOr", 18, any, importBinary<OrOp>);
  r.add("BitwiseXor", 18, any, importBinary<XorOp>);
  r.add("BitwiseNot", 18, any, importUnary<NotOp>);
  r.add("Equal", 1, any, importEqual);
  r.add("Less", 1, any, importCompare<ComparePredicate::lt>);
  r.add("LessOrEqual", 12, any, importCompare<ComparePredicate::le>);
  r.add("Greater", 1, any, importCompare<ComparePredicate::gt>);
  r.add("GreaterOrEqual", 12, any, importCompare<ComparePredicate::ge>);

  r.add("Max", 1, any, importVariadic<MaxOp>);
  r.add("Min", 1, any, importVariadic<MinOp>);
  r.add("Sum", 1, any, importVariadic<AddOp>);
  r.add("Mean", 1, any, importMean);
  r.add("Where", 9, any, importWhere);
  r.add("Cast", 1, any, importCast);
  r.add("CastLike", 15, any, importCastLike);
  r.add("BitCast", 26, any, importBitCast);
}

} // namespace kiln::onnx_frontend
