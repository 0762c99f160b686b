//===- GridSample.cpp - ONNX GridSample, AffineGrid and DeformConv --------===//
//
// GridSample reads X ([N, C, D1..Dr]) at the points a grid gives
// ([N, O1..Or, r], normalised to [-1, 1], innermost dim first). Each point
// is denormalised, moved inside by the padding mode, and interpolated from
// 1 (nearest), 2^r (linear) or 4^r (cubic) taps: each tap is one kiln.gather
// from the flattened X at (n * C + c) * |D| + the tap's offset, weighted by
// the product of its per-dim weights. The arithmetic follows ONNX's
// reference (ONNX 1.23's, and PyTorch's grid_sample): coordinates in f32
// (f64 for f64 grids), nearest rounds half to even. DeformConv samples X
// the same way (linear, zeros) at the kernel taps moved by its offsets,
// then contracts the samples with the weights as a grouped matmul.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

struct GridSampler {
  NodeContext &ctx;
  std::string mode;    // nearest | linear | cubic
  std::string padding; // zeros | border | reflection
  bool alignCorners;
  Type f; // coordinate type
  Type i64 = ctx.b.getI64Type();

  Value c(double v) { return ctx.scalar(f, v); }
  Value cmp(ComparePredicate p, Value a, Value b) { return compare(ctx, p, a, b); }
  Value select(Value cond, Value a, Value b) { return ctx.make<SelectOp>(cond, a, b); }
  Value add(Value a, Value b) { return ctx.make<AddOp>(a, b); }
  Value sub(Value a, Value b) { return ctx.make<SubOp>(a, b); }
  Value mul(Value a, Value b) { return ctx.make<MulOp>(a, b); }
  Value clamp(Value v, double lo, double hi) {
    return ctx.make<MinOp>(ctx.make<MaxOp>(v, c(lo)), c(hi));
  }

  /// Borders of a dim of `size` entries: where sample centres may lie.
  std::pair<double, double> borders(int64_t size) const {
    return alignCorners ? std::pair(0.0, double(size - 1)) : std::pair(-0.5, size - 0.5);
  }

  /// Reflects `x` by the borders until it lies between them.
  Value reflect(Value x, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0)
      return ctx.make<MaxOp>(ctx.make<MinOp>(x, c(lo)), c(lo)); // a single point
    auto fold = [&](Value distance, Value evenBase, Value oddBase, bool evenAdds) {
      // n whole ranges travelled, r the rest; even n keeps the direction.
      Value n = ctx.make<FloorOp>(ctx.make<DivOp>(distance, c(range)));
      Value r = sub(distance, mul(n, c(range)));
      Value half = ctx.make<FloorOp>(ctx.make<DivOp>(n, c(2)));
      Value even = cmp(ComparePredicate::eq, sub(n, mul(half, c(2))), c(0));
      Value a = evenAdds ? add(evenBase, r) : sub(evenBase, r);
      Value b = evenAdds ? sub(oddBase, r) : add(oddBase, r);
      return select(even, a, b);
    };
    Value below = fold(sub(c(lo), x), c(lo), c(hi), true);
    Value above = fold(sub(x, c(hi)), c(hi), c(lo), false);
    return select(cmp(ComparePredicate::lt, x, c(lo)), below,
                  select(cmp(ComparePredicate::gt, x, c(hi)), above, x));
  }

  /// The denormalised coordinate of grid values `g` along a dim of `size`,
  /// rounded for nearest and moved inside by border or reflection padding.
  Value coordinate(Value g, int64_t size) {
    Value x = alignCorners ? mul(ctx.make<DivOp>(add(g, c(1)), c(2)), c(double(size - 1)))
                           : ctx.make<DivOp>(sub(mul(add(g, c(1)), c(double(size))), c(1)), c(2));
    if (mode == "nearest")
      x = ctx.make<RoundOp>(x); // half to even, in every dimension count
    auto [lo, hi] = borders(size);
    if (padding == "border")
      return clamp(x, 0, double(size - 1));
    if (padding == "reflection")
      return reflect(x, lo, hi);
    return x;
  }

  /// Tap `index` (f, whole) of a dim of `size`: the index it reads (i64,
  /// in range) and, for zeros padding, whether it lies inside.
  std::pair<Value, Value> tap(Value index, int64_t size) {
    Value inside;
    if (padding == "zeros") {
      inside = ctx.make<AndOp>(cmp(ComparePredicate::ge, index, c(0)),
                               cmp(ComparePredicate::le, index, c(double(size - 1))));
    } else if (padding == "reflection") {
      auto [lo, hi] = borders(size);
      Value r = reflect(index, lo, hi);
      // Truncated towards zero, as the reference's int().
      index = select(cmp(ComparePredicate::lt, r, c(0)), ctx.make<CeilOp>(r),
                     ctx.make<FloorOp>(r));
    }
    return {ctx.cast(clamp(index, 0, double(size - 1)), i64), inside};
  }

};

