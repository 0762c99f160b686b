//===- Resize.cpp - ONNX Resize and Upsample -------------------------------===//
//
// Resizing is separable: each resized axis is one step. For every output
// coordinate the source coordinate is computed at import time (static
// sizes), so nearest becomes one kiln.gather with constant indices and
// linear / cubic a weighted sum of 2 / 4 gathers with constant weights.
// When the scales or sizes are run-time values, or the resized dim's length
// is, the same arithmetic is built on tensors and runs with the model.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

struct ResizeMode {
  std::string mode = "nearest";         // nearest | linear | cubic
  std::string transform = "half_pixel"; // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;      // linear / cubic: a wider filter when downsampling
  double extrapolation = 0.0;  // tf_crop_and_resize: the value outside the roi
};

/// Source coordinate of output index `x` along an axis.
double sourceCoordinate(const ResizeMode &m, int64_t x, int64_t in, int64_t out,
                        double scale) {
  if (m.transform == "align_corners") {
    // ONNX divides by the unrounded resized length, in * scale.
    double resized = double(in) * scale - 1;
    return resized <= 0 ? 0.0 : x * double(in - 1) / resized;
  }
  if (m.transform == "asymmetric")
    return x / scale;
  if (m.transform == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (m.transform == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m.transform == "half_pixel_symmetric") {
    // The centre of the input maps to the centre of the whole output.
    double adjustment = double(out) / (scale * double(in));
    return double(in) / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

int64_t nearestIndex(const ResizeMode &m, double c, int64_t in) {
  double r;
  if (m.nearest == "floor")
    r = std::floor(c);
  else if (m.nearest == "ceil")
    r = std::ceil(c);
  else if (m.nearest == "round_prefer_ceil")
    r = std::floor(c + 0.5);
  else // round_prefer_floor
    r = c == std::floor(c) + 0.5 ? std::floor(c) : std::round(c);
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
}

double cubicWeight(double a, double t) {
  t = std::abs(t);
  if (t <= 1)
    return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2)
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

/// Resizes `v` along `axis` from `in` to `out` entries.
Value resizeAxis(NodeContext &ctx, const ResizeMode &m, Value v, int64_t axis,
                 int64_t in, int64_t out, double scale) {
  int64_t rank = NodeContext::rankOf(v);
  Type element = NodeContext::elementTypeOf(v);
  int64_t taps = m.mode == "nearest" ? 1 : m.mode == "linear" ? 2 : 4;
  // indices[t][x] and weights[t][x] for tap t of output x.
  SmallVector<SmallVector<int64_t>> indices(taps, SmallVector<int64_t>(out));
  SmallVector<SmallVector<double>> weights(taps, SmallVector<double>(out, 1.0));
  for (int64_t x = 0; x < out; ++x) {
    double c = sourceCoordinate(m, x, in, out, scale);
    if (taps == 1) {
      indices[0][x] = nearestIndex(m, c, in);
      continue;
    }
    double base = std::floor(c), frac = c - base;
    int64_t first = static_cast<int64_t>(base) - (taps == 4 ? 1 : 0);
    double total = 0;
    for (int64_t t = 0; t < taps; ++t) {
      int64_t src = first + t;
      double w = taps == 2 ? (t == 0 ? 1 - frac : frac)
                           : cubicWeight(m.cubicA, frac + 1 - t);
      if (m.excludeOutside && (src < 0 || src >= in))
        w = 0;
      indices[t][x] = std::clamp<int64_t>(src, 0, in - 1);
      weights[t][x] = w;
      total += w;
    }
    if (m.excludeOutside && total != 0)
      for (int64_t t = 0; t < taps; ++t)
        weights[t][x] /= total;
  }
  Value result;
  for (int64_t t = 0; t < taps; ++t) {
    Value picked = ctx.make<GatherOp>(v, ctx.indices(indices[t]), ctx.i64(axis));
    if (taps == 1)
      return picked;
    SmallVector<int64_t> shape(rank, 1);
    shape[axis] = out;
    Value w = generateConstant(ctx, RankedTensorType::get(shape, element),
                               [&](int64_t i) { return weights[t][i]; });
    Value term = ctx.make<MulOp>(picked, w);
    result = result ? ctx.make<AddOp>(result, term) : term;
  }
  return result;
}

/// Resizing with scales or sizes read when the model runs: the same
/// arithmetic as above, on tensors. Every axis is resized (one whose
/// scale is 1 maps each entry to itself).
struct RuntimeResize {
  NodeContext &ctx;
  const ResizeMode &m;
  Type f64 = ctx.b.getF64Type(), i64 = ctx.b.getI64Type();

  Value c(double v) { return ctx.scalar(f64, v); }
  Value select(Value cond, Value a, Value b) { return ctx.make<SelectOp>(cond, a, b); }
  Value cmp(ComparePredicate p, Value a, Value b) { return compare(ctx, p, a, b); }
  Value add(Value a, Value b) { return ctx.make<AddOp>(a, b); }
  Value sub(Value a, Value b) { return ctx.make<SubOp>(a, b); }
  Value mul(Value a, Value b) { return ctx.make<MulOp>(a, b); }
  Value div(Value a, Value b) { return ctx.make<DivOp>(a, b); }

  /// Source coordinates of outputs `x` (f64) along an axis.
  Value sourceCoordinate(Value x, Value in, Value out, Value scale) {
    if (m.transform == "align_corners") {
      Value resized = sub(mul(in, scale), c(1));
      Value positive = cmp(ComparePredicate::gt, resized, c(0));
      Value safe = select(positive, resized, c(1));
      return select(positive, div(mul(x, sub(in, c(1))), safe), c(0));
    }
    if (m.transform == "asymmetric")
      return div(x, scale);
    if (m.transform == "tf_half_pixel_for_nn")
      return div(add(x, c(0.5)), scale);
    Value halfPixel = sub(div(add(x, c(0.5)), scale), c(0.5));
    if (m.transform == "pytorch_half_pixel")
      return select(cmp(ComparePredicate::gt, out, c(1)), halfPixel, c(0));
    if (m.transform == "half_pixel_symmetric") {
      Value adjustment = div(out, mul(scale, in));
      return add(mul(div(in, c(2)), sub(c(1), adjustment)), halfPixel);
    }
    return halfPixel;
  }

  /// tf_crop_and_resize: outputs spread over the roi [start, end] (fractions
  /// of the input) of an input of `in` entries.
  Value cropCoordinate(Value x, Value in, Value scale, Value start, Value end) {
    Value span = mul(sub(end, start), sub(in, c(1)));
    Value resized = sub(mul(scale, in), c(1)); // the unrounded length, less one
    Value single = cmp(ComparePredicate::eq, resized, c(0));
    Value spread = div(mul(x, span), select(single, c(1), resized));
    return add(select(single, div(span, c(2)), spread), mul(start, sub(in, c(1))));
  }

  /// Antialiased linear / cubic resizing (when downsampling, the filter
  /// widens by 1 / scale and is normalised) along dim `d` of static length
  /// `in`: a run-time [out, in] weight matrix applied as a matmul. Taps
  /// before the first or past the last entry read the edge (or, with
  /// exclude_outside, count for nothing).
  Value antialiasAxis(Value v, int64_t d, int64_t in, Value coord, Value scale) {
    int64_t rank = NodeContext::rankOf(v);
    Type element = NodeContext::elementTypeOf(v);
    // An output needs at least one input entry per 1 / scale: taps lie
    // within 2 / scale <= 2 * in of the coordinate.
    int64_t margin = 2 * in + 2, span = in + 2 * margin;
    Value taps = generateConstant(ctx, RankedTensorType::get({1, span}, f64),
                                  [&](int64_t j) { return double(j - margin); });
    Value s = ctx.make<MinOp>(scale, c(1));
    Value t = mul(sub(taps, unsqueeze(ctx, coord, {1})), s); // [out, span]
    Value w = m.mode == "linear"
                  ? ctx.make<MaxOp>(sub(c(1), ctx.make<AbsOp>(t)), c(0))
                  : cubicWeight(ctx, t, m.cubicA);
    if (m.excludeOutside)
      w = mul(w, generateConstant(ctx, RankedTensorType::get({1, span}, f64), [&](int64_t j) {
                return j - margin >= 0 && j - margin < in ? 1.0 : 0.0;
              }));
    Value total = ctx.make<ReduceSumOp>(w, ctx.i64s({1}), ctx.b.getBoolAttr(true));
    w = div(w, select(cmp(ComparePredicate::ne, total, c(0)), total, c(1)));
    // Fold the taps outside onto the edge entries: [span, in].
    Value edges = generateConstant(
        ctx, RankedTensorType::get({span, in}, f64), [&](int64_t flat) {
          int64_t j = flat / in - margin, k = flat % in;
          return std::clamp<int64_t>(j, 0, in - 1) == k ? 1.0 : 0.0;
        });
    Value matrix = ctx.cast(ctx.make<MatmulOp>(w, edges), element); // [out, in]
    AxisToLast perm = axisToLast(rank, d);
    Value moved = ctx.make<TransposeOp>(v, ctx.i64s(perm.toLast));
    Value resized = ctx.make<MatmulOp>(moved, ctx.make<TransposeOp>(matrix, ctx.i64s({1, 0})));
    return ctx.make<TransposeOp>(resized, ctx.i64s(perm.back));
  }

  Value clampIndex(Value i, Value in) {
    return ctx.make<MinOp>(ctx.make<MaxOp>(i, c(0)), sub(in, c(1)));
  }

  Value nearest(Value coord, Value in) {
    Value r;
    Value floor = ctx.make<FloorOp>(coord);
    if (m.nearest == "floor")
      r = floor;
    else if (m.nearest == "ceil")
      r = ctx.make<CeilOp>(coord);
    else if (m.nearest == "round_prefer_ceil")
      r = ctx.make<FloorOp>(add(coord, c(0.5)));
    else // round_prefer_floor: a tie goes down, else to the nearest
      r = select(cmp(ComparePredicate::eq, coord, add(floor, c(0.5))), floor,
                 ctx.make<FloorOp>(add(coord, c(0.5))));
    return ctx.cast(clampIndex(r, in), i64);
  }


  /// The length of dim `d` of `v` as an f64 scalar (read at run time when
  /// it is dynamic).
  Value length(Value v, int64_t d) { return ctx.cast(dimValue(ctx, v, d), f64); }

  /// The value of a rank-0 constant, if `v` is one.
  static std::optional<double> constantValue(Value v) {
    DenseElementsAttr attr = NodeContext::constantOf(v);
    if (!attr || attr.getNumElements() != 1)
      return std::nullopt;
    if (isa<FloatType>(attr.getElementType()))
      return (*attr.getValues<APFloat>().begin()).convertToDouble();
    return static_cast<double>((*attr.getValues<APInt>().begin()).getSExtValue());
  }

  /// floor(`v`) as an i64 size (a constant when `v` is).
  Value floorToSize(Value v) {
    if (std::optional<double> known = constantValue(v))
      return i64Scalar(ctx, static_cast<int64_t>(std::floor(*known)));
    return ctx.cast(ctx.make<FloorOp>(v), i64);
  }

  /// Resizes dim `d` of `v` (`in` entries, f64) to `out` (i64) with
  /// `scale`; `roi` (start, end) for tf_crop_and_resize. Where `out`
  /// folded to a constant the output positions are static, and a dim kept
  /// as it is (scale 1, same length) is left alone.
  Value axis(Value v, int64_t d, Value in, Value out, Value scale,
             std::pair<Value, Value> roi = {}) {
    std::optional<double> outSize = constantValue(out), inSize = constantValue(in),
                          scaleValue = constantValue(scale);
    if (outSize && inSize && scaleValue && *outSize == *inSize && *scaleValue == 1.0 &&
        m.transform != "tf_crop_and_resize")
      return v;
    Value x = outSize ? generateConstant(ctx, RankedTensorType::get({int64_t(*outSize)}, f64),
                                         [](int64_t i) { return double(i); })
                      : ctx.cast(iotaOfLength(ctx, out), f64);
    Value coord = m.transform == "tf_crop_and_resize"
                      ? cropCoordinate(x, in, scale, roi.first, roi.second)
                      : sourceCoordinate(x, in, ctx.cast(out, f64), scale);
    Value result = interpolate(v, d, in, coord, scale);
    if (m.transform != "tf_crop_and_resize" || !result)
      return result;
    // Outputs whose source lies outside the input take the extrapolation
    // value.
    int64_t rank = NodeContext::rankOf(v);
    SmallVector<int64_t> spread(rank, 1);
    spread[d] = -1;
    Value outside = ctx.make<OrOp>(cmp(ComparePredicate::lt, coord, c(0)),
                                   cmp(ComparePredicate::gt, coord, sub(in, c(1))));
    return ctx.make<SelectOp>(ctx.make<ReshapeOp>(outside, ctx.i64s(spread)),
                              ctx.scalarLike(result, m.extrapolation), result);
  }

  Value interpolate(Value v, int64_t d, Value in, Value coord, Value scale) {
    int64_t rank = NodeContext::rankOf(v);
    Type element = NodeContext::elementTypeOf(v);
    if (m.mode == "nearest")
      return ctx.make<GatherOp>(v, nearest(coord, in), ctx.i64(d));
    if (m.antialias) {
      RankedTensorType type = NodeContext::typeOf(v);
      if (type.isDynamicDim(d)) {
        ctx.unsupported("antialiased resizing along a dim of run-time length");
        return {};
      }
      return antialiasAxis(v, d, type.getDimSize(d), coord, scale);
    }
    int64_t taps = m.mode == "linear" ? 2 : 4;
    Value base = ctx.make<FloorOp>(coord), frac = sub(coord, base);
    Value first = taps == 4 ? sub(base, c(1)) : base;
    SmallVector<Value> sources, weights;
    Value total;
    for (int64_t t = 0; t < taps; ++t) {
      Value src = add(first, c(static_cast<double>(t)));
      Value w = taps == 2 ? (t == 0 ? sub(c(1), frac) : frac)
                          : cubicWeight(ctx, add(frac, c(static_cast<double>(1 - t))), m.cubicA);
      if (m.excludeOutside)
        w = select(ctx.make<OrOp>(cmp(ComparePredicate::lt, src, c(0)),
                                  cmp(ComparePredicate::ge, src, in)),
                   c(0), w);
      sources.push_back(ctx.cast(clampIndex(src, in), i64));
      weights.push_back(w);
      total = total ? add(total, w) : w;
    }
    SmallVector<int64_t> spread(rank, 1);
    spread[d] = -1;
    Value result;
    for (int64_t t = 0; t < taps; ++t) {
      Value w = weights[t];
      if (m.excludeOutside)
        w = select(cmp(ComparePredicate::ne, total, c(0)), div(w, total), w);
      w = ctx.make<ReshapeOp>(ctx.cast(w, element), ctx.i64s(spread));
      Value term = mul(ctx.make<GatherOp>(v, sources[t], ctx.i64(d)), w);
      result = result ? add(result, term) : term;
    }
    return result;
  }
};

/// Resizes dim `d` of `v`, whose length is known only at run time, by a
/// constant scale or to a constant size.
Value resizeDynamicAxis(NodeContext &ctx, const ResizeMode &m, Value v, int64_t d,
                        ArrayRef<double> scales, ArrayRef<int64_t> sizes) {
  RuntimeResize r{ctx, m};
  Value in = r.length(v, d), out, scale;
  if (sizes.empty()) {
    scale = r.c(scales[d]);
    out = r.floorToSize(r.mul(scale, in));
  } else {
    out = i64Scalar(ctx, sizes[d]);
    scale = r.div(r.c(static_cast<double>(sizes[d])), in);
  }
  return r.axis(v, d, in, out, scale);
}

/// Resizes every axis whose size or scale changes.
LogicalResult resize(NodeContext &ctx, Value x, const ResizeMode &m,
                     ArrayRef<double> scales, ArrayRef<int64_t> sizes) {
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  if (!isa<FloatType>(type.getElementType()) && m.mode != "nearest")
    return ctx.unsupported(m.mode + " resizing of integer tensors");
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    return ctx.invalid("mode '" + m.mode + "' is not nearest, linear or cubic");
  Value v = x;
  for (int64_t d = 0; d < rank; ++d) {
    if (type.isDynamicDim(d)) {
      // A dim of run-time length: a scale of 1 (or no size) keeps it;
      // otherwise the coordinates are computed when the model runs.
      if (sizes.empty() ? scales[d] == 1.0 : ShapedType::isDynamic(sizes[d]))
        continue;
      if ((sizes.empty() ? scales[d] : static_cast<double>(sizes[d])) <= 0)
        return ctx.invalid("resizing dim " + llvm::Twine(d) + " to nothing");
      v = resizeDynamicAxis(ctx, m, v, d, scales, sizes);
      if (!v)
        return failure();
      continue;
    }
    int64_t in = type.getDimSize(d);
    int64_t out = sizes.empty() ? static_cast<int64_t>(std::floor(in * scales[d]))
                                : sizes[d];
    double scale = scales.empty() ? double(out) / double(in) : scales[d];
    if (out == in && scale == 1.0)
      continue;
    if (out <= 0 || scale <= 0)
      return ctx.invalid("resizing dim " + llvm::Twine(d) + " to " + llvm::Twine(out));
    v = resizeAxis(ctx, m, v, d, in, out, scale);
  }
  return ctx.setOutput(0, v);
}

/// Resize 18's `axes` (the dims scales and sizes name, each once) and
/// `keep_aspect_ratio_policy` (with sizes: one scale for every named dim,
/// the smallest for not_larger, the largest for not_smaller).
struct ResizeAxes {
  SmallVector<int64_t> axes;
  std::string policy = "stretch";
};

std::optional<ResizeAxes> readResizeAxes(NodeContext &ctx, int64_t rank) {
  ResizeAxes r;
  r.policy = ctx.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (r.policy != "stretch" && r.policy != "not_larger" && r.policy != "not_smaller") {
    ctx.invalid("keep_aspect_ratio_policy must be stretch, not_larger or not_smaller");
    return std::nullopt;
  }
  SmallVector<int64_t> named = ctx.intsAttr("axes");
  if (!ctx.hasAttr("axes"))
    for (int64_t d = 0; d < rank; ++d)
      named.push_back(d);
  for (int64_t a : named) {
    std::optional<int64_t> axis = ctx.normalizeAxis(a, rank, "axes entry");
    if (!axis)
      return std::nullopt;
    if (llvm::is_contained(r.axes, *axis)) {
      ctx.invalid("axes names a dim twice");
      return std::nullopt;
    }
    r.axes.push_back(*axis);
  }
  return r;
}

LogicalResult runtimeResize(NodeContext &ctx, Value x, const ResizeMode &m, size_t scalesInput,
                            std::optional<size_t> sizesInput, const ResizeAxes &named) {
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  if (!isa<FloatType>(type.getElementType()) && m.mode != "nearest")
    return ctx.unsupported(m.mode + " resizing of integer tensors");
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    return ctx.invalid("mode '" + m.mode + "' is not nearest, linear or cubic");
  bool bySizes = sizesInput.has_value();
  Value given = bySizes ? runtimeInts(ctx, *sizesInput) : ctx.input(scalesInput);
  RankedTensorType givenType = NodeContext::typeOf(given);
  if (!givenType)
    return failure();
  int64_t n = named.axes.size();
  if (givenType.getRank() != 1 || givenType.getDimSize(0) != n)
    return ctx.invalid("scales or sizes do not have one entry per named dim");
  RuntimeResize r{ctx, m};
  SmallVector<Value> ins;
  for (int64_t d : named.axes)
    ins.push_back(r.length(x, d));
  // tf_crop_and_resize: each named dim's [start, end] from the roi.
  Value roi;
  if (m.transform == "tf_crop_and_resize") {
    roi = ctx.hasInput(1) ? ctx.input(1) : Value();
    RankedTensorType roiType = NodeContext::typeOf(roi);
    if (!roiType || roiType.getRank() != 1 || roiType.getDimSize(0) != 2 * n)
      return ctx.invalid("tf_crop_and_resize needs a roi of a start and an end per named dim");
    roi = ctx.cast(roi, r.f64);
  }
  // With sizes and a policy: one scale (the least or greatest ratio), each
  // size rounded half up from it.
  Value common;
  if (bySizes && named.policy != "stretch")
    for (int64_t i = 0; i < n; ++i) {
      Value ratio = r.div(ctx.cast(entryOf(ctx, given, i), r.f64), ins[i]);
      common = !common ? ratio
               : named.policy == "not_larger" ? ctx.make<MinOp>(common, ratio)
                                              : ctx.make<MaxOp>(common, ratio);
    }
  Value v = x;
  for (int64_t i = 0; i < n; ++i) {
    Value out, scale, in = ins[i];
    if (common) {
      scale = common;
      out = r.floorToSize(r.add(r.mul(scale, in), r.c(0.5)));
    } else if (bySizes) {
      out = entryOf(ctx, given, i);
      scale = r.div(ctx.cast(out, r.f64), in);
    } else {
      scale = ctx.cast(entryOf(ctx, given, i), r.f64);
      out = r.floorToSize(r.mul(scale, in));
    }
    std::pair<Value, Value> bounds;
    if (roi)
      bounds = {entryOf(ctx, roi, i), entryOf(ctx, roi, n + i)};
    v = r.axis(v, named.axes[i], ins[i], out, scale, bounds);
    if (!v) // refused (an antialiased dim of run-time length)
      return failure();
  }
  return ctx.setOutput(0, v);
}

LogicalResult importResize(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  ResizeMode m;
  m.mode = ctx.stringAttr("mode", "nearest");
  m.transform = ctx.stringAttr("coordinate_transformation_mode",
                               ctx.opset < 11 ? "asymmetric" : "half_pixel");
  m.nearest = ctx.stringAttr("nearest_mode", "round_prefer_floor");
  m.cubicA = ctx.floatAttr("cubic_coeff_a", -0.75f);
  m.excludeOutside = ctx.intAttr("exclude_outside", 0) != 0;
  if (ctx.opset < 11)
    m.nearest = "floor";
  m.antialias = ctx.intAttr("antialias", 0) != 0 && m.mode != "nearest";
  m.extrapolation = ctx.floatAttr("extrapolation_value", 0.0f);
  // From opset 11 the roi (input 1) counts in tf_crop_and_resize alone.
  if (ctx.opset >= 11 && m.transform != "tf_crop_and_resize")
    ctx.inputWithoutEffect(1);
  std::optional<ResizeAxes> named = readResizeAxes(ctx, rank);
  if (!named)
    return failure();
  size_t scalesInput = ctx.opset < 11 ? 1 : 2, sizesInput = 3;
  bool runtime = ctx.hasInput(sizesInput) ? !ctx.isKnownInput(sizesInput)
                                          : !ctx.isKnownInput(scalesInput);
  if (runtime && ctx.hasInput(sizesInput) && !ctx.isKnownInput(scalesInput))
    return ctx.invalid("both scales and sizes are given");
  // Sizes (or, without them, scales) read when the model runs, or modes
  // only the tensor arithmetic follows: built on tensors (constant ones
  // fold).
  if (runtime || m.antialias || m.transform == "tf_crop_and_resize" ||
      m.transform == "half_pixel_symmetric") {
    return runtimeResize(ctx, x, m, scalesInput,
                         ctx.hasInput(sizesInput) ? std::optional(sizesInput) : std::nullopt,
                         *named);
  }
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  if (ctx.hasInput(sizesInput)) {
    std::optional<SmallVector<int64_t>> s = ctx.intsInput(sizesInput, "sizes");
    if (!s)
      return failure();
    sizes = *s;
  }
  if (ctx.hasInput(scalesInput)) {
    std::optional<SmallVector<double>> s = ctx.floatsInput(scalesInput, "scales");
    if (!s)
      return failure();
    scales = *s;
  }
  if (sizes.empty() && scales.empty())
    return ctx.invalid("neither scales nor sizes is given");
  int64_t n = named->axes.size();
  if ((!sizes.empty() && static_cast<int64_t>(sizes.size()) != n) ||
      (!scales.empty() && static_cast<int64_t>(scales.size()) != n))
    return ctx.invalid("scales or sizes do not have one entry per named dim");
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  // Every dim's scale and size, the dims not named left as they are.
  SmallVector<double> fullScales(rank, 1.0);
  SmallVector<int64_t> fullSizes;
  if (!sizes.empty()) {
    fullSizes.assign(type.getShape().begin(), type.getShape().end());
    for (int64_t i = 0; i < n; ++i)
      fullSizes[named->axes[i]] = sizes[i];
    if (named->policy == "stretch")
      return resize(ctx, x, m, {}, fullSizes);
    double common = named->policy == "not_larger" ? HUGE_VAL : 0.0;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> in = staticDim(ctx, x, named->axes[i], "keep_aspect_ratio_policy");
      if (!in)
        return failure();
      double ratio = static_cast<double>(sizes[i]) / static_cast<double>(*in);
      common = named->policy == "not_larger" ? std::min(common, ratio) : std::max(common, ratio);
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t d = named->axes[i];
      fullScales[d] = common;
      fullSizes[d] = static_cast<int64_t>(common * static_cast<double>(type.getDimSize(d)) + 0.5);
    }
    return resize(ctx, x, m, fullScales, fullSizes);
  }
  for (int64_t i = 0; i < n; ++i)
    fullScales[named->axes[i]] = scales[i];
  return resize(ctx, x, m, fullScales, {});
}

LogicalResult importUpsample(NodeContext &ctx) {
  ResizeMode m;
  m.mode = ctx.stringAttr("mode", "nearest");
  m.transform = "asymmetric";
  m.nearest = "floor";
  SmallVector<double> scales;
  if (ctx.opset < 9) {
    for (float s : ctx.floatsAttr("scales"))
      scales.push_back(s);
  } else {
    if (!ctx.isKnownInput(1)) {
      ResizeAxes every;
      for (int64_t d = 0; d < NodeContext::rankOf(ctx.input(0)); ++d)
        every.axes.push_back(d);
      return runtimeResize(ctx, ctx.input(0), m, 1, std::nullopt, every);
    }
    std::optional<SmallVector<double>> s = ctx.floatsInput(1, "scales");
    if (!s)
      return failure();
    scales = *s;
  }
  Value x = ctx.input(0);
  if (static_cast<int64_t>(scales.size()) != NodeContext::rankOf(x))
    return ctx.invalid("scales do not have one entry per dim");
  return resize(ctx, x, m, scales, {});
}

} // namespace

void registerResizeOps(OpRegistry &r) {
  r.add("Resize", 10, kAnyLaterOpset, importResize);
  r.add("Upsample", 7, 9, importUpsample);
}

} // namespace kiln::onnx_frontend
