//===- Indexing.cpp - ONNX gather, one-hot, triangle and scan ops ---------===//
//
// Gather maps onto kiln.gather; OneHot and Trilu compare indices against
// constant iotas; CumSum is a matmul with a constant triangular matrix.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {


LogicalResult importGather(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), NodeContext::rankOf(data));
  if (!axis)
    return failure();
  return ctx.setOutput(0, ctx.make<GatherOp>(data, indices, ctx.i64(*axis)));
}

LogicalResult importOneHot(NodeContext &ctx) {
  Value indices = ctx.input(0);
  std::optional<SmallVector<double>> depth = ctx.floatsInput(1, "depth");
  Value values = ctx.input(2);
  if (!indices || !depth || !values)
    return failure();
  if (depth->size() != 1 || (*depth)[0] < 1)
    return ctx.invalid("depth must be one positive value");
  int64_t d = static_cast<int64_t>((*depth)[0]);
  int64_t rank = NodeContext::rankOf(indices) + 1;
  std::optional<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", -1), rank);
  if (!axis)
    return failure();
  // Negative indices count from the end: i < 0 ? i + depth : i.
  Value idx = ctx.cast(indices, ctx.b.getI64Type());
  Value wrapped = ctx.make<SelectOp>(
      compare(ctx, ComparePredicate::lt, idx, ctx.scalarLike(idx, 0)),
      ctx.make<AddOp>(idx, ctx.scalarLike(idx, d)), idx);
  SmallVector<int64_t> iotaShape(rank, 1);
  iotaShape[*axis] = d;
  Value hit = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, wrapped, {*axis}),
                      iotaAlong(ctx, iotaShape, *axis));
  Value off = ctx.make<ReshapeOp>(
      ctx.make<SliceOp>(values, ctx.i64s({0}), ctx.i64s({1}), ctx.i64s({1})),
      ctx.i64s({}));
  Value on = ctx.make<ReshapeOp>(
      ctx.make<SliceOp>(values, ctx.i64s({1}), ctx.i64s({2}), ctx.i64s({1})),
      ctx.i64s({}));
  return ctx.setOutput(0, ctx.make<SelectOp>(hit, on, off));
}

LogicalResult importTrilu(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  if (x && rank < 2)
    return ctx.invalid("input must have rank >= 2");
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    std::optional<SmallVector<int64_t>> given = ctx.intsInput(1, "k");
    if (!given)
      return failure();
    if (given->size() != 1)
      return ctx.invalid("k must be a scalar");
    k = (*given)[0];
  }
  std::optional<int64_t> rows = staticDim(ctx, x, rank - 2, "Trilu");
  std::optional<int64_t> cols = staticDim(ctx, x, rank - 1, "Trilu");
  if (!rows || !cols)
    return failure();
  bool upper = ctx.intAttr("upper", 1) != 0;
  // Keep (i, j) where j - i >= k (upper) or j - i <= k (lower).
  Value keep = generateConstant(
      ctx, RankedTensorType::get({*rows, *cols}, ctx.b.getI1Type()),
      [&](int64_t flat) {
        int64_t i = flat / *cols, j = flat % *cols;
        return upper ? (j - i >= k) : (j - i <= k);
      });
  return ctx.setOutput(0, ctx.make<SelectOp>(keep, x, ctx.scalarLike(x, 0)));
}

LogicalResult importCumSum(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  std::optional<SmallVector<int64_t>> axisValue = ctx.intsInput(1, "axis");
  if (!x || !axisValue)
    return failure();
  if (axisValue->size() != 1)
    return ctx.invalid("axis must be a scalar");
  std::optional<int64_t> axis = ctx.normalizeAxis((*axisValue)[0], rank);
  if (!axis)
    return failure();
  std::optional<int64_t> n = staticDim(ctx, x, *axis, "CumSum");
  if (!n)
    return failure();
  bool exclusive = ctx.intAttr("exclusive", 0) != 0;
  bool reverse = ctx.intAttr("reverse", 0) != 0;
  // y[..., j] = sum_i x[..., i] * m[i, j] with m[i, j] = 1 where i
  // contributes to j.
  Value mask = generateConstant(
      ctx, RankedTensorType::get({*n, *n}, NodeContext::elementTypeOf(x)),
      [&](int64_t flat) {
        int64_t i = flat / *n, j = flat % *n;
        if (reverse)
          return exclusive ? i > j : i >= j;
        return exclusive ? i < j : i <= j;
      });
  SmallVector<int64_t> toLast, fromLast;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      toLast.push_back(d);
  toLast.push_back(*axis);
  fromLast.resize(rank);
  for (int64_t d = 0; d < rank; ++d)
    fromLast[toLast[d]] = d;
  Value moved = ctx.make<TransposeOp>(x, ctx.i64s(toLast));
  Value summed = numpyMatmul(ctx, moved, mask);
  return ctx.setOutput(0, ctx.make<TransposeOp>(summed, ctx.i64s(fromLast)));
}

} // namespace

void registerIndexingOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Gather", 1, any, importGather);
  r.add("OneHot", 9, any, importOneHot);
  r.add("Trilu", 14, any, importTrilu);
  r.add("CumSum", 11, any, importCumSum);
}

} // namespace kiln::onnx_frontend
