//===- Detection.cpp - ONNX NonMaxSuppression and RoiAlign ----------------===//
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
  if (t.hasStaticShape() && t.getNumElements() == 0) // an empty tensor: the default
    return {};
  // One element (a [?] length is checked when the model runs).
  if (t.getRank() > 1 || (t.getRank() == 1 && !t.isDynamicDim(0) && t.getDimSize(0) != 1)) {
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
  // The batch may be known only at run time; boxes and classes not.
  int64_t batches = boxType.getDimSize(0), n = boxType.getDimSize(1),
          classes = scoreType.getDimSize(1);
  if (ShapedType::isDynamic(n) || ShapedType::isDynamic(classes) ||
      scoreType.isDynamicDim(2))
    return ctx.unsupported("NonMaxSuppression with a box or class count known only at run time");
  if (scoreType.getDimSize(2) != n ||
      (!ShapedType::isDynamic(batches) && !scoreType.isDynamicDim(0) &&
       scoreType.getDimSize(0) != batches))
    return ctx.invalid("scores do not match the boxes");
  if (n > kMaxBoxes)
    return ctx.unsupported("NonMaxSuppression of more than " + llvm::Twine(kMaxBoxes) +
                           " boxes (its greedy selection is unrolled, one round per box)");
  if (!ShapedType::isDynamic(batches) && batches * classes * n > kMaxSelected)
    return ctx.unsupported("NonMaxSuppression listing more than " + llvm::Twine(kMaxSelected) +
                           " (batch, class, box) entries (the listing is quadratic)");
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
  // Without a score threshold every box is a candidate: s == s but NaN.
  Value candidate =
      scoreThreshold
          ? ctx.cast(compare(ctx, ComparePredicate::gt, s, scoreThreshold), i64)
          : ctx.make<MaxOp>(ctx.cast(compare(ctx, ComparePredicate::eq, s, s), i64),
                            i64Scalar(ctx, 1));
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
  Value positions = selectedPositions(ctx, ctx.make<ReshapeOp>(occupied, ctx.i64s({-1})));
  Value batch = ctx.make<DivOp>(positions, i64Scalar(ctx, classes * n));
  Value cls = ctx.make<RemOp>(ctx.make<DivOp>(positions, i64Scalar(ctx, n)), i64Scalar(ctx, classes));
  Value box = ctx.make<GatherOp>(ctx.make<ReshapeOp>(boxAt, ctx.i64s({-1})), positions,
                                 ctx.i64(0));
  SmallVector<Value> columns = {unsqueeze(ctx, batch, {1}), unsqueeze(ctx, cls, {1}),
                                unsqueeze(ctx, box, {1})};
  return ctx.setOutput(0, ctx.make<ConcatOp>(ValueRange(columns), ctx.i64(1)));
}

