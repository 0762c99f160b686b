//===- Detection.cpp - ONNX NonMaxSuppression -----------------------------===//
//
// NonMaxSuppression without a sort or a loop over boxes: for every batch and
// class, box j goes before box i when it scores higher (ties: the lower
// index), and the greedy selection is the fixed point of
//   keep[i] = candidate[i] and no kept j before i overlaps i (IoU > threshold),
// which N rounds of that update reach (after round t the t highest-ranked
// decisions are final). The first max_output_boxes_per_class kept boxes (in
// rank order) are selected, and the selection is listed by batch, class and
// rank, as ONNX's reference does. The rounds are unrolled, so the box count
// is bounded; the count selected is decided at run time.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

constexpr int64_t kMaxBoxes = 128;

/// Dim `k` of every box ([B, N, 4]) as [B, N].
Value boxColumn(NodeContext &ctx, Value boxes, int64_t k) {
  Value column = ctx.make<SliceOp>(boxes, ctx.i64s({0, 0, k}),
                                   ctx.i64s({INT64_MAX, INT64_MAX, k + 1}), ctx.i64s({1, 1, 1}));
  return squeeze(ctx, column, {2});
}

/// An optional scalar input as a rank-0 tensor of `type`, or null.
Value optionalScalar(NodeContext &ctx, size_t i, Type type) {
  if (!ctx.hasInput(i))
    return {};
  Value v = ctx.input(i);
  RankedTensorType t = NodeContext::typeOf(v);
  if (!t)
    return {};
  if (t.getNumElements() == 0) // an empty tensor: the default
    return {};
  if (t.getRank() > 1 || (t.getRank() == 1 && t.getDimSize(0) != 1)) {
    ctx.invalid("input " + llvm::Twine(i) + " must be a scalar");
    return {};
  }
  return ctx.cast(asScalar(ctx, v), type);
}

