//===- KilnConstantFolding.cpp - evaluate kiln ops on constants -----------===//

#include "dialects/kiln/IR/KilnConstantFolding.h"
#include "dialects/kiln/Utils/ShapeMath.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;

namespace kiln {

SmallVector<DenseElementsAttr> denseOperands(ArrayRef<Attribute> operands) {
  SmallVector<DenseElementsAttr> out;
  for (Attribute a : operands) {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(a);
    if (!dense || dense.getNumElements() > kMaxFoldedElements)
      return {};
    out.push_back(dense);
  }
  return out;
}

static bool foldable(RankedTensorType type) {
  return type && type.hasStaticShape() &&
         type.getNumElements() <= kMaxFoldedElements;
}


DenseElementsAttr foldBroadcast(
    RankedTensorType resultType, ArrayRef<DenseElementsAttr> operands,
    llvm::function_ref<Attribute(ArrayRef<Attribute>)> fn) {
  if (!foldable(resultType) || operands.empty())
    return {};
  ArrayRef<int64_t> shape = resultType.getShape();
  int64_t rank = shape.size();
  SmallVector<SmallVector<Attribute>> values;
  SmallVector<SmallVector<int64_t>> operandStrides;
  for (DenseElementsAttr operand : operands) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getRank() > rank)
      return {};
    values.emplace_back(operand.getValues<Attribute>());
    // Stride 0 on broadcast dims, aligned at the trailing dim.
    shape::Dims own = shape::strides(
        shape::Dims(type.getShape().begin(), type.getShape().end()));
    SmallVector<int64_t> aligned(rank, 0);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.getDimSize(d) != 1)
        aligned[rank - type.getRank() + d] = own[d];
    operandStrides.push_back(aligned);
  }
  SmallVector<Attribute> result;
  result.reserve(resultType.getNumElements());
  SmallVector<int64_t> index(rank, 0);
  SmallVector<Attribute> args(operands.size());
  for (int64_t flat = 0; flat < resultType.getNumElements(); ++flat) {
    for (size_t k = 0; k < operands.size(); ++k) {
      int64_t offset = 0;
      for (int64_t d = 0; d < rank; ++d)
        offset += index[d] * operandStrides[k][d];
      args[k] = operands[k].isSplat() ? values[k][0] : values[k][offset];
    }
    Attribute value = fn(args);
    if (!value)
      return {};
    result.push_back(value);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, result);
}

DenseElementsAttr foldGather(RankedTensorType resultType,
                             DenseElementsAttr source,
                             llvm::function_ref<int64_t(ArrayRef<int64_t>)> map) {
  if (!foldable(resultType) || !source)
    return {};
  SmallVector<Attribute> values(source.getValues<Attribute>());
  ArrayRef<int64_t> shape = resultType.getShape();
  int64_t rank = shape.size();
  SmallVector<Attribute> result;
  result.reserve(resultType.getNumElements());
  SmallVector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < resultType.getNumElements(); ++flat) {
    int64_t from = map(index);
    if (from < 0 || from >= static_cast<int64_t>(values.size()))
      return {};
    result.push_back(source.isSplat() ? values[0] : values[from]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, result);
}

Attribute castElement(Attribute value, Type type) {
  if (auto f = dyn_cast<FloatAttr>(value)) {
    APFloat v = f.getValue();
    if (auto floatType = dyn_cast<FloatType>(type)) {
      bool lost;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      return FloatAttr::get(type, v);
    }
    if (type.isInteger(1))
      return BoolAttr::get(type.getContext(), !v.isZero());
    if (v.isNaN() || v.isInfinity())
      return {}; // undefined in the source frameworks: leave to run time
    APSInt result(type.getIntOrFloatBitWidth(), type.isUnsignedInteger());
    bool exact;
    if (v.convertToInteger(result, APFloat::rmTowardZero, &exact) ==
        APFloat::opInvalidOp)
      return {};
    return IntegerAttr::get(type, result);
  }
  auto i = dyn_cast<IntegerAttr>(value);
  if (!i)
    return {};
  bool isUnsigned = i.getType().isInteger(1) || i.getType().isUnsignedInteger();
  APInt v = i.getValue();
  if (type.isInteger(1))
    return BoolAttr::get(type.getContext(), !v.isZero());
  if (auto floatType = dyn_cast<FloatType>(type)) {
    APFloat f(floatType.getFloatSemantics());
    f.convertFromAPInt(v, /*IsSigned=*/!isUnsigned, APFloat::rmNearestTiesToEven);
    return FloatAttr::get(type, f);
  }
  unsigned width = type.getIntOrFloatBitWidth();
  return IntegerAttr::get(type, isUnsigned ? v.zextOrTrunc(width)
                                           : v.sextOrTrunc(width));
}

} // namespace kiln
