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

} // namespace kiln
