//===- Matchers.cpp - recognising constants in kiln IR --------------------===//

#include "dialects/kiln/Utils/Matchers.h"

using namespace mlir;

namespace kiln {

ConstantOp constantThroughReshapes(Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getInput();
  return value.getDefiningOp<ConstantOp>();
}

bool variesOnlyAlong(Value value, RankedTensorType result, int64_t channel) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > result.getRank() ||
      result.isDynamicDim(channel))
    return false;
  int64_t offset = result.getRank() - type.getRank();
  for (int64_t i = 0; i < type.getRank(); ++i) {
    int64_t j = i + offset;
    if (type.getDimSize(i) != (j == channel ? result.getDimSize(j) : 1))
      return false;
  }
  return offset <= channel;
}

std::optional<double> splatValue(Value value) {
  // A kernel's block argument stands for its operand.
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (auto kernel = dyn_cast_or_null<KernelOp>(arg.getOwner()->getParentOp()))
      value = kernel.getInputs()[arg.getArgNumber()];
  auto constant = value.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// The operand of `op` that is not a splat constant, and that constant's
/// value, when one of them is.
template <typename Op>
static std::optional<std::pair<Value, double>> splitSplat(Op op) {
  if (std::optional<double> rhs = splatValue(op.getRhs()))
    return std::make_pair(op.getLhs(), *rhs);
  if (std::optional<double> lhs = splatValue(op.getLhs()))
    return std::make_pair(op.getRhs(), *lhs);
  return std::nullopt;
}

std::optional<HardActivation> matchHardSigmoid(ClipOp clip) {
  if (!clip || clip.getMin().convertToDouble() != 0.0 || clip.getMax().convertToDouble() != 1.0)
    return std::nullopt;
  auto add = clip.getInput().getDefiningOp<AddOp>();
  auto shift = add ? splitSplat(add) : std::nullopt;
  auto mul = shift ? shift->first.getDefiningOp<MulOp>() : nullptr;
  auto scale = mul ? splitSplat(mul) : std::nullopt;
  // Same-typed all along: the constants broadcast into x's shape.
  if (!scale || mul.getType() != scale->first.getType() || add.getType() != mul.getType() ||
      clip.getType() != add.getType())
    return std::nullopt;
  HardActivation match;
  match.input = scale->first;
  match.alpha = scale->second;
  match.beta = shift->second;
  match.ops = {mul, add, clip};
  return match;
}

std::optional<HardActivation> matchHardSwish(MulOp mul) {
  if (!mul)
    return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    Value x = mul->getOperand(k), gate = mul->getOperand(1 - k);
    std::optional<HardActivation> match = matchHardSigmoid(gate.getDefiningOp<ClipOp>());
    // alpha 1/6 and beta 1/2 as f32, as ONNX's HardSwish fixes them.
    if (!match || match->input != x || mul.getType() != x.getType() ||
        static_cast<float>(match->alpha) != 1.0f / 6.0f || match->beta != 0.5)
      continue;
    match->ops.push_back(mul);
    return match;
  }
  return std::nullopt;
}

} // namespace kiln
