//===- KilnShapeOps.cpp - data movement ops -------------------------------===//
//
// Shape inference and folders of reshape, transpose, expand, concat, split,
// slice, gather and pad. Canonicalisation patterns that rewrite chains of
// these ops live in dialects/kiln/Transforms.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnConstantFolding.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/ShapeEntries.h"
#include "dialects/kiln/Utils/ShapeMath.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;

static shape::Dims toDims(ArrayRef<int64_t> dims) {
  return shape::Dims(dims.begin(), dims.end());
}

static RankedTensorType rankedOf(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

/// Checks that `axis` indexes a dim of a rank-`rank` tensor.
static LogicalResult checkAxis(std::optional<Location> loc, int64_t axis,
                               int64_t rank) {
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  return success();
}

/// Folds an op to its input when it provably changes nothing.
static OpFoldResult foldIdentity(Value input, Type result) {
  auto type = dyn_cast<RankedTensorType>(result);
  if (type && type.hasStaticShape() && input.getType() == type)
    return input;
  return {};
}

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedOf(adaptor.getInput());
  if (!input)
    return emitOptionalError(loc, "reshape expects a ranked tensor operand");
  shape::ShapeOrError result =
      shape::reshape(toDims(input.getShape()), toDims(adaptor.getShape()));
  if (!result.ok())
    return emitOptionalError(loc, "reshape: ", result.error);
  inferred.push_back(
      RankedTensorType::get(result.dims, input.getElementType()));
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult same = foldIdentity(getInput(), getType()))
    return same;
  auto constant = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (constant && getType().hasStaticShape())
    return constant.reshape(getType());
  return {};
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedOf(adaptor.getInput());
  if (!input)
    return emitOptionalError(loc, "transpose expects a ranked tensor operand");
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return emitOptionalError(loc, "permutation has ", perm.size(),
                             " entries for rank ", input.getRank());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> dims;
  for (int64_t p : perm) {
    if (p < 0 || p >= input.getRank() || seen[p])
      return emitOptionalError(loc, "permutation is not a permutation of [0, ",
                               input.getRank(), ")");
    seen[p] = true;
    dims.push_back(input.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<DenseElementsAttr> dense = denseOperands(adaptor.getOperands());
  if (dense.size() == 1) {
    shape::Dims strides = shape::strides(toDims(getInput().getType().getShape()));
    return foldGather(getType(), dense[0], [&](ArrayRef<int64_t> index) {
      int64_t flat = 0;
      for (size_t d = 0; d < index.size(); ++d)
        flat += index[d] * strides[perm[d]];
      return flat;
    });
  }
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return {};
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// expand
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedOf(adaptor.getInput());
  if (!input)
    return emitOptionalError(loc, "expand expects a ranked tensor operand");
  for (int64_t s : adaptor.getShape())
    if (s < 0)
      return emitOptionalError(loc, "expand shape entries must not be "
                                    "negative, got ", s);
  shape::ShapeOrError result =
      shape::broadcast({toDims(input.getShape()), toDims(adaptor.getShape())});
  if (!result.ok())
    return emitOptionalError(loc, "expand: ", result.error);
  inferred.push_back(
      RankedTensorType::get(result.dims, input.getElementType()));
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult same = foldIdentity(getInput(), getType()))
    return same;
  SmallVector<DenseElementsAttr> dense = denseOperands(adaptor.getOperands());
  if (dense.size() != 1)
    return {};
  return foldBroadcast(getType(), dense,
                       [](ArrayRef<Attribute> args) { return args[0]; });
}

