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
  Value values = ctx.input(2);
  if (!indices || !values)
    return failure();
  int64_t rank = NodeContext::rankOf(indices) + 1;
  std::optional<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", -1), rank);
  if (!axis)
    return failure();
  Value depth, iota;
  if (ctx.isKnownInput(1)) {
    std::optional<SmallVector<double>> given = ctx.floatsInput(1, "depth");
    if (!given)
      return failure();
    if (given->size() != 1 || (*given)[0] < 1)
      return ctx.invalid("depth must be one positive value");
    int64_t d = static_cast<int64_t>((*given)[0]);
    depth = i64Scalar(ctx, d);
    SmallVector<int64_t> iotaShape(rank, 1);
    iotaShape[*axis] = d;
    iota = iotaAlong(ctx, iotaShape, *axis);
  } else {
    // A depth read when the model runs sizes the new axis.
    Value given = ctx.input(1);
    if (!given)
      return failure();
    depth = asScalar(ctx, ctx.cast(given, ctx.b.getI64Type()));
    SmallVector<Value> pieces;
    for (int64_t d = 0; d < rank; ++d)
      pieces.push_back(d == *axis ? depth : ctx.indices({1}));
    iota = ctx.make<IotaOp>(concatVector(ctx, pieces), ctx.i64(*axis));
  }
  // Negative indices count from the end: i < 0 ? i + depth : i.
  Value idx = ctx.cast(indices, ctx.b.getI64Type());
  Value wrapped = ctx.make<SelectOp>(
      compare(ctx, ComparePredicate::lt, idx, ctx.scalarLike(idx, 0)),
      ctx.make<AddOp>(idx, depth), idx);
  Value hit = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, wrapped, {*axis}), iota);
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
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  if (rank < 2)
    return ctx.invalid("input must have rank >= 2");
  bool upper = ctx.intAttr("upper", 1) != 0;
  bool runtimeK = ctx.hasInput(1) && !ctx.isKnownInput(1);
  int64_t k = 0;
  if (ctx.hasInput(1) && !runtimeK) {
    std::optional<SmallVector<int64_t>> given = ctx.intsInput(1, "k");
    if (!given)
      return failure();
    if (given->size() != 1)
      return ctx.invalid("k must be a scalar");
    k = (*given)[0];
  }
  // Keep (i, j) where j - i >= k (upper) or j - i <= k (lower): a constant
  // mask when the matrix dims and k are known, else compared at run time.
  Value keep;
  if (!runtimeK && !type.isDynamicDim(rank - 2) && !type.isDynamicDim(rank - 1)) {
    int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
    keep = generateConstant(ctx, RankedTensorType::get({rows, cols}, ctx.b.getI1Type()),
                            [&](int64_t flat) {
                              int64_t i = flat / cols, j = flat % cols;
                              return upper ? (j - i >= k) : (j - i <= k);
                            });
  } else {
    Value kValue = runtimeK ? asScalar(ctx, runtimeInts(ctx, 1)) : i64Scalar(ctx, k);
    Value diagonal = ctx.make<SubOp>(iotaOfDim(ctx, x, rank - 1, 2, 1),
                                     iotaOfDim(ctx, x, rank - 2, 2, 0));
    keep = compare(ctx, upper ? ComparePredicate::ge : ComparePredicate::le, diagonal, kValue);
  }
  return ctx.setOutput(0, ctx.make<SelectOp>(keep, x, ctx.scalarLike(x, 0)));
}

/// Running sums of `x` along `axis`: a matmul with a constant triangular
/// matrix.
Value cumulativeSum(NodeContext &ctx, Value x, int64_t axis, bool exclusive, bool reverse) {
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return {};
  int64_t rank = type.getRank();
  // y[..., j] = sum_i x[..., i] * m[i, j] with m[i, j] = 1 where i
  // contributes to j (built at run time for a dynamic dim).
  Value mask;
  if (!type.isDynamicDim(axis)) {
    int64_t n = type.getDimSize(axis);
    mask = generateConstant(
        ctx, RankedTensorType::get({n, n}, type.getElementType()), [&](int64_t flat) {
          int64_t i = flat / n, j = flat % n;
          if (reverse)
            return exclusive ? i > j : i >= j;
          return exclusive ? i < j : i <= j;
        });
  } else {
    Value positions = iotaOfLength(ctx, dimValue(ctx, x, axis));
    Value i = unsqueeze(ctx, positions, {1}), j = unsqueeze(ctx, positions, {0});
    ComparePredicate p = reverse ? (exclusive ? ComparePredicate::gt : ComparePredicate::ge)
                                 : (exclusive ? ComparePredicate::lt : ComparePredicate::le);
    mask = ctx.cast(compare(ctx, p, i, j), type.getElementType());
  }
  AxisToLast perm = axisToLast(rank, axis);
  Value moved = ctx.make<TransposeOp>(x, ctx.i64s(perm.toLast));
  Value summed = numpyMatmul(ctx, moved, mask);
  return ctx.make<TransposeOp>(summed, ctx.i64s(perm.back));
}