LogicalResult importGridSample(NodeContext &ctx) {
  Value x = ctx.input(0), grid = ctx.input(1);
  RankedTensorType xType = NodeContext::typeOf(x), gridType = NodeContext::typeOf(grid);
  if (!xType || !gridType)
    return failure();
  int64_t rank = xType.getRank(), spatial = rank - 2;
  if (rank < 3)
    return ctx.invalid("X must be [N, C, D...]");
  if (ctx.opset < 20 && rank != 4)
    return ctx.invalid("GridSample before opset 20 takes a 4-D X");
  if (gridType.getRank() != rank || gridType.getShape().back() != spatial)
    return ctx.invalid("grid must be [N, D_out..., " + llvm::Twine(spatial) + "]");
  if (!isa<FloatType>(xType.getElementType()) || !isa<FloatType>(gridType.getElementType()))
    return ctx.unsupported("GridSample of non-float tensors");
  SmallVector<int64_t> sizes;
  for (int64_t d = 0; d < spatial; ++d) {
    std::optional<int64_t> size = staticDim(ctx, x, d + 2, "GridSample");
    if (!size)
      return failure();
    sizes.push_back(*size);
  }
  std::string mode = ctx.stringAttr("mode", ctx.opset < 20 ? "bilinear" : "linear");
  if (mode == "bilinear" && ctx.opset < 20)
    mode = "linear";
  else if (mode == "bicubic" && ctx.opset < 20)
    mode = "cubic";
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return ctx.invalid("mode '" + mode + "'");
  std::string padding = ctx.stringAttr("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.invalid("padding_mode '" + padding + "'");
  Type f = gridType.getElementType().isF64() ? Type(ctx.b.getF64Type()) : ctx.b.getF32Type();
  GridSampler s{ctx, mode, padding, ctx.intAttr("align_corners", 0) != 0, f};

  // Per dim (X's order): the point's coordinate, [N, O...].
  SmallVector<Value> coords;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t component = spatial - 1 - d;
    SmallVector<int64_t> starts(rank, 0), ends(rank, INT64_MAX), steps(rank, 1);
    starts[rank - 1] = component;
    ends[rank - 1] = component + 1;
    Value g = squeeze(ctx, ctx.make<SliceOp>(grid, ctx.i64s(starts), ctx.i64s(ends),
                                             ctx.i64s(steps)),
                      {rank - 1});
    coords.push_back(s.coordinate(ctx.cast(g, f), sizes[d]));
  }
  // Per dim: the taps' first index and their weights.
  int64_t taps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
  SmallVector<Value> firsts;
  SmallVector<SmallVector<Value>> weights(spatial);
  for (int64_t d = 0; d < spatial; ++d) {
    if (taps == 1) {
      firsts.push_back(coords[d]);
      continue;
    }
    Value base = ctx.make<FloorOp>(coords[d]);
    Value frac = s.sub(coords[d], base);
    firsts.push_back(taps == 4 ? s.sub(base, s.c(1)) : base);
    for (int64_t t = 0; t < taps; ++t)
      weights[d].push_back(taps == 2 ? (t == 0 ? s.sub(s.c(1), frac) : frac)
                                     : cubicWeight(ctx, s.add(frac, s.c(double(1 - t))), -0.75));
  }
  // Each (n, c) image starts at (n * C + c) * |D| of the flattened X.
  int64_t pixels = 1;
  SmallVector<int64_t> strides(spatial, 1);
  for (int64_t d = spatial - 1; d >= 0; --d) {
    strides[d] = pixels;
    pixels *= sizes[d];
  }
  Value channels = dimValue(ctx, x, 1);
  Value image = ctx.make<MulOp>(
      ctx.make<AddOp>(ctx.make<MulOp>(iotaOfDim(ctx, x, 0, rank, 0), channels),
                      iotaOfDim(ctx, x, 1, rank, 1)),
      i64Scalar(ctx, pixels));
  Value flat = ctx.make<ReshapeOp>(x, ctx.i64s({-1}));
  Type element = xType.getElementType();
  Value result;
  int64_t combos = 1;
  for (int64_t d = 0; d < spatial; ++d)
    combos *= taps;
  for (int64_t k = 0; k < combos; ++k) {
    Value offset, weight, inside;
    for (int64_t d = 0, rest = k; d < spatial; ++d, rest /= taps) {
      int64_t t = rest % taps;
      auto [index, valid] = s.tap(t == 0 ? firsts[d] : s.add(firsts[d], s.c(double(t))), sizes[d]);
      Value term = ctx.make<MulOp>(index, i64Scalar(ctx, strides[d]));
      offset = offset ? ctx.make<AddOp>(offset, term) : term;
      if (taps > 1)
        weight = weight ? s.mul(weight, weights[d][t]) : weights[d][t];
      if (valid)
        inside = inside ? ctx.make<AndOp>(inside, valid) : valid;
    }
    if (inside)
      weight = s.select(inside, weight ? weight : s.c(1), s.c(0));
    Value picked = ctx.make<GatherOp>(flat, ctx.make<AddOp>(image, unsqueeze(ctx, offset, {1})),
                                      ctx.i64(0));
    Value term = weight ? ctx.make<MulOp>(picked, unsqueeze(ctx, ctx.cast(weight, element), {1}))
                        : picked;
    result = result ? ctx.make<AddOp>(result, term) : term;
  }
  return ctx.setOutput(0, result);
}