//===----------------------------------------------------------------------===//
// concat and split
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "concat needs at least one input");
  RankedTensorType first = rankedOf(adaptor.getInputs().front());
  if (!first)
    return emitOptionalError(loc, "concat expects ranked tensor operands");
  int64_t rank = first.getRank();
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (failed(checkAxis(loc, axis, rank)))
    return failure();
  shape::Dims dims = toDims(first.getShape());
  dims[axis] = 0;
  for (auto [index, value] : llvm::enumerate(adaptor.getInputs())) {
    RankedTensorType type = rankedOf(value);
    if (!type || type.getRank() != rank)
      return emitOptionalError(loc, "concat input ", index, " has rank ",
                               type ? type.getRank() : -1, ", expected ", rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = type.getDimSize(d);
      if (d == axis) {
        dims[d] = ShapedType::isDynamic(size) || ShapedType::isDynamic(dims[d])
                      ? ShapedType::kDynamic
                      : dims[d] + size;
      } else if (ShapedType::isDynamic(dims[d])) {
        dims[d] = size;
      } else if (!ShapedType::isDynamic(size) && size != dims[d]) {
        return emitOptionalError(loc, "concat input ", index, " has size ",
                                 size, " in dim ", d, ", expected ", dims[d]);
      }
    }
  }
  inferred.push_back(RankedTensorType::get(dims, first.getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  SmallVector<DenseElementsAttr> dense = denseOperands(adaptor.getOperands());
  if (dense.size() != getInputs().size() || !getType().hasStaticShape())
    return {};
  // Concatenate the element lists slab by slab along the axis.
  int64_t axis = static_cast<int64_t>(getAxis());
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr d : dense) {
    if (d.isSplat())
      values.emplace_back(d.getNumElements(), d.getSplatValue<Attribute>());
    else
      values.emplace_back(d.getValues<Attribute>());
  }
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [d, v] : llvm::zip(dense, values)) {
      int64_t slab = cast<RankedTensorType>(d.getType()).getDimSize(axis) * inner;
      result.append(v.begin() + o * slab, v.begin() + (o + 1) * slab);
    }
  return DenseElementsAttr::get(getType(), result);
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedOf(adaptor.getInput());
  if (!input)
    return emitOptionalError(loc, "split expects a ranked tensor operand");
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (failed(checkAxis(loc, axis, input.getRank())))
    return failure();
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return emitOptionalError(loc, "split needs at least one size");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return emitOptionalError(loc, "split sizes must not be negative, got ",
                               s);
    total += s;
  }
  int64_t dim = input.getDimSize(axis);
  if (!ShapedType::isDynamic(dim) && total != dim)
    return emitOptionalError(loc, "split sizes add up to ", total,
                             " but dim ", axis, " has ", dim);
  for (int64_t s : sizes) {
    SmallVector<int64_t> dims(input.getShape());
    dims[axis] = s;
    inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedOf(adaptor.getInput());
  if (!input)
    return emitOptionalError(loc, "slice expects a ranked tensor operand");
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds(),
                    steps = adaptor.getSteps();
  size_t rank = input.getRank();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return emitOptionalError(loc, "slice needs one start, end and step per "
                                  "dim (", rank, "), got ", starts.size(),
                             ", ", ends.size(), " and ", steps.size());
  SmallVector<int64_t> dims;
  for (size_t d = 0; d < rank; ++d) {
    if (steps[d] == 0)
      return emitOptionalError(loc, "slice step of dim ", d, " is zero");
    dims.push_back(shape::sliceExtent(input.getDimSize(d), starts[d], ends[d],
                                      steps[d]));
  }
  inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  SmallVector<DenseElementsAttr> dense = denseOperands(adaptor.getOperands());
  RankedTensorType inType = getInput().getType();
  if (dense.size() == 1 && inType.hasStaticShape()) {
    ArrayRef<int64_t> inShape = inType.getShape();
    SmallVector<int64_t> first;
    shape::Dims strides = shape::strides(toDims(inShape));
    for (size_t d = 0; d < inShape.size(); ++d) {
      // The first index taken: the clamped start, as in shape::sliceExtent.
      int64_t dim = inShape[d], start = getStarts()[d];
      if (start < 0)
        start = start < -dim ? -1 : start + dim;
      start = getSteps()[d] > 0 ? std::clamp<int64_t>(start, 0, dim)
                                : std::clamp<int64_t>(start, -1, dim - 1);
      first.push_back(start);
    }
    return foldGather(getType(), dense[0], [&](ArrayRef<int64_t> index) {
      int64_t flat = 0;
      for (size_t d = 0; d < index.size(); ++d)
        flat += (first[d] + index[d] * getSteps()[d]) * strides[d];
      return flat;
    });
  }
  if (llvm::any_of(getSteps(), [](int64_t s) { return s != 1; }))
    return {};
  if (llvm::any_of(getStarts(), [](int64_t s) { return s != 0; }))
    return {};
  return foldIdentity(getInput(), getType());
}

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType data = rankedOf(adaptor.getData());
  RankedTensorType indices = rankedOf(adaptor.getIndices());
  if (!data || !indices)
    return emitOptionalError(loc, "gather expects ranked tensor operands");
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (failed(checkAxis(loc, axis, data.getRank())))
    return failure();
  SmallVector<int64_t> dims(data.getShape().take_front(axis));
  llvm::append_range(dims, indices.getShape());
  llvm::append_range(dims, data.getShape().drop_front(axis + 1));
  inferred.push_back(RankedTensorType::get(dims, data.getElementType()));
  return success();
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  SmallVector<DenseElementsAttr> dense = denseOperands(adaptor.getOperands());
  RankedTensorType dataType = getData().getType();
  if (dense.size() != 2 || !dataType.hasStaticShape())
    return {};
  int64_t axis = static_cast<int64_t>(getAxis());
  ArrayRef<int64_t> shape = dataType.getShape();
  shape::Dims strides = shape::strides(toDims(shape));
  SmallVector<int64_t> indices;
  for (const APInt &v : dense[1].getValues<APInt>()) {
    int64_t i = v.getSExtValue();
    if (i < 0)
      i += shape[axis];
    if (i < 0 || i >= shape[axis])
      return {}; // out of range: a run-time error, not a fold
    indices.push_back(i);
  }
  RankedTensorType indicesType = getIndices().getType();
  int64_t indicesRank = indicesType.getRank();
  shape::Dims indexStrides = shape::strides(toDims(indicesType.getShape()));
  return foldGather(getType(), dense[0], [&](ArrayRef<int64_t> index) {
    int64_t flat = 0, which = 0;
    for (int64_t d = 0; d < axis; ++d)
      flat += index[d] * strides[d];
    for (int64_t k = 0; k < indicesRank; ++k)
      which += index[axis + k] * indexStrides[k];
    flat += indices[which] * strides[axis];
    for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
      flat += index[d + indicesRank - 1] * strides[d];
    return flat;
  });
}

