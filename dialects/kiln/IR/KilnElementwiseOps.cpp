//===- KilnElementwiseOps.cpp - constants and elementwise ops -------------===//
//
// Verifiers and folders of the elementwise family. Folders only fire when
// the folded value has exactly the result's type: a fold never changes a
// type, so a broadcast (`x + 0` where 0 is bigger than x) is left alone.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnConstantFolding.h"
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

/// Folds a binary op on two constants (with broadcasting) by applying
/// `floatFn` or `intFn` element by element; either may decline (nullopt).
template <typename FloatFn, typename IntFn>
static Attribute foldConstants(Operation *op, ArrayRef<Attribute> operands,
                               FloatFn floatFn, IntFn intFn) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<DenseElementsAttr> dense = denseOperands(operands);
  if (dense.size() != 2 || resultType.getElementType().isInteger(1))
    return {};
  Type element = resultType.getElementType();
  return foldBroadcast(resultType, dense, [&](ArrayRef<Attribute> args) -> Attribute {
    if (isa<FloatType>(element)) {
      std::optional<APFloat> r = floatFn(cast<FloatAttr>(args[0]).getValue(),
                                         cast<FloatAttr>(args[1]).getValue());
      return r ? FloatAttr::get(element, *r) : Attribute();
    }
    std::optional<APInt> r = intFn(cast<IntegerAttr>(args[0]).getValue(),
                                   cast<IntegerAttr>(args[1]).getValue());
    return r ? IntegerAttr::get(element, *r) : Attribute();
  });
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
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> { return a + b; },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldRightIdentity(getLhs(), getRhs(), adaptor.getRhs(), getType(), 0))
    return r;
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> { return a - b; },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldRightIdentity(getLhs(), getRhs(), adaptor.getRhs(), getType(), 1))
    return r;
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> { return a * b; },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a * b; });
}

// Shape arithmetic (a window's padding, torch's exporter's Mod and Max
// of dims) folds, so that the shapes it computes stay static.
OpFoldResult RemOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = getType().getElementType().isUnsignedInteger();
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        APFloat r = a;
        r.mod(b);
        return r;
      },
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        // What the lowering gives (integerDivision): x % 0 and the signed
        // INT_MIN % -1 are 0.
        if (b.isZero() || (!isUnsigned && a.isMinSignedValue() && b.isAllOnes()))
          return APInt::getZero(a.getBitWidth());
        return isUnsigned ? a.urem(b) : a.srem(b);
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = getType().getElementType().isUnsignedInteger();
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return llvm::maximum(a, b);
      },
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return isUnsigned ? llvm::APIntOps::umax(a, b) : llvm::APIntOps::smax(a, b);
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = getType().getElementType().isUnsignedInteger();
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return llvm::minimum(a, b);
      },
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return isUnsigned ? llvm::APIntOps::umin(a, b) : llvm::APIntOps::smin(a, b);
      });
}

