//===- ShapeRules.cpp - gradients of data movement ------------------------===//
//
// reshape: the gradient reshaped back; transpose: transposed by the
// inverse permutation; expand: summed over the expanded dims; concat: each
// input's slice of the gradient; split: the pieces' gradients concatenated;
// slice (unit steps): the gradient padded
// back with zeros; pad (constant): the gradient's unpadded slice; gather
// along axis 0 (embeddings): the gradient summed per index, as
// one_hot(indices)^T @ dY.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace kiln::autodiff {
namespace {

using Grads = llvm::SmallVectorImpl<Value>;

LogicalResult ReshapeOpRule(ReshapeOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  RankedTensorType type = typeOf(op.getInput());
  if (!type.hasStaticShape())
    return op.emitOpError("gradient of a reshape from a dynamic shape is not supported yet");
  out.push_back(
      ReshapeOp::create(b, op.getLoc(), type, g[0], b.getDenseI64ArrayAttr(type.getShape())));
  return success();
}

LogicalResult TransposeOpRule(TransposeOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  ArrayRef<int64_t> perm = op.getPermutation();
  llvm::SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = static_cast<int64_t>(i);
  out.push_back(TransposeOp::create(b, op.getLoc(), g[0], b.getDenseI64ArrayAttr(inverse)));
  return success();
}

LogicalResult ExpandOpRule(ExpandOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  return pushUnbroadcast(b, op.getLoc(), {{g[0], op.getInput()}}, out);
}

LogicalResult ConcatOpRule(ConcatOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  int64_t rank = typeOf(op.getResult()).getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  int64_t offset = 0;
  for (Value input : op.getInputs()) {
    RankedTensorType type = typeOf(input);
    int64_t size = type.getDimSize(axis);
    if (ShapedType::isDynamic(size))
      return op.emitOpError("gradient of a concat along a dynamic dim is not supported yet");
    llvm::SmallVector<int64_t> starts(rank, 0), ends(rank, std::numeric_limits<int64_t>::max()),
        steps(rank, 1);
    starts[axis] = offset;
    ends[axis] = offset + size;
    offset += size;
    if (!isDifferentiable(input)) {
      out.push_back(Value());
      continue;
    }
    out.push_back(SliceOp::create(b, op.getLoc(), g[0], b.getDenseI64ArrayAttr(starts),
                                  b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps)));
  }
  return success();
}

/// split: the pieces' gradients concatenated back (zeros for a piece
/// without one: kiln-differentiate fills them).
LogicalResult SplitOpRule(SplitOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  out.push_back(ConcatOp::create(b, op.getLoc(), g, op.getAxisAttr()));
  return success();
}

/// ONNX Slice's clamped start of `start` in a dim of `size` (step > 0).
int64_t clampStart(int64_t start, int64_t size) {
  if (start < 0)
    start += size;
  return std::clamp<int64_t>(start, 0, size);
}

LogicalResult SliceOpRule(SliceOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  RankedTensorType in = typeOf(op.getInput()), res = typeOf(op.getResult());
  if (!in.hasStaticShape() || !res.hasStaticShape())
    return op.emitOpError("gradient of a slice needs static shapes for now");
  if (llvm::any_of(op.getSteps(), [](int64_t s) { return s != 1; }))
    return op.emitOpError("gradient of a slice with steps other than 1 is not supported yet");
  llvm::SmallVector<int64_t> pads(2 * in.getRank());
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t start = clampStart(op.getStarts()[d], in.getDimSize(d));
    pads[d] = start;
    pads[in.getRank() + d] = in.getDimSize(d) - start - res.getDimSize(d);
  }
  out.push_back(padWith(b, op.getLoc(), g[0], pads, 0.0));
  return success();
}