/// RoiAlign with a fixed sampling ratio s: every output bin of every roi
/// averages (or maxes) s x s bilinear samples of its batch entry's image,
/// each sample four gathers from the flattened X, as ONNX's reference
/// computes them (samples beyond [-1, size] count as zero; the max mode
/// takes the largest weighted corner). Layout [R, C, PH, SY, PW, SX].
LogicalResult importRoiAlign(NodeContext &ctx) {
  Value x = ctx.input(0), rois = ctx.input(1), batchIndices = ctx.input(2);
  RankedTensorType xType = NodeContext::typeOf(x), roiType = NodeContext::typeOf(rois);
  if (!xType || !roiType || !batchIndices)
    return failure();
  if (xType.getRank() != 4 || roiType.getRank() != 2 || roiType.getDimSize(1) != 4)
    return ctx.invalid("X must be [N, C, H, W] and rois [R, 4]");
  std::optional<int64_t> height = staticDim(ctx, x, 2, "RoiAlign");
  std::optional<int64_t> width = staticDim(ctx, x, 3, "RoiAlign");
  if (!height || !width)
    return failure();
  int64_t ratio = ctx.intAttr("sampling_ratio", 0);
  if (ratio <= 0)
    return ctx.unsupported("RoiAlign with an adaptive sampling ratio (sampling_ratio = 0: the "
                           "sample count depends on each roi's size)");
  int64_t ph = ctx.intAttr("output_height", 1), pw = ctx.intAttr("output_width", 1);
  if (ph <= 0 || pw <= 0)
    return ctx.invalid("output_height and output_width must be positive");
  std::string mode = ctx.stringAttr("mode", "avg");
  if (mode != "avg" && mode != "max")
    return ctx.invalid("mode must be avg or max");
  bool halfPixel = ctx.opset >= 16 &&
                   ctx.stringAttr("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  double scale = ctx.floatAttr("spatial_scale", 1.0f);
  Type element = xType.getElementType(), f = ctx.b.getF32Type(), i64 = ctx.b.getI64Type();
  auto c = [&](double v) { return ctx.scalar(f, v); };
  Value r = ctx.cast(rois, f);
  auto column = [&](int64_t k) { // [R, 1, 1, 1, 1, 1]
    Value v = ctx.make<SliceOp>(r, ctx.i64s({0, k}), ctx.i64s({INT64_MAX, k + 1}),
                                ctx.i64s({1, 1}));
    v = ctx.make<SubOp>(ctx.make<MulOp>(v, c(scale)), c(halfPixel ? 0.5 : 0.0));
    return ctx.make<ReshapeOp>(v, ctx.i64s({-1, 1, 1, 1, 1, 1}));
  };
  Value startW = column(0), startH = column(1), endW = column(2), endH = column(3);
  Value roiW = ctx.make<SubOp>(endW, startW), roiH = ctx.make<SubOp>(endH, startH);
  if (!halfPixel) {
    roiW = ctx.make<MaxOp>(roiW, c(1));
    roiH = ctx.make<MaxOp>(roiH, c(1));
  }
  Value binH = ctx.make<DivOp>(roiH, c(double(ph))), binW = ctx.make<DivOp>(roiW, c(double(pw)));
  auto iota6 = [&](int64_t n, int64_t at) {
    SmallVector<int64_t> shape(6, 1);
    shape[at] = n;
    return ctx.cast(iotaAlong(ctx, shape, at), f);
  };
  // Sample positions: y [R, 1, PH, SY, 1, 1], x [R, 1, 1, 1, PW, SX].
  auto samples = [&](Value start, Value bin, int64_t bins, int64_t binAt) {
    Value offset = ctx.make<DivOp>(ctx.make<MulOp>(ctx.make<AddOp>(iota6(ratio, binAt + 1), c(0.5)),
                                                   bin),
                                   c(double(ratio)));
    return ctx.make<AddOp>(ctx.make<AddOp>(start, ctx.make<MulOp>(iota6(bins, binAt), bin)), offset);
  };
  Value y = samples(startH, binH, ph, 2), xs = samples(startW, binW, pw, 4);
  // Per axis: low / high index, the weights of each, and whether inside.
  struct Axis {
    Value low, high, lowWeight, highWeight, inside;
  };
  auto axis = [&](Value v, int64_t size) {
    Axis a;
    a.inside = ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, v, c(-1)),
                               compare(ctx, ComparePredicate::le, v, c(double(size))));
    v = ctx.make<MaxOp>(v, c(0));
    Value low = ctx.make<FloorOp>(v);
    Value atEnd = compare(ctx, ComparePredicate::ge, low, c(double(size - 1)));
    low = ctx.make<SelectOp>(atEnd, c(double(size - 1)), low);
    v = ctx.make<SelectOp>(atEnd, low, v);
    Value high = ctx.make<SelectOp>(atEnd, low, ctx.make<AddOp>(low, c(1)));
    a.highWeight = ctx.make<SubOp>(v, low);
    a.lowWeight = ctx.make<SubOp>(c(1), a.highWeight);
    a.low = ctx.cast(low, i64);
    a.high = ctx.cast(high, i64);
    return a;
  };
  Axis ya = axis(y, *height), xa = axis(xs, *width);
  Value inside = ctx.cast(ctx.make<AndOp>(ya.inside, xa.inside), f);
  // Image base of each (roi, channel): (batch * C + c) * H * W.
  Value channels = dimValue(ctx, x, 1);
  Value batch = ctx.make<ReshapeOp>(ctx.cast(batchIndices, i64), ctx.i64s({-1, 1, 1, 1, 1, 1}));
  Value channel = ctx.make<ReshapeOp>(iotaOfLength(ctx, channels), ctx.i64s({1, -1, 1, 1, 1, 1}));
  Value base = ctx.make<MulOp>(ctx.make<AddOp>(ctx.make<MulOp>(batch, channels), channel),
                               i64Scalar(ctx, *height * *width));
  Value flat = ctx.make<ReshapeOp>(x, ctx.i64s({-1}));
  Value w = i64Scalar(ctx, *width);
  auto corner = [&](Value yi, Value xi, Value yw, Value xw) {
    Value index = ctx.make<AddOp>(base, ctx.make<AddOp>(ctx.make<MulOp>(yi, w), xi));
    Value weight = ctx.make<MulOp>(ctx.make<MulOp>(yw, xw), inside);
    Value value = ctx.make<GatherOp>(flat, index, ctx.i64(0));
    return ctx.make<MulOp>(value, ctx.cast(weight, element));
  };
  Value v1 = corner(ya.low, xa.low, ya.lowWeight, xa.lowWeight);
  Value v2 = corner(ya.low, xa.high, ya.lowWeight, xa.highWeight);
  Value v3 = corner(ya.high, xa.low, ya.highWeight, xa.lowWeight);
  Value v4 = corner(ya.high, xa.high, ya.highWeight, xa.highWeight);
  Value result;
  DenseI64ArrayAttr overSamples = ctx.i64s({3, 5});
  BoolAttr drop = ctx.b.getBoolAttr(false);
  if (mode == "avg") {
    Value sum = ctx.make<AddOp>(ctx.make<AddOp>(v1, v2), ctx.make<AddOp>(v3, v4));
    result = ctx.make<DivOp>(ctx.make<ReduceSumOp>(sum, overSamples, drop),
                             ctx.scalarLike(v1, double(ratio * ratio)));
  } else {
    Value best = ctx.make<MaxOp>(ctx.make<MaxOp>(v1, v2), ctx.make<MaxOp>(v3, v4));
    result = ctx.make<ReduceMaxOp>(best, overSamples, drop);
  }
  return ctx.setOutput(0, result);
}

} // namespace

void registerDetectionOps(OpRegistry &r) {
  r.add("NonMaxSuppression", 10, kAnyLaterOpset, importNonMaxSuppression);
  r.add("RoiAlign", 10, kAnyLaterOpset, importRoiAlign);
}

} // namespace kiln::onnx_frontend