LogicalResult importNonMaxSuppression(NodeContext &ctx) {
  Value boxes = ctx.input(0), scores = ctx.input(1);
  RankedTensorType boxType = NodeContext::typeOf(boxes), scoreType = NodeContext::typeOf(scores);
  if (!boxType || !scoreType)
    return failure();
  if (boxType.getRank() != 3 || scoreType.getRank() != 3 || boxType.getDimSize(2) != 4)
    return ctx.invalid("boxes must be [B, N, 4] and scores [B, C, N]");
  if (!boxType.hasStaticShape() || !scoreType.hasStaticShape())
    return ctx.unsupported("NonMaxSuppression with dims known only at run time");
  int64_t batches = boxType.getDimSize(0), n = boxType.getDimSize(1),
          classes = scoreType.getDimSize(1);
  if (scoreType.getDimSize(0) != batches || scoreType.getDimSize(2) != n)
    return ctx.invalid("scores do not match the boxes");
  if (n > kMaxBoxes)
    return ctx.unsupported("NonMaxSuppression of more than " + llvm::Twine(kMaxBoxes) +
                           " boxes (its greedy selection is unrolled, one round per box)");
  if (batches * classes * n > 4096)
    return ctx.unsupported("NonMaxSuppression listing more than 4096 (batch, class, box) "
                           "entries (the listing is quadratic)");
  Type f = ctx.b.getF32Type(), i64 = ctx.b.getI64Type();
  Value limit = optionalScalar(ctx, 2, i64);
  Value iouThreshold = optionalScalar(ctx, 3, f);
  Value scoreThreshold = optionalScalar(ctx, 4, f);
  if (ctx.failed())
    return failure();
  if (!limit)
    limit = i64Scalar(ctx, 0);
  if (!iouThreshold)
    iouThreshold = ctx.scalar(f, 0);
  // Box extents [B, N].
  Value b = ctx.cast(boxes, f);
  Value xMin, xMax, yMin, yMax;
  if (ctx.intAttr("center_point_box", 0) == 0) {
    Value y1 = boxColumn(ctx, b, 0), x1 = boxColumn(ctx, b, 1), y2 = boxColumn(ctx, b, 2),
          x2 = boxColumn(ctx, b, 3);
    xMin = ctx.make<MinOp>(x1, x2), xMax = ctx.make<MaxOp>(x1, x2);
    yMin = ctx.make<MinOp>(y1, y2), yMax = ctx.make<MaxOp>(y1, y2);
  } else {
    Value half = ctx.scalar(f, 0.5);
    Value xc = boxColumn(ctx, b, 0), yc = boxColumn(ctx, b, 1);
    Value w = ctx.make<MulOp>(boxColumn(ctx, b, 2), half),
          h = ctx.make<MulOp>(boxColumn(ctx, b, 3), half);
    xMin = ctx.make<SubOp>(xc, w), xMax = ctx.make<AddOp>(xc, w);
    yMin = ctx.make<SubOp>(yc, h), yMax = ctx.make<AddOp>(yc, h);
  }
  // overlaps[b, i, j]: IoU(i, j) > threshold, as ONNX's reference decides.
  auto pairs = [&](Value v, bool lo) { // [B, N, 1] against [B, 1, N]
    Value i = unsqueeze(ctx, v, {2}), j = unsqueeze(ctx, v, {1});
    return lo ? ctx.make<MaxOp>(i, j) : ctx.make<MinOp>(i, j);
  };
  Value zero = ctx.scalar(f, 0);
  Value ix = ctx.make<SubOp>(pairs(xMax, false), pairs(xMin, true));
  Value iy = ctx.make<SubOp>(pairs(yMax, false), pairs(yMin, true));
  Value area = ctx.make<MulOp>(ctx.make<SubOp>(xMax, xMin), ctx.make<SubOp>(yMax, yMin));
  Value areaI = unsqueeze(ctx, area, {2}), areaJ = unsqueeze(ctx, area, {1});
  Value inter = ctx.make<MulOp>(ix, iy);
  Value unionArea = ctx.make<SubOp>(ctx.make<AddOp>(areaI, areaJ), inter);
  auto positive = [&](Value v) { return compare(ctx, ComparePredicate::gt, v, zero); };
  Value valid = ctx.make<AndOp>(
      ctx.make<AndOp>(ctx.make<AndOp>(positive(ix), positive(iy)), positive(inter)),
      ctx.make<AndOp>(ctx.make<AndOp>(positive(areaI), positive(areaJ)), positive(unionArea)));
  Value safeUnion = ctx.make<SelectOp>(positive(unionArea), unionArea, ctx.scalar(f, 1));
  Value overlaps = ctx.make<AndOp>(
      valid, compare(ctx, ComparePredicate::gt, ctx.make<DivOp>(inter, safeUnion), iouThreshold));
  Value overlapsPerClass = ctx.cast(unsqueeze(ctx, overlaps, {1}), i64); // [B, 1, N, N]
  // before[b, c, i, j]: j ranks above i.
  Value s = ctx.cast(scores, f);
  Value si = unsqueeze(ctx, s, {3}), sj = unsqueeze(ctx, s, {2}); // [B,C,N,1], [B,C,1,N]
  Value lowerIndex = generateConstant(ctx, RankedTensorType::get({n, n}, ctx.b.getI1Type()),
                                      [&](int64_t flat) { return flat % n < flat / n ? 1.0 : 0.0; });
  Value before = ctx.cast(
      ctx.make<OrOp>(compare(ctx, ComparePredicate::gt, sj, si),
                     ctx.make<AndOp>(compare(ctx, ComparePredicate::eq, sj, si), lowerIndex)),
      i64);
  Value blocks = ctx.make<MulOp>(before, overlapsPerClass); // [B, C, N, N]
  Value candidate =
      scoreThreshold
          ? ctx.cast(compare(ctx, ComparePredicate::gt, s, scoreThreshold), i64)
          : generateConstant(ctx, RankedTensorType::get({batches, classes, n}, i64),
                             [](int64_t) { return 1.0; });
  // The greedy fixed point: N rounds.
  Value keep = candidate; // [B, C, N]
  for (int64_t round = 0; round < n; ++round) {
    Value blocked = ctx.make<ReduceSumOp>(ctx.make<MulOp>(blocks, unsqueeze(ctx, keep, {2})),
                                          ctx.i64s({3}), ctx.b.getBoolAttr(false));
    keep = ctx.make<MulOp>(candidate, ctx.cast(compare(ctx, ComparePredicate::eq, blocked,
                                                       i64Scalar(ctx, 0)),
                                               i64));
  }
  // Rank among the kept; the first `limit` are selected.
  Value rankOf = ctx.make<ReduceSumOp>(ctx.make<MulOp>(before, unsqueeze(ctx, keep, {2})),
                                       ctx.i64s({3}), ctx.b.getBoolAttr(false)); // [B, C, N]
  Value selected = ctx.make<AndOp>(compare(ctx, ComparePredicate::ne, keep, i64Scalar(ctx, 0)),
                                   compare(ctx, ComparePredicate::lt, rankOf, limit));
  // slot[b, c, r] holds the box of rank r (if selected): listed in order.
  Value ranks = iotaAlong(ctx, {1, 1, n, 1}, 2);                           // r
  Value hit = ctx.make<AndOp>(compare(ctx, ComparePredicate::eq, unsqueeze(ctx, rankOf, {2}), ranks),
                              unsqueeze(ctx, selected, {2}));                // [B, C, r, i]
  Value hitI64 = ctx.cast(hit, i64);
  Value occupied = ctx.make<ReduceSumOp>(hitI64, ctx.i64s({3}), ctx.b.getBoolAttr(false));
  Value boxAt = ctx.make<ReduceSumOp>(ctx.make<MulOp>(hitI64, iotaAlong(ctx, {1, 1, 1, n}, 3)),
                                      ctx.i64s({3}), ctx.b.getBoolAttr(false)); // [B, C, N]
  int64_t total = batches * classes * n;
  Value positions = selectedPositions(ctx, ctx.make<ReshapeOp>(occupied, ctx.i64s({total})), total);
  Value batch = ctx.make<DivOp>(positions, i64Scalar(ctx, classes * n));
  Value cls = ctx.make<RemOp>(ctx.make<DivOp>(positions, i64Scalar(ctx, n)), i64Scalar(ctx, classes));
  Value box = ctx.make<GatherOp>(ctx.make<ReshapeOp>(boxAt, ctx.i64s({total})), positions,
                                 ctx.i64(0));
  SmallVector<Value> columns = {unsqueeze(ctx, batch, {1}), unsqueeze(ctx, cls, {1}),
                                unsqueeze(ctx, box, {1})};
  return ctx.setOutput(0, ctx.make<ConcatOp>(ValueRange(columns), ctx.i64(1)));
}

} // namespace

void registerDetectionOps(OpRegistry &r) {
  r.add("NonMaxSuppression", 10, kAnyLaterOpset, importNonMaxSuppression);
}

} // namespace kiln::onnx_frontend