/// Folds a logical op on two boolean constants (with broadcasting).
template <typename Fn>
static Attribute foldBooleans(Operation *op, ArrayRef<Attribute> operands, Fn fn) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType.getElementType().isInteger(1))
    return {};
  SmallVector<DenseElementsAttr> dense = denseOperands(operands);
  if (dense.size() != 2)
    return {};
  return foldBroadcast(resultType, dense, [&](ArrayRef<Attribute> args) -> Attribute {
    bool a = cast<IntegerAttr>(args[0]).getValue().getBoolValue();
    bool b = cast<IntegerAttr>(args[1]).getValue().getBoolValue();
    return BoolAttr::get(op->getContext(), fn(a, b));
  });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  // ~ on every bit: logical not on i1, bitwise not on integers.
  return constFoldUnaryOp<IntegerAttr, APInt, void>(adaptor.getOperands(),
                                                    [](const APInt &a) { return ~a; });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  return foldBooleans(*this, adaptor.getOperands(), [](bool a, bool b) { return a && b; });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  return foldBooleans(*this, adaptor.getOperands(), [](bool a, bool b) { return a || b; });
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldBooleans(*this, adaptor.getOperands(), [](bool a, bool b) { return a != b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldRightIdentity(getLhs(), getRhs(), adaptor.getRhs(), getType(), 1))
    return r;
  bool isUnsigned = getType().getElementType().isUnsignedInteger();
  // As the lowering defines them (integerDivision): x / 0 is 0 and the
  // signed INT_MIN / -1 is INT_MIN.
  return foldConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> { return a / b; },
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero())
          return APInt::getZero(a.getBitWidth());
        if (isUnsigned)
          return a.udiv(b);
        if (a.isMinSignedValue() && b.isAllOnes())
          return a;
        return a.sdiv(b);
      });
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  SmallVector<DenseElementsAttr> dense = denseOperands(adaptor.getOperands());
  if (dense.size() != 2)
    return {};
  ComparePredicate predicate = getPredicate();
  Type i1 = getType().getElementType();
  return foldBroadcast(getType(), dense, [&](ArrayRef<Attribute> args) -> Attribute {
    bool result = false;
    if (auto lf = dyn_cast<FloatAttr>(args[0])) {
      APFloat::cmpResult c = lf.getValue().compare(cast<FloatAttr>(args[1]).getValue());
      bool unordered = c == APFloat::cmpUnordered;
      switch (predicate) {
      case ComparePredicate::eq: result = c == APFloat::cmpEqual; break;
      case ComparePredicate::ne: result = c != APFloat::cmpEqual; break;
      case ComparePredicate::lt: result = c == APFloat::cmpLessThan; break;
      case ComparePredicate::le: result = !unordered && c != APFloat::cmpGreaterThan; break;
      case ComparePredicate::gt: result = c == APFloat::cmpGreaterThan; break;
      case ComparePredicate::ge: result = !unordered && c != APFloat::cmpLessThan; break;
      }
    } else {
      const APInt &l = cast<IntegerAttr>(args[0]).getValue();
      const APInt &r = cast<IntegerAttr>(args[1]).getValue();
      bool isBool = l.getBitWidth() == 1 ||
                    getLhs().getType().getElementType().isUnsignedInteger();
      switch (predicate) {
      case ComparePredicate::eq: result = l == r; break;
      case ComparePredicate::ne: result = l != r; break;
      case ComparePredicate::lt: result = isBool ? l.ult(r) : l.slt(r); break;
      case ComparePredicate::le: result = isBool ? l.ule(r) : l.sle(r); break;
      case ComparePredicate::gt: result = isBool ? l.ugt(r) : l.sgt(r); break;
      case ComparePredicate::ge: result = isBool ? l.uge(r) : l.sge(r); break;
      }
    }
    return IntegerAttr::get(i1, result ? 1 : 0);
  });
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
  SmallVector<DenseElementsAttr> dense = denseOperands(adaptor.getOperands());
  if (dense.size() == 3)
    return foldBroadcast(getType(), dense, [](ArrayRef<Attribute> args) {
      return cast<IntegerAttr>(args[0]).getValue().isZero() ? args[2] : args[1];
    });
  auto condition = dyn_cast_or_null<SplatElementsAttr>(adaptor.getCondition());
  if (!condition)
    return {};
  Value chosen = condition.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  Value other = condition.getSplatValue<bool>() ? getOnFalse() : getOnTrue();
  if (chosen.getType() != getType())
    return {};
  // With dynamic dims the same type is not the same shape: the others
  // may stretch a dim of the chosen operand that is 1 at run time.
  auto chosenType = cast<RankedTensorType>(chosen.getType());
  if (!broadcastsInto(getCondition().getType(), chosenType) ||
      !broadcastsInto(cast<RankedTensorType>(other.getType()), chosenType))
    return {};
  return chosen;
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  SmallVector<DenseElementsAttr> dense = denseOperands(adaptor.getOperands());
  if (dense.size() != 1)
    return {};
  Type element = getType().getElementType();
  // Conversions into the storage-only types round and saturate their own
  // way (the lowering's): left to run time.
  if (isLowPrecision(element) || (getSaturate() && isa<FloatType>(element)))
    return {};
  return foldBroadcast(getType(), dense, [&](ArrayRef<Attribute> args) {
    return castElement(args[0], element);
  });
}

LogicalResult BitcastOp::verify() {
  Type from = getInput().getType().getElementType(), to = getType().getElementType();
  unsigned fromBits = from.getIntOrFloatBitWidth(), toBits = to.getIntOrFloatBitWidth();
  if (fromBits == 1 ? toBits != 8 || !isa<IntegerType>(to) : fromBits != toBits)
    return emitOpError("bit widths differ: ") << from << " to " << to;
  return success();
}
