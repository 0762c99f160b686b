//===- ReshapeDims.cpp - the dims a run-time reshape is known to give -----===//
//
// A Reshape whose target shape is computed when the model runs (from Shape,
// Gather, Concat of dynamic dims) still has dims the importer can tell: a
// run-time entry that is a dim of the reshaped tensor itself carries that
// dim, and the -1 is then the quotient of the static ones. The reshape
// checks them when the model runs (kiln.dynamic_reshape's known_dims).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

/// Dim `second` of the tensor `first`.
using DimRef = std::pair<Value, int64_t>;

/// The dim whose run-time size is entry `i` of the 1-D integer tensor
/// `shape`, where the importer built that entry from an ONNX Shape: a
/// kiln.shape_of, gathered at constant positions, reshaped between one
/// element and a 1-D tensor, concatenated; nullopt otherwise.
std::optional<DimRef> entrySource(Value shape, int64_t i) {
  for (int depth = 0; depth < 32; ++depth) {
    Operation *op = shape.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto of = dyn_cast<ShapeOfOp>(op))
      return DimRef{of.getInput(), i};
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      RankedTensorType in = NodeContext::typeOf(reshape.getInput());
      if (!in || in.getRank() > 1)
        return std::nullopt;
      shape = reshape.getInput();
      continue;
    }
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      Value piece;
      for (Value input : concat.getInputs()) {
        RankedTensorType type = NodeContext::typeOf(input);
        if (!type || type.getRank() != 1 || type.isDynamicDim(0))
          return std::nullopt;
        if (i < type.getDimSize(0)) {
          piece = input;
          break;
        }
        i -= type.getDimSize(0);
      }
      if (!piece)
        return std::nullopt;
      shape = piece;
      continue;
    }
    if (auto gather = dyn_cast<GatherOp>(op)) {
      auto constant = gather.getIndices().getDefiningOp<ConstantOp>();
      auto indices = constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
      RankedTensorType data = NodeContext::typeOf(gather.getData());
      if (gather.getAxis() != 0 || !indices || !data || data.getRank() != 1 ||
          data.isDynamicDim(0) || i >= indices.getNumElements())
        return std::nullopt;
      int64_t index = indices.getValues<APInt>()[i].getSExtValue();
      if (index < 0)
        index += data.getDimSize(0);
      if (index < 0 || index >= data.getDimSize(0))
        return std::nullopt;
      shape = gather.getData();
      i = index;
      continue;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// The earliest dim known to have the size of dim `d` of `v`: through
/// transposes, and reshapes to run-time shapes whose entry there is
/// another tensor's dim (entrySource).
DimRef dimRoot(Value v, int64_t d) {
  for (int depth = 0; depth < 64; ++depth) {
    if (auto transpose = v.getDefiningOp<TransposeOp>()) {
      d = transpose.getPermutation()[d];
      v = transpose.getInput();
      continue;
    }
    if (auto reshape = v.getDefiningOp<DynamicReshapeOp>()) {
      if (std::optional<DimRef> source = entrySource(reshape.getShape(), d)) {
        std::tie(v, d) = *source;
        continue;
      }
    }
    break;
  }
  return {v, d};
}

} // namespace

SmallVector<int64_t> knownReshapeDims(Value x, ArrayRef<int64_t> spec, bool allowZero,
                                      Value target) {
  RankedTensorType type = NodeContext::typeOf(x);
  SmallVector<int64_t> known(spec.size(), -1);
  if (!type)
    return known;
  int64_t rank = type.getRank();
  int64_t inputStatic = 1, targetStatic = 1, inferredAt = -1;
  SmallVector<bool> carried(rank, false);
  // The run-time elements that are a dynamic dim of `x` itself.
  SmallVector<int64_t> sameDim(spec.size(), -1);
  if (target)
    for (int64_t i = 0; i < static_cast<int64_t>(spec.size()); ++i) {
      std::optional<DimRef> source = spec[i] == -2 ? entrySource(target, i) : std::nullopt;
      if (!source)
        continue;
      DimRef root = dimRoot(source->first, source->second);
      for (int64_t d = 0; d < rank; ++d)
        if (type.isDynamicDim(d) && !carried[d] && dimRoot(x, d) == root) {
          carried[d] = true;
          sameDim[i] = d;
          break;
        }
    }
  for (int64_t i = 0; i < static_cast<int64_t>(spec.size()); ++i) {
    int64_t s = spec[i];
    bool copies = (s == 0 && !allowZero) || s == -2;
    if (sameDim[i] >= 0)
      continue;
    if (copies && i < rank && type.isDynamicDim(i) && !carried[i]) {
      carried[i] = true;
    } else if (s == 0 && !allowZero && i < rank) {
      known[i] = type.getDimSize(i);
      targetStatic *= known[i];
    } else if (s >= 0) {
      known[i] = s;
      targetStatic *= s;
    } else if (s == -1) {
      inferredAt = i;
    } else {
      return SmallVector<int64_t>(spec.size(), -1);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!type.isDynamicDim(d))
      inputStatic *= type.getDimSize(d);
    else if (!carried[d])
      return known;
  }
  if (inferredAt >= 0 && targetStatic > 0 && inputStatic % targetStatic == 0)
    known[inferredAt] = inputStatic / targetStatic;
  return known;
}

} // namespace kiln::onnx_frontend