LogicalResult PadOpRule(PadOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  RankedTensorType in = typeOf(op.getInput());
  ArrayRef<int64_t> pads = op.getPads();
  if (op.getMode() != PadMode::constant || !in.hasStaticShape() ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return op.emitOpError("gradient of a pad needs constant mode, static shapes and no "
                          "negative pads for now");
  int64_t rank = in.getRank();
  llvm::SmallVector<int64_t> starts(pads.begin(), pads.begin() + rank), ends, steps(rank, 1);
  for (int64_t d = 0; d < rank; ++d)
    ends.push_back(starts[d] + in.getDimSize(d));
  out.push_back(SliceOp::create(b, op.getLoc(), g[0], b.getDenseI64ArrayAttr(starts),
                                b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps)));
  return success();
}

LogicalResult GatherOpRule(GatherOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  RankedTensorType data = typeOf(op.getData()), indices = typeOf(op.getIndices());
  if (op.getAxis() != 0 || !data.hasStaticShape() || !indices.hasStaticShape())
    return op.emitOpError("gradient of a gather needs axis 0 and static shapes for now");
  int64_t vocab = data.getDimSize(0), rows = indices.getNumElements();
  int64_t width = data.getNumElements() / std::max<int64_t>(vocab, 1);
  Type indexType = indices.getElementType();
  auto flatType = RankedTensorType::get({rows, 1}, indexType);
  Value flat = ReshapeOp::create(b, loc, flatType, op.getIndices(),
                                 b.getDenseI64ArrayAttr({rows, 1}));
  // Negative indices count from the end.
  auto scalarIndex = [&](int64_t v) {
    auto t = RankedTensorType::get({}, indexType);
    return ConstantOp::create(b, loc, DenseElementsAttr::get(t, b.getIntegerAttr(indexType, v)));
  };
  Value negative = CompareOp::create(b, loc, ComparePredicate::lt, flat, scalarIndex(0));
  flat = SelectOp::create(b, loc, negative, AddOp::create(b, loc, flat, scalarIndex(vocab)), flat);
  llvm::SmallVector<APInt> range;
  for (int64_t v = 0; v < vocab; ++v)
    range.push_back(APInt(indexType.getIntOrFloatBitWidth(), v, /*isSigned=*/true));
  Value iota = ConstantOp::create(
      b, loc, DenseElementsAttr::get(RankedTensorType::get({1, vocab}, indexType), range));
  Value oneHot = CastOp::create(b, loc, RankedTensorType::get({rows, vocab}, data.getElementType()),
                                CompareOp::create(b, loc, ComparePredicate::eq, flat, iota));
  Value grad2 = ReshapeOp::create(b, loc, RankedTensorType::get({rows, width}, data.getElementType()),
                                  g[0], b.getDenseI64ArrayAttr({rows, width}));
  Value table = MatmulOp::create(
      b, loc, TransposeOp::create(b, loc, oneHot, b.getDenseI64ArrayAttr({1, 0})), grad2);
  out.push_back(ReshapeOp::create(b, loc, data, table, b.getDenseI64ArrayAttr(data.getShape())));
  out.push_back(Value()); // indices
  return success();
}

} // namespace

void registerShapeRules(MLIRContext *context) {
  ReshapeOp::attachInterface<RuleModel<ReshapeOp, ReshapeOpRule>>(*context);
  TransposeOp::attachInterface<RuleModel<TransposeOp, TransposeOpRule>>(*context);
  ExpandOp::attachInterface<RuleModel<ExpandOp, ExpandOpRule>>(*context);
  ConcatOp::attachInterface<RuleModel<ConcatOp, ConcatOpRule>>(*context);
  SliceOp::attachInterface<RuleModel<SliceOp, SliceOpRule>>(*context);
  PadOp::attachInterface<RuleModel<PadOp, PadOpRule>>(*context);
  GatherOp::attachInterface<RuleModel<GatherOp, GatherOpRule>>(*context);
  SplitOp::attachInterface<RuleModel<SplitOp, SplitOpRule>>(*context);
}

} // namespace kiln::autodiff