/// AffineGrid (opset 20): the sampling grid ([N, D..., r]) an affine map
/// theta ([N, r, r + 1]) makes of the normalised output positions, whose
/// counts (`size`, [N, C, D...]) may be read at run time.
LogicalResult importAffineGrid(NodeContext &ctx) {
  Value theta = ctx.input(0);
  Value size = runtimeInts(ctx, 1);
  RankedTensorType thetaType = NodeContext::typeOf(theta), sizeType = NodeContext::typeOf(size);
  if (!thetaType || !sizeType)
    return failure();
  if (!isa<FloatType>(thetaType.getElementType()))
    return ctx.invalid("theta must hold floats");
  int64_t spatial = thetaType.getRank() == 3 ? thetaType.getDimSize(1) : 0;
  if ((spatial != 2 && spatial != 3) || thetaType.getDimSize(2) != spatial + 1)
    return ctx.invalid("theta must be [N, 2, 3] or [N, 3, 4]");
  if (sizeType.getRank() != 1 || sizeType.getDimSize(0) != spatial + 2)
    return ctx.invalid("size must be [N, C, D...] with one entry per theta row and two more");
  bool alignCorners = ctx.intAttr("align_corners", 0) != 0;
  Type element = thetaType.getElementType();
  Type f = element.isF64() ? Type(ctx.b.getF64Type()) : ctx.b.getF32Type();
  auto c = [&](double v) { return ctx.scalar(f, v); };
  // Normalised positions along each output dim (in theta's column order:
  // the innermost dim first), laid out to broadcast over [N, D...].
  int64_t rank = spatial + 1;
  SmallVector<Value> positions;
  for (int64_t k = 0; k < spatial; ++k) {
    int64_t dim = spatial - 1 - k; // size index 2 + dim; output dim 1 + dim
    Value length = ctx.cast(entryOf(ctx, size, 2 + dim), f);
    Value i = ctx.cast(iotaOfLength(ctx, entryOf(ctx, size, 2 + dim)), f);
    Value p;
    if (alignCorners) {
      Value span = ctx.make<SubOp>(length, c(1));
      Value safe = ctx.make<SelectOp>(compare(ctx, ComparePredicate::gt, span, c(0)), span, c(1));
      p = ctx.make<SubOp>(ctx.make<DivOp>(ctx.make<MulOp>(i, c(2)), safe), c(1));
    } else {
      p = ctx.make<SubOp>(ctx.make<DivOp>(ctx.make<AddOp>(ctx.make<MulOp>(i, c(2)), c(1)), length),
                          c(1));
    }
    SmallVector<int64_t> spread(rank, 1);
    spread[1 + dim] = -1;
    positions.push_back(ctx.make<ReshapeOp>(p, ctx.i64s(spread)));
  }
  // grid[..., j] = sum_k theta[n, j, k] * position_k + theta[n, j, r].
  Value t = ctx.cast(theta, f);
  auto entry = [&](int64_t j, int64_t k) {
    Value e = ctx.make<SliceOp>(t, ctx.i64s({0, j, k}), ctx.i64s({INT64_MAX, j + 1, k + 1}),
                                ctx.i64s({1, 1, 1}));
    SmallVector<int64_t> perBatch(rank, 1);
    perBatch[0] = -1;
    return ctx.make<ReshapeOp>(e, ctx.i64s(perBatch));
  };
  SmallVector<Value> components;
  for (int64_t j = 0; j < spatial; ++j) {
    Value sum = entry(j, spatial);
    for (int64_t k = 0; k < spatial; ++k)
      sum = ctx.make<AddOp>(sum, ctx.make<MulOp>(entry(j, k), positions[k]));
    components.push_back(unsqueeze(ctx, sum, {rank}));
  }
  Value grid = ctx.make<ConcatOp>(ValueRange(components), ctx.i64(rank));
  return ctx.setOutput(0, ctx.cast(grid, element));
}

