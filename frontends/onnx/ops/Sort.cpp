//===- Sort.cpp - ONNX TopK ------------------------------------------------===//
//
// TopK over a static axis of n elements, without a sort: each element's
// rank is the number of elements that beat it (ties go to the lower
// index), and output r collects the element whose rank is r. That costs n^2
// comparisons per row, fine for the class counts TopK is used on.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {


LogicalResult importTopK(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  std::optional<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", -1), rank);
  int64_t k;
  Value runtimeK; // K read when the model runs
  if (ctx.opset >= 10 && !ctx.isKnownInput(1)) {
    runtimeK = asScalar(ctx, runtimeInts(ctx, 1));
    if (!runtimeK)
      return failure();
    k = 1;
  } else if (ctx.opset < 10) {
    k = ctx.intAttr("k", 0);
  } else {
    std::optional<SmallVector<int64_t>> given = ctx.intsInput(1, "K");
    if (!given)
      return failure();
    if (given->size() != 1)
      return ctx.invalid("K must hold one value");
    k = (*given)[0];
  }
  if (!axis)
    return failure();
  std::optional<int64_t> n = staticDim(ctx, x, *axis, "TopK");
  if (!n)
    return failure();
  if (k < 0 || k > *n)
    return ctx.invalid("K = " + llvm::Twine(k) + " is outside [0, " + llvm::Twine(*n) + "]");
  if (k == 0)
    return ctx.unsupported("K = 0 (empty results)");
  bool largest = ctx.intAttr("largest", 1) != 0;
  // Move the axis last: [..., n].
  SmallVector<int64_t> toLast, fromLast(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      toLast.push_back(d);
  toLast.push_back(*axis);
  for (int64_t d = 0; d < rank; ++d)
    fromLast[toLast[d]] = d;
  Value v = ctx.make<TransposeOp>(x, ctx.i64s(toLast));
  Value xi = unsqueeze(ctx, v, {rank});      // [..., n, 1]: element i
  Value xj = unsqueeze(ctx, v, {rank - 1});  // [..., 1, n]: element j
  // j beats i: better value, or equal value and lower index.
  Value better = compare(ctx, largest ? ComparePredicate::gt : ComparePredicate::lt, xj, xi);
  Value equal = compare(ctx, ComparePredicate::eq, xj, xi);
  Value lowerIndex = generateConstant(
      ctx, RankedTensorType::get({*n, *n}, ctx.b.getI1Type()),
      [&](int64_t flat) { return (flat % *n) < (flat / *n) ? 1.0 : 0.0; });
  Value beats = ctx.make<OrOp>(better, ctx.make<AndOp>(equal, lowerIndex));
  Value rankOf = ctx.make<ReduceSumOp>(ctx.cast(beats, ctx.b.getI64Type()),
                                       ctx.i64s({rank}), ctx.b.getBoolAttr(false));
  // placed[..., i, r] = rank of i is r, for r < k.
  Value slots =
      runtimeK ? ctx.make<ReshapeOp>(iotaOfLength(ctx, runtimeK), ctx.i64s({1, -1}))
               : generateConstant(ctx, RankedTensorType::get({1, k}, ctx.b.getI64Type()),
                                  [](int64_t r) { return static_cast<double>(r); });
  Value placed = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, rankOf, {rank}), slots);
  auto collect = [&](Value perElement) {
    Value chosen = ctx.make<SelectOp>(placed, perElement,
                                      ctx.scalarLike(perElement, 0));
    Value summed = ctx.make<ReduceSumOp>(chosen, ctx.i64s({rank - 1}),
                                         ctx.b.getBoolAttr(false));
    return ctx.make<TransposeOp>(summed, ctx.i64s(fromLast));
  };
  Value indices = generateConstant(ctx, RankedTensorType::get({*n, 1}, ctx.b.getI64Type()),
                                   [](int64_t i) { return static_cast<double>(i); });
  ctx.bindOutput(0, collect(xi));
  return ctx.setOutput(1, collect(indices));
}

} // namespace

void registerSortOps(OpRegistry &r) {
  r.add("TopK", 1, kAnyLaterOpset, importTopK);
}

} // namespace kiln::onnx_frontend
