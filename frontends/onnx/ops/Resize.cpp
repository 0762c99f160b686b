//===- Resize.cpp - ONNX Resize and Upsample -------------------------------===//
//
// Resizing is separable: each resized axis is one step. For every output
// coordinate the source coordinate is computed at import time (static
// sizes), so nearest becomes one kiln.gather with constant indices and
// linear / cubic a weighted sum of 2 / 4 gathers with constant weights.
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
    std::optional<int64_t> in = staticDim(ctx, x, d, "Resize");
    if (!in)
      return failure();
    int64_t out = sizes.empty() ? static_cast<int64_t>(std::floor(*in * scales[d]))
                                : sizes[d];
    double scale = scales.empty() ? double(out) / double(*in) : scales[d];
    if (out == *in && scale == 1.0)
      continue;
    if (out <= 0 || scale <= 0)
      return ctx.invalid("resizing dim " + llvm::Twine(d) + " to " + llvm::Twine(out));
    v = resizeAxis(ctx, m, v, d, *in, out, scale);
  }
  return ctx.setOutput(0, v);
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
    return halfPixel;
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

  Value cubicWeight(Value t) {
    double a = m.cubicA;
    t = ctx.make<AbsOp>(t);
    Value near = add(mul(mul(sub(mul(c(a + 2), t), c(a + 3)), t), t), c(1));
    Value far = sub(mul(add(mul(sub(mul(c(a), t), c(5 * a)), t), c(8 * a)), t), c(4 * a));
    return select(cmp(ComparePredicate::le, t, c(1)), near,
                  select(cmp(ComparePredicate::lt, t, c(2)), far, c(0)));
  }

  Value axis(Value v, int64_t d, int64_t inSize, Value out, Value scale) {
    int64_t rank = NodeContext::rankOf(v);
    Type element = NodeContext::elementTypeOf(v);
    Value in = c(static_cast<double>(inSize));
    Value x = ctx.cast(iotaOfLength(ctx, out), f64);
    Value coord = sourceCoordinate(x, in, ctx.cast(out, f64), scale);
    if (m.mode == "nearest")
      return ctx.make<GatherOp>(v, nearest(coord, in), ctx.i64(d));
    int64_t taps = m.mode == "linear" ? 2 : 4;
    Value base = ctx.make<FloorOp>(coord), frac = sub(coord, base);
    Value first = taps == 4 ? sub(base, c(1)) : base;
    SmallVector<Value> sources, weights;
    Value total;
    for (int64_t t = 0; t < taps; ++t) {
      Value src = add(first, c(static_cast<double>(t)));
      Value w = taps == 2 ? (t == 0 ? sub(c(1), frac) : frac)
                          : cubicWeight(add(frac, c(static_cast<double>(1 - t))));
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
  SmallVector<int64_t> ins;
  for (int64_t d : named.axes) {
    std::optional<int64_t> in = staticDim(ctx, x, d, "Resize");
    if (!in)
      return failure();
    ins.push_back(*in);
  }
  // With sizes and a policy: one scale (the least or greatest ratio), each
  // size rounded half up from it.
  Value common;
  if (bySizes && named.policy != "stretch")
    for (int64_t i = 0; i < n; ++i) {
      Value ratio = r.div(ctx.cast(entryOf(ctx, given, i), r.f64),
                          r.c(static_cast<double>(ins[i])));
      common = !common ? ratio
               : named.policy == "not_larger" ? ctx.make<MinOp>(common, ratio)
                                              : ctx.make<MaxOp>(common, ratio);
    }
  Value v = x;
  for (int64_t i = 0; i < n; ++i) {
    Value out, scale;
    double in = static_cast<double>(ins[i]);
    if (common) {
      scale = common;
      out = ctx.cast(ctx.make<FloorOp>(r.add(r.mul(scale, r.c(in)), r.c(0.5))), r.i64);
    } else if (bySizes) {
      out = entryOf(ctx, given, i);
      scale = r.div(ctx.cast(out, r.f64), r.c(in));
    } else {
      scale = ctx.cast(entryOf(ctx, given, i), r.f64);
      out = ctx.cast(ctx.make<FloorOp>(r.mul(scale, r.c(in))), r.i64);
    }
    v = r.axis(v, named.axes[i], ins[i], out, scale);
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
  if (m.transform == "tf_crop_and_resize" || m.transform == "half_pixel_symmetric")
    return ctx.unsupported("coordinate_transformation_mode '" + m.transform + "'");
  if (ctx.intAttr("antialias", 0) != 0)
    return ctx.unsupported("antialias");
  std::optional<ResizeAxes> named = readResizeAxes(ctx, rank);
  if (!named)
    return failure();
  size_t scalesInput = ctx.opset < 11 ? 1 : 2, sizesInput = 3;
  // Sizes (or, without them, scales) read when the model runs.
  if (ctx.hasInput(sizesInput) ? !ctx.isKnownInput(sizesInput) : !ctx.isKnownInput(scalesInput)) {
    if (ctx.hasInput(sizesInput) && !ctx.isKnownInput(scalesInput))
      return ctx.invalid("both scales and sizes are given");
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
    double common = named->policy == "not_larger" ? HUGE_VAL : 0.0;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> in = staticDim(ctx, x, named->axes[i], "Resize");
      if (!in)
        return failure();
      double ratio = static_cast<double>(sizes[i]) / static_cast<double>(*in);
      common = named->policy == "not_larger" ? std::min(common, ratio) : std::max(common, ratio);
      fullSizes[named->axes[i]] = sizes[i];
    }
    if (named->policy == "stretch")
      return resize(ctx, x, m, {}, fullSizes);
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
