//===- KilnNNOps.cpp - contractions, windows, normalisation, reductions ---===//
//
// Shape inference and verifiers of the compute-heavy family. Channels-first
// layout throughout: [N, C, spatial...].
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/ShapeMath.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace kiln;

static shape::Dims toDims(ArrayRef<int64_t> dims) {
  return shape::Dims(dims.begin(), dims.end());
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto lhs = dyn_cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = dyn_cast<RankedTensorType>(adaptor.getRhs().getType());
  if (!lhs || !rhs)
    return emitOptionalError(loc, "matmul expects ranked tensor operands");
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(loc, "matmul operands must have rank >= 2, got ",
                             lhs.getRank(), " and ", rhs.getRank());
  int64_t k1 = lhs.getShape().back();
  int64_t k2 = rhs.getShape()[rhs.getRank() - 2];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return emitOptionalError(loc, "matmul contraction sizes differ: ", k1,
                             " vs ", k2);
  shape::ShapeOrError batch =
      shape::broadcast({toDims(lhs.getShape().drop_back(2)),
                        toDims(rhs.getShape().drop_back(2))});
  if (!batch.ok())
    return emitOptionalError(loc, "matmul batch dims: ", batch.error);
  shape::Dims dims = batch.dims;
  dims.push_back(lhs.getShape()[lhs.getRank() - 2]);
  dims.push_back(rhs.getShape().back());
  inferred.push_back(RankedTensorType::get(dims, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// conv and pooling
//===----------------------------------------------------------------------===//

/// Checks the window attributes of an op with `spatial` spatial dims and
/// appends the output extent of each spatial dim of `input` to `dims`.
static LogicalResult inferWindowDims(std::optional<Location> loc,
                                     RankedTensorType input,
                                     ArrayRef<int64_t> kernel,
                                     ArrayRef<int64_t> strides,
                                     ArrayRef<int64_t> pads,
                                     ArrayRef<int64_t> dilations, bool ceilMode,
                                     shape::Dims &dims) {
  size_t spatial = input.getRank() - 2;
  if (kernel.size() != spatial || strides.size() != spatial ||
      dilations.size() != spatial || pads.size() != 2 * spatial)
    return emitOptionalError(
        loc, "expected ", spatial, " kernel sizes, strides and dilations and ",
        2 * spatial, " pads for ", spatial, " spatial dims, got ",
        kernel.size(), ", ", strides.size(), ", ", dilations.size(), " and ",
        pads.size());
  for (size_t i = 0; i < spatial; ++i) {
    shape::ShapeOrError out = shape::windowOutput(
        input.getDimSize(i + 2), kernel[i], strides[i], pads[i],
        pads[i + spatial], dilations[i], ceilMode);
    if (!out.ok())
      return emitOptionalError(loc, "spatial dim ", i, ": ", out.error);
    dims.push_back(out.dims[0]);
  }
  return success();
}

static LogicalResult checkSpatialRank(std::optional<Location> loc,
                                      RankedTensorType input) {
  if (input.getRank() < 3 || input.getRank() > 5)
    return emitOptionalError(
        loc, "input must be [N, C, D...] with 1 to 3 spatial dims, got rank ",
        input.getRank());
  return success();
}

/// The ranked input and weight of a convolution (plain or transposed):
/// 1 to 3 spatial dims, the same rank.
template <typename Adaptor>
static LogicalResult checkConvOperands(std::optional<Location> loc, Adaptor adaptor,
                                       StringRef what, RankedTensorType &input,
                                       RankedTensorType &weight) {
  input = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
  weight = dyn_cast<RankedTensorType>(adaptor.getWeight().getType());
  if (!input || !weight)
    return emitOptionalError(loc, what, " expects ranked tensor operands");
  if (failed(checkSpatialRank(loc, input)))
    return failure();
  if (weight.getRank() != input.getRank())
    return emitOptionalError(loc, "weight rank ", weight.getRank(),
                             " differs from input rank ", input.getRank());
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  RankedTensorType input, weight;
  if (failed(checkConvOperands(loc, adaptor, "conv", input, weight)))
    return failure();
  int64_t groups = static_cast<int64_t>(adaptor.getGroups());
  if (groups < 1)
    return emitOptionalError(loc, "groups must be positive, got ", groups);
  int64_t channels = input.getDimSize(1), outChannels = weight.getDimSize(0);
  int64_t weightChannels = weight.getDimSize(1);
  if (!ShapedType::isDynamic(channels)) {
    if (channels % groups != 0)
      return emitOptionalError(loc, "input channels ", channels,
                               " are not divisible by groups ", groups);
    if (!ShapedType::isDynamic(weightChannels) &&
        weightChannels * groups != channels)
      return emitOptionalError(loc, "weight expects ", weightChannels * groups,
                               " input channels (", weightChannels, " x ",
                               groups, " groups), input has ", channels);
  }
  if (!ShapedType::isDynamic(outChannels) && outChannels % groups != 0)
    return emitOptionalError(loc, "output channels ", outChannels,
                             " are not divisible by groups ", groups);
  shape::Dims dims = {input.getDimSize(0), outChannels};
  for (int64_t k : weight.getShape().drop_front(2))
    if (ShapedType::isDynamic(k))
      return emitOptionalError(loc, "kernel spatial dims must be static");
  if (failed(inferWindowDims(loc, input, weight.getShape().drop_front(2),
                             adaptor.getStrides(), adaptor.getPads(),
                             adaptor.getDilations(), /*ceilMode=*/false, dims)))
    return failure();
  inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &inferred) {
  RankedTensorType input, weight;
  if (failed(checkConvOperands(loc, adaptor, "conv_transpose", input, weight)))
    return failure();
  if (!weight.hasStaticShape() || llvm::any_of(input.getShape().drop_front(),
                                               ShapedType::isDynamic))
    return emitOptionalError(loc, "conv_transpose needs a static weight and static input "
                                  "dims past the batch");
  size_t spatial = input.getRank() - 2;
  ArrayRef<int64_t> strides = adaptor.getStrides(), pads = adaptor.getPads(),
                    dilations = adaptor.getDilations(),
                    outputPadding = adaptor.getOutputPadding();
  if (strides.size() != spatial || dilations.size() != spatial ||
      outputPadding.size() != spatial || pads.size() != 2 * spatial)
    return emitOptionalError(loc, "expected ", spatial, " strides, dilations and output "
                             "paddings and ", 2 * spatial, " pads for ", spatial,
                             " spatial dims");
  int64_t groups = static_cast<int64_t>(adaptor.getGroups());
  if (groups < 1)
    return emitOptionalError(loc, "groups must be positive, got ", groups);
  int64_t channels = input.getDimSize(1);
  if (weight.getDimSize(0) != channels)
    return emitOptionalError(loc, "weight has ", weight.getDimSize(0),
                             " input channels, input has ", channels);
  if (channels % groups != 0)
    return emitOptionalError(loc, "input channels ", channels,
                             " are not divisible by groups ", groups);
  shape::Dims dims = {input.getDimSize(0), weight.getDimSize(1) * groups};
  for (size_t i = 0; i < spatial; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || outputPadding[i] < 0)
      return emitOptionalError(loc, "spatial dim ", i, ": strides and dilations must be "
                               "positive and output_padding not negative");
    int64_t span = dilations[i] * (weight.getDimSize(i + 2) - 1);
    int64_t out = (input.getDimSize(i + 2) - 1) * strides[i] - pads[i] - pads[i + spatial] +
                  span + 1 + outputPadding[i];
    if (out < 0)
      return emitOptionalError(loc, "spatial dim ", i, ": negative output size ", out);
    dims.push_back(out);
  }
  inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  return success();
}

template <typename PoolOpAdaptor>
static LogicalResult inferPool(std::optional<Location> loc,
                               PoolOpAdaptor adaptor,
                               SmallVectorImpl<Type> &inferred) {
  auto input = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
  if (!input)
    return emitOptionalError(loc, "pooling expects a ranked tensor operand");
  if (failed(checkSpatialRank(loc, input)))
    return failure();
  shape::Dims dims = {input.getDimSize(0), input.getDimSize(1)};
  if (failed(inferWindowDims(loc, input, adaptor.getKernelShape(),
                             adaptor.getStrides(), adaptor.getPads(),
                             adaptor.getDilations(), adaptor.getCeilMode(),
                             dims)))
    return failure();
  inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferPool(loc, adaptor, inferred);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferPool(loc, adaptor, inferred);
}

//===----------------------------------------------------------------------===//
// topk
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto input = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
  if (!input)
    return emitOptionalError(loc, "topk expects a ranked tensor operand");
  int64_t rank = input.getRank(), axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "topk axis ", axis, " is outside [0, ", rank, ")");
  int64_t n = input.getDimSize(axis); // (a dynamic one: k is checked when the model runs)
  std::optional<uint64_t> k = adaptor.getK();
  if (k.has_value() == static_cast<bool>(adaptor.getCount()))
    return emitOptionalError(loc, "topk takes k either as the attribute or as the operand "
                                  "count, not both or neither");
  int64_t size = ShapedType::kDynamic;
  if (k) {
    size = static_cast<int64_t>(*k);
    if (size < 0 || (!ShapedType::isDynamic(n) && size > n))
      return ShapedType::isDynamic(n)
                 ? emitOptionalError(loc, "topk k = ", size, " is negative")
                 : emitOptionalError(loc, "topk k = ", size, " is outside [0, ", n, "]");
  } else if (auto count = dyn_cast<RankedTensorType>(adaptor.getCount().getType());
             !count || count.getDimSize(0) != 1) {
    return emitOptionalError(loc, "topk's count must hold one value");
  }
  SmallVector<int64_t> dims(input.getShape());
  dims[axis] = size;
  inferred.push_back(RankedTensorType::get(dims, input.getElementType()));
  inferred.push_back(RankedTensorType::get(dims, IntegerType::get(context, 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// normalisation and softmax
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  RankedTensorType input = getInput().getType();
  if (input.getRank() < 2)
    return emitOpError("input must have rank >= 2 ([N, C, ...]), got ")
           << input.getRank();
  int64_t channels = input.getDimSize(1);
  const StringRef names[] = {"scale", "bias", "mean", "variance"};
  const Value vectors[] = {getScale(), getBias(), getMean(), getVariance()};
  for (auto [name, value] : llvm::zip(names, vectors)) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() != 1 ||
        (!ShapedType::isDynamic(channels) &&
         !ShapedType::isDynamic(type.getDimSize(0)) &&
         type.getDimSize(0) != channels))
      return emitOpError() << name << " must be a vector of " << channels
                           << " channels, got " << type;
  }
  return success();
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType input = getInput().getType();
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << input.getRank();
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  const StringRef names[] = {"scale", "bias"};
  const Value params[] = {getScale(), getBias()};
  for (auto [name, value] : llvm::zip(names, params)) {
    auto type = cast<RankedTensorType>(value.getType());
    shape::ShapeOrError joint =
        shape::broadcast({toDims(normalized), toDims(type.getShape())});
    if (type.getRank() > static_cast<int64_t>(normalized.size()) ||
        !joint.ok() || joint.dims != toDims(normalized))
      return emitOpError() << name << " of type " << type
                           << " does not broadcast to the normalised dims";
  }
  return success();
}

static LogicalResult verifySoftmaxAxis(Operation *op, RankedTensorType input,
                                       int64_t axis) {
  if (axis < 0 || axis >= input.getRank())
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << input.getRank();
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifySoftmaxAxis(*this, getInput().getType(),
                           static_cast<int64_t>(getAxis()));
}

LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxAxis(*this, getInput().getType(),
                           static_cast<int64_t>(getAxis()));
}

//===----------------------------------------------------------------------===//
// reductions
//===----------------------------------------------------------------------===//

/// A reduction over no axes is the identity.
template <typename ReduceOp>
static OpFoldResult foldEmptyReduction(ReduceOp op) {
  if (op.getAxes().empty() && op.getInput().getType() == op.getType())
    return op.getInput();
  return {};
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0 && ratio < 1))
    return emitOpError("ratio must be in [0, 1), got ") << ratio;
  return success();
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor) { return foldEmptyReduction(*this); }
OpFoldResult ReduceMeanOp::fold(FoldAdaptor) { return foldEmptyReduction(*this); }
OpFoldResult ReduceMaxOp::fold(FoldAdaptor) { return foldEmptyReduction(*this); }
OpFoldResult ReduceMinOp::fold(FoldAdaptor) { return foldEmptyReduction(*this); }
OpFoldResult ReduceProdOp::fold(FoldAdaptor) { return foldEmptyReduction(*this); }