/// Running products of `x` along `axis` (CumProd, opset 26): for each
/// output position the product over the inputs that contribute to it, the
/// others replaced by 1 (quadratic in the axis length).
Value cumulativeProduct(NodeContext &ctx, Value x, int64_t axis, bool exclusive, bool reverse) {
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return {};
  int64_t rank = type.getRank();
  // contributes[i, j]: input i is in the product at output j.
  Value positions = type.isDynamicDim(axis)
                        ? iotaOfLength(ctx, dimValue(ctx, x, axis))
                        : iotaAlong(ctx, {type.getDimSize(axis)}, 0);
  Value i = unsqueeze(ctx, positions, {1}), j = unsqueeze(ctx, positions, {0});
  ComparePredicate p = reverse ? (exclusive ? ComparePredicate::gt : ComparePredicate::ge)
                               : (exclusive ? ComparePredicate::lt : ComparePredicate::le);
  Value contributes = compare(ctx, p, i, j);
  AxisToLast perm = axisToLast(rank, axis);
  // [..., n] -> [..., n (i), 1] against [n (i), n (j)], reduced over i.
  Value moved = unsqueeze(ctx, ctx.make<TransposeOp>(x, ctx.i64s(perm.toLast)), {rank});
  Value terms = ctx.make<SelectOp>(contributes, moved, ctx.scalarLike(x, 1.0));
  Value product = ctx.make<ReduceProdOp>(terms, ctx.i64s({rank - 1}), ctx.b.getBoolAttr(false));
  return ctx.make<TransposeOp>(product, ctx.i64s(perm.back));
}

/// CumSum and CumProd: along an axis known when compiling, or read when the
/// model runs (a rank-1 input has one axis; else the result along every
/// axis, the one named chosen: rank x the work).
template <bool product> LogicalResult importCumulative(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  bool exclusive = ctx.intAttr("exclusive", 0) != 0;
  bool reverse = ctx.intAttr("reverse", 0) != 0;
  if (!x)
    return failure();
  auto along = [&](int64_t axis) {
    return product ? cumulativeProduct(ctx, x, axis, exclusive, reverse)
                   : cumulativeSum(ctx, x, axis, exclusive, reverse);
  };
  if (!ctx.isKnownInput(1)) {
    if (rank == 1)
      return ctx.setOutput(0, along(0));
    Value axis = asScalar(ctx, runtimeInts(ctx, 1));
    Value negative = compare(ctx, ComparePredicate::lt, axis, i64Scalar(ctx, 0));
    Value normalized =
        ctx.make<SelectOp>(negative, ctx.make<AddOp>(axis, i64Scalar(ctx, rank)), axis);
    Value result = along(rank - 1);
    for (int64_t a = rank - 2; a >= 0; --a)
      result = ctx.make<SelectOp>(compare(ctx, ComparePredicate::eq, normalized, i64Scalar(ctx, a)),
                                  along(a), result);
    return ctx.setOutput(0, result);
  }
  std::optional<SmallVector<int64_t>> axisValue = ctx.intsInput(1, "axis");
  if (!axisValue)
    return failure();
  if (axisValue->size() != 1)
    return ctx.invalid("axis must be a scalar");
  std::optional<int64_t> axis = ctx.normalizeAxis((*axisValue)[0], rank);
  if (!axis)
    return failure();
  return ctx.setOutput(0, along(*axis));
}

} // namespace

void registerIndexingOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Gather", 1, any, importGather);
  r.add("OneHot", 9, any, importOneHot);
  r.add("Trilu", 14, any, importTrilu);
  r.add("CumSum", 11, any, importCumulative<false>);
  r.add("CumProd", 26, any, importCumulative<true>);
}

} // namespace kiln::onnx_frontend
