//===- KilnElementwiseOps.cpp - constants and elementwise ops -------------===//
//
// Verifiers and folders of the elementwise family. Folders only fire when
// the folded value has exactly the result's type: a fold never changes a
// type, so a broadcast (`x + 0` where 0 is bigger than x) is left alone.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  // Elements attributes always have a static shape; the result type is
  // inferred from the value, so only the generic form can get it wrong.
  Type valueType = getValue().getType();
  if (valueType != getType())
    return emitOpError("result type ")
           << getType() << " differs from the value's type " << valueType;
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// unary
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  // neg(neg(x)) -> x
  if (auto inner = getInput().getDefiningOp<NegOp>())
    if (inner.getInput().getType() == getType())
      return inner.getInput();
  if (isa<FloatType>(getType().getElementType()))
    return constFoldUnaryOp<FloatAttr, APFloat, void>(adaptor.getOperands(),
                                       [](const APFloat &a) { return -a; });
  return constFoldUnaryOp<IntegerAttr, APInt, void>(adaptor.getOperands(),
                                       [](const APInt &a) { return -a; });
}

LogicalResult ClipOp::verify() {
  double lo = getMin().convertToDouble(), hi = getMax().convertToDouble();
  if (std::isnan(lo) || std::isnan(hi))
    return emitOpError("bounds must not be NaN");
  if (lo > hi)
    return emitOpError("min (") << lo << ") is greater than max (" << hi << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// binary
//===----------------------------------------------------------------------===//

/// True when `attr` is a splat whose every element equals `value`.
static bool isSplatOf(Attribute attr, int64_t value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (isa<FloatType>(elementType))
    return splat.getSplatValue<APFloat>().isExactlyValue(
        static_cast<double>(value));
  if (isa<IntegerType>(elementType))
    return splat.getSplatValue<APInt>().getSExtValue() == value;
  return false;
}

/// Folds a same-typed binary op on two constants with `floatFn` or `intFn`.
template <typename FloatFn, typename IntFn>
static Attribute foldConstants(Operation *op, ArrayRef<Attribute> operands,
                               FloatFn floatFn, IntFn intFn) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType.hasStaticShape() ||
      op->getOperand(0).getType() != resultType ||
      op->getOperand(1).getType() != resultType)
    return {};
  if (isa<FloatType>(resultType.getElementType()))
    return constFoldBinaryOp<FloatAttr>(operands, resultType, floatFn);
  if (resultType.getElementType().isInteger(1))
    return {};
  return constFoldBinaryOp<IntegerAttr>(operands, resultType, intFn);
}

/// True when broadcasting `rhs` against `lhs` cannot grow `lhs`: every
/// aligned dim of `rhs` is 1 or the same static size. (A dynamic dim of
/// `lhs` might be 1 at run time and stretch.)
static bool broadcastsInto(RankedTensorType rhs, RankedTensorType lhs) {
  if (rhs.getRank() > lhs.getRank())
    return false;
  int64_t offset = lhs.getRank() - rhs.getRank();
  for (int64_t i = 0; i < rhs.getRank(); ++i) {
    int64_t r = rhs.getDimSize(i), l = lhs.getDimSize(offset + i);
    if (r != 1 && (ShapedType::isDynamic(l) || r != l))
      return false;
  }
  return true;
}

/// x op identity -> x, when that cannot change the type or the shape.
static OpFoldResult foldRightIdentity(Value lhs, Value rhs, Attribute rhsValue,
                                      Type result, int64_t identity) {
  if (lhs.getType() == result && isSplatOf(rhsValue, identity) &&
      broadcastsInto(cast<RankedTensorType>(rhs.getType()),
                     cast<RankedTensorType>(lhs.getType())))
    return lhs;
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldRightIdentity(getLhs(), getRhs(), adaptor.getRhs(), getType(), 0))
    return r;
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) { return a + b; },
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldRightIdentity(getLhs(), getRhs(), adaptor.getRhs(), getType(), 0))
    return r;
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) { return a - b; },
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldRightIdentity(getLhs(), getRhs(), adaptor.getRhs(), getType(), 1))
    return r;
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) { return a * b; },
      [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  // Only x / 1: folding constant division would have to reproduce the
  // run-time semantics of division by zero exactly.
  return foldRightIdentity(getLhs(), getRhs(), adaptor.getRhs(), getType(), 1);
}

//===----------------------------------------------------------------------===//
// select and cast
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::verify() {
  if (getOnTrue().getType().getElementType() !=
      getOnFalse().getType().getElementType())
    return emitOpError("on_true and on_false element types differ: ")
           << getOnTrue().getType().getElementType() << " vs "
           << getOnFalse().getType().getElementType();
  return success();
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  auto condition = dyn_cast_or_null<SplatElementsAttr>(adaptor.getCondition());
  if (!condition)
    return {};
  Value chosen = condition.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  if (chosen.getType() == getType())
    return chosen;
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}