//===----------------------------------------------------------------------===//
// pad
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedOf(adaptor.getInput());
  if (!input)
    return emitOptionalError(loc, "pad expects a ranked tensor operand");
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return emitOptionalError(loc, "pad needs ", 2 * rank, " pads for rank ",
                             rank, ", got ", pads.size());
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d);
    if (ShapedType::isDynamic(size)) {
      dims.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t padded = size + pads[d] + pads[d + rank];
    if (padded < 0)
      return emitOptionalError(loc, "pads crop dim ", d, " of size ", size,
                               " below zero");
    dims.push_back(padded);
  }
  inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  return success();
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  if (llvm::all_of(getPads(), [](int64_t p) { return p == 0; }) &&
      getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// run-time shapes
//===----------------------------------------------------------------------===//

/// The entries of a 1-D shape operand known when compiling (knownShapeEntry:
/// constants, and static dims through shape_of and the ops that move or
/// combine its entries), kDynamic elsewhere. Fails when the operand is not
/// a 1-D tensor of static length.
static FailureOr<SmallVector<int64_t>> shapeOperand(std::optional<Location> loc,
                                                     Value shape) {
  RankedTensorType type = rankedOf(shape);
  if (!type || type.getRank() != 1 || type.isDynamicDim(0))
    return emitOptionalError(loc, "a shape operand must be a 1-D tensor of static length");
  SmallVector<int64_t> entries;
  for (int64_t i = 0; i < type.getDimSize(0); ++i)
    entries.push_back(knownShapeEntry(shape, i).value_or(ShapedType::kDynamic));
  return entries;
}

LogicalResult ShapeOfOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedOf(adaptor.getInput());
  if (!input)
    return emitOptionalError(loc, "shape_of expects a ranked tensor operand");
  inferred.push_back(
      RankedTensorType::get({input.getRank()}, IntegerType::get(context, 64)));
  return success();
}

