//===- Builders.cpp - kiln op sequences more than one pass builds ---------===//

#include "dialects/kiln/Utils/Builders.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include <limits>

using namespace mlir;

namespace kiln {

Value zeroPad(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> pads) {
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return v;
  return PadOp::create(b, loc, v, b.getDenseI64ArrayAttr(pads),
                       PadModeAttr::get(b.getContext(), PadMode::constant),
                       b.getF64FloatAttr(0.0));
}

Value zeroStuff(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> strides) {
  if (llvm::all_of(strides, [](int64_t s) { return s == 1; }))
    return x;
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
  auto type = cast<RankedTensorType>(x.getType());
  size_t spatial = strides.size();
  // N and C copied (0) where reshaped, so that a dynamic batch stays one.
  SmallVector<int64_t> split = {0, 0}, merged = {0, 0}, ends = {kEnd, kEnd};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = type.getDimSize(i + 2);
    split.append({size, 1});
    merged.push_back(size * strides[i]);
    ends.push_back((size - 1) * strides[i] + 1);
  }
  int64_t rank = 2 + 2 * spatial;
  SmallVector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i < spatial; ++i)
    pads[rank + 3 + 2 * i] = strides[i] - 1;
  Value apart = ReshapeOp::create(b, loc, x, b.getDenseI64ArrayAttr(split));
  Value padded = zeroPad(b, loc, apart, pads);
  Value flat = ReshapeOp::create(b, loc, padded, b.getDenseI64ArrayAttr(merged));
  return SliceOp::create(b, loc, flat, b.getDenseI64ArrayAttr(SmallVector<int64_t>(2 + spatial, 0)),
                         b.getDenseI64ArrayAttr(ends),
                         b.getDenseI64ArrayAttr(SmallVector<int64_t>(2 + spatial, 1)));
}

} // namespace kiln