/// DeformConv (opset 19), 2-D: each kernel tap of each output position
/// reads X at the tap's position moved by `offset` ([N, G * kh * kw * 2,
/// Ho, Wo], y then x, per offset group G of the channels), interpolated
/// bilinearly (zero outside, as ONNX's reference's GridSample with
/// align_corners), scaled by `mask` (ones when absent); the samples are
/// contracted with W per convolution group, plus B. Static channels,
/// spatial dims and kernel.
LogicalResult importDeformConv(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1), offset = ctx.input(2);
  Value bias = ctx.optionalInput(3), mask = ctx.optionalInput(4);
  if (!x || !w || !offset)
    return failure();
  RankedTensorType xt = NodeContext::typeOf(x), wt = NodeContext::typeOf(w),
                   ot = NodeContext::typeOf(offset);
  if (xt.getRank() != 4 || wt.getRank() != 4 || ot.getRank() != 4)
    return ctx.unsupported("DeformConv other than 2-D");
  for (int64_t d = 1; d < 4; ++d)
    if (xt.isDynamicDim(d) || ot.isDynamicDim(d) || wt.isDynamicDim(d - 1) || wt.isDynamicDim(d))
      return ctx.unsupported("channels, spatial dims or kernel decided at run time");
  int64_t c = xt.getDimSize(1), h = xt.getDimSize(2), wd = xt.getDimSize(3);
  int64_t o = wt.getDimSize(0), cpg = wt.getDimSize(1), kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  int64_t ho = ot.getDimSize(2), wo = ot.getDimSize(3);
  SmallVector<int64_t> kernel = ctx.intsAttr("kernel_shape");
  if (!kernel.empty() && (kernel.size() != 2 || kernel[0] != kh || kernel[1] != kw))
    return ctx.invalid("kernel_shape differs from W's");
  int64_t group = ctx.intAttr("group", 1), offsetGroups = ctx.intAttr("offset_group", 1);
  if (group < 1 || c != cpg * group || o % group != 0)
    return ctx.invalid("X's channels, W's shape and group do not fit");
  if (offsetGroups < 1 || c % offsetGroups != 0 ||
      ot.getDimSize(1) != offsetGroups * kh * kw * 2)
    return ctx.invalid("offset's channels must be offset_group * kh * kw * 2");
  SmallVector<int64_t> dil = ctx.intsAttr("dilations"), pads = ctx.intsAttr("pads"),
                       strides = ctx.intsAttr("strides");
  if (dil.empty())
    dil = {1, 1};
  if (pads.empty())
    pads = {0, 0, 0, 0};
  if (strides.empty())
    strides = {1, 1};
  if (dil.size() != 2 || pads.size() != 4 || strides.size() != 2)
    return ctx.invalid("dilations, pads and strides must have 2, 4 and 2 entries");
  if (ho != (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / strides[0] + 1 ||
      wo != (wd + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / strides[1] + 1)
    return ctx.invalid("offset's spatial dims do not fit the padding, dilation, stride and "
                       "kernel");
  Type f = xt.getElementType();
  int64_t g = offsetGroups, cg = c / g;
  GridSampler s{ctx, "linear", "zeros", true, f};
  // Tap positions: [N, G, kh, kw, Ho, Wo].
  Value off = ctx.make<ReshapeOp>(offset, ctx.i64s({0, g, kh, kw, 2, ho, wo}));
  auto part = [&](int64_t k) {
    SmallVector<int64_t> starts(7, 0), ends(7, INT64_MAX), steps(7, 1);
    starts[4] = k;
    ends[4] = k + 1;
    return squeeze(ctx, ctx.make<SliceOp>(off, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps)),
                   {4});
  };
  auto base = [&](int64_t kernelAxis, int64_t outAxis, int64_t k, int64_t n, int64_t pad,
                  int64_t stride, int64_t dilation) {
    SmallVector<int64_t> shape(6, 1);
    shape[kernelAxis] = k;
    shape[outAxis] = n;
    return generateConstant(ctx, RankedTensorType::get(shape, f), [&](int64_t flat) {
      int64_t a = flat / n, i = flat % n; // [.., k, .., n, ..] row-major
      return double(-pad + stride * i + dilation * a);
    });
  };
  Value py = s.add(part(0), base(2, 4, kh, ho, pads[0], strides[0], dil[0]));
  Value px = s.add(part(1), base(3, 5, kw, wo, pads[1], strides[1], dil[1]));
  Value y0 = ctx.make<FloorOp>(py), x0 = ctx.make<FloorOp>(px);
  Value fy = s.sub(py, y0), fx = s.sub(px, x0);
  // flat[n, g, cg]: where image (n, g * cg + channel) starts in flattened X.
  Value planes = ctx.make<AddOp>(
      ctx.make<MulOp>(iotaOfDim(ctx, x, 0, 7, 0), i64Scalar(ctx, c)),
      ctx.indices([&] {
        SmallVector<int64_t> v;
        for (int64_t i = 0; i < c; ++i)
          v.push_back(i);
        return v;
      }()));
  planes = ctx.make<MulOp>(
      ctx.make<ReshapeOp>(planes, ctx.i64s({0, g, cg, 1, 1, 1, 1})), i64Scalar(ctx, h * wd));
  Value flatX = ctx.make<ReshapeOp>(x, ctx.i64s({-1}));
  Value sampled;
  for (int64_t dy = 0; dy < 2; ++dy)
    for (int64_t dx = 0; dx < 2; ++dx) {
      auto [iy, insideY] = s.tap(dy ? s.add(y0, s.c(1)) : y0, h);
      auto [ix, insideX] = s.tap(dx ? s.add(x0, s.c(1)) : x0, wd);
      Value weight = s.mul(dy ? fy : s.sub(s.c(1), fy), dx ? fx : s.sub(s.c(1), fx));
      weight = s.select(ctx.make<AndOp>(insideY, insideX), weight, s.c(0));
      Value at = ctx.make<AddOp>(ctx.make<MulOp>(iy, i64Scalar(ctx, wd)), ix);
      Value index = ctx.make<AddOp>(planes, unsqueeze(ctx, at, {2}));
      Value tap = s.mul(ctx.make<GatherOp>(flatX, index, ctx.i64(0)), unsqueeze(ctx, weight, {2}));
      sampled = sampled ? s.add(sampled, tap) : tap;
    }
  if (mask)
    sampled = s.mul(sampled, unsqueeze(ctx, ctx.make<ReshapeOp>(mask, ctx.i64s({0, g, kh, kw, ho, wo})),
                                       {2}));
  // [N, group, Cpg * kh * kw, Ho * Wo] against W as [group, O / group, Cpg * kh * kw].
  Value columns = ctx.make<ReshapeOp>(sampled, ctx.i64s({0, group, cpg * kh * kw, ho * wo}));
  Value weights = ctx.make<ReshapeOp>(w, ctx.i64s({group, o / group, cpg * kh * kw}));
  Value y = ctx.make<ReshapeOp>(numpyMatmul(ctx, weights, columns), ctx.i64s({0, o, ho, wo}));
  if (bias)
    y = ctx.make<AddOp>(y, ctx.make<ReshapeOp>(bias, ctx.i64s({1, o, 1, 1})));
  return ctx.setOutput(0, y);
}

} // namespace

void registerGridSampleOps(OpRegistry &r) {
  r.add("GridSample", 16, kAnyLaterOpset, importGridSample);
  r.add("AffineGrid", 20, kAnyLaterOpset, importAffineGrid);
  r.add("DeformConv", 19, kAnyLaterOpset, importDeformConv);
}

} // namespace kiln::onnx_frontend