OpFoldResult ShapeOfOp::fold(FoldAdaptor) {
  RankedTensorType input = getInput().getType();
  if (!input.hasStaticShape())
    return {};
  return DenseElementsAttr::get(getType(), input.getShape());
}

LogicalResult IotaOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<SmallVector<int64_t>> dims = shapeOperand(loc, adaptor.getShape());
  if (failed(dims))
    return failure();
  for (int64_t d : *dims)
    if (d != ShapedType::kDynamic && d < 0)
      return emitOptionalError(loc, "iota: a size is negative (", d, ")");
  inferred.push_back(RankedTensorType::get(*dims, IntegerType::get(context, 64)));
  return success();
}

LogicalResult IotaOp::verify() {
  return checkAxis(getLoc(), static_cast<int64_t>(getAxis()), getType().getRank());
}

LogicalResult DynamicReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedOf(adaptor.getInput());
  if (!input)
    return emitOptionalError(loc, "dynamic_reshape expects a ranked tensor operand");
  FailureOr<SmallVector<int64_t>> spec = shapeOperand(loc, adaptor.getShape());
  if (failed(spec))
    return failure();
  bool allowZero = adaptor.getAllowZero();
  // Only positive constant entries (and a constant 0 that copies a static
  // input dim) are known; -1 is known when everything else is.
  SmallVector<int64_t> dims;
  int64_t inferredAt = -1;
  for (size_t i = 0; i < spec->size(); ++i) {
    int64_t s = (*spec)[i];
    if (s == 0 && !allowZero) {
      if (i >= static_cast<size_t>(input.getRank()))
        return emitOptionalError(loc, "dynamic_reshape: a 0 at index ", i,
                                 " has no input dim to copy");
      dims.push_back(input.getDimSize(i));
    } else if (s == -1) {
      if (inferredAt >= 0)
        return emitOptionalError(loc, "dynamic_reshape: more than one -1");
      inferredAt = static_cast<int64_t>(i);
      dims.push_back(ShapedType::kDynamic);
    } else if (s < -1 && s != ShapedType::kDynamic) {
      return emitOptionalError(loc, "dynamic_reshape: a size is negative (", s, ")");
    } else {
      dims.push_back(s);
    }
  }
  if (inferredAt >= 0 && input.hasStaticShape()) {
    int64_t known = 1;
    bool allKnown = true;
    for (size_t i = 0; i < dims.size(); ++i)
      if (static_cast<int64_t>(i) != inferredAt) {
        allKnown &= dims[i] != ShapedType::kDynamic;
        if (dims[i] != ShapedType::kDynamic)
          known *= dims[i];
      }
    if (allKnown && known > 0 && input.getNumElements() % known == 0)
      dims[inferredAt] = input.getNumElements() / known;
  }
  if (std::optional<ArrayRef<int64_t>> known = adaptor.getKnownDims()) {
    if (known->size() != dims.size())
      return emitOptionalError(loc, "dynamic_reshape: known_dims has ", known->size(),
                               " entries for rank ", dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t k = (*known)[i];
      if (k < -1)
        return emitOptionalError(loc, "dynamic_reshape: known_dims entry ", k,
                                 " is not a size or -1");
      if (k < 0)
        continue;
      if (dims[i] != ShapedType::kDynamic && dims[i] != k)
        return emitOptionalError(loc, "dynamic_reshape: known_dims says ", k, " for dim ", i,
                                 ", the shape says ", dims[i]);
      dims[i] = k;
    }
  }
  if (input.hasStaticShape() && llvm::none_of(dims, ShapedType::isDynamic) &&
      shape::numElements(toDims(dims)) != input.getNumElements())
    return emitOptionalError(loc, "dynamic_reshape: ", input.getNumElements(),
                             " elements cannot take the shape of ",
                             shape::numElements(toDims(dims)));
  inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  return success();
}

OpFoldResult DynamicReshapeOp::fold(FoldAdaptor adaptor) {
  auto constant = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (constant && getType().hasStaticShape())
    return constant.reshape(getType());
  return {};
}
