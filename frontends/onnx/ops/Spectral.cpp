//===- Spectral.cpp - ONNX DFT --------------------------------------------===//
//
// DFT of a static length is two matmuls with constant cosine and sine
// tables along the transformed axis, in f64 (as ONNX's reference, numpy's
// FFT): forward, inverse (scaled by 1 / N), one-sided forward (the first
// N / 2 + 1 frequencies) and one-sided inverse (a real signal from a
// Hermitian half spectrum, numpy's irfft). Signals are [..., 1] (real) or
// [..., 2] (real and imaginary); results are [..., 2], or [..., 1] for the
// one-sided inverse. An axis read at run time is served when every axis it
// may name gives the same shape: each is transformed and the named one
// gathered (an axis naming none stops the run with a shape error).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

struct DftOptions {
  bool inverse = false, onesided = false;
  std::optional<int64_t> length; // dft_length, when given
};

/// The DFT of `x` ([..., C], f64) along `axis` (< rank - 1), or null
/// (recorded) when it cannot be built.
Value dftAlong(NodeContext &ctx, Value x, int64_t axis, const DftOptions &o) {
  RankedTensorType type = NodeContext::typeOf(x);
  int64_t rank = type.getRank();
  if (type.isDynamicDim(axis)) {
    ctx.unsupported("DFT along a dim of run-time length");
    return {};
  }
  int64_t available = type.getDimSize(axis);
  int64_t n = o.length ? *o.length
                       : (o.inverse && o.onesided ? 2 * (available - 1) : available);
  if (n <= 0) {
    ctx.invalid("the DFT length must be positive");
    return {};
  }
  bool complex = type.getDimSize(rank - 1) == 2;
  // Input entries used (the rest are zeros: shorter signals are padded).
  int64_t used = std::min(available, o.inverse && o.onesided ? n / 2 + 1 : n);
  int64_t outputs = o.inverse ? n : (o.onesided ? n / 2 + 1 : n);
  // Move the axis last: [..., used] real and imaginary parts.
  AxisToLast perm = axisToLast(rank - 1, axis);
  auto part = [&](int64_t c) {
    SmallVector<int64_t> starts(rank, 0), ends(rank, INT64_MAX), steps(rank, 1);
    starts[rank - 1] = c;
    ends[rank - 1] = c + 1;
    ends[axis] = used;
    Value p = squeeze(ctx, ctx.make<SliceOp>(x, ctx.i64s(starts), ctx.i64s(ends),
                                             ctx.i64s(steps)),
                      {rank - 1});
    return ctx.make<TransposeOp>(p, ctx.i64s(perm.toLast));
  };
  Value re = part(0), im = complex ? part(1) : Value();
  // table[j][k] for input entry j and output k.
  Type f64 = ctx.b.getF64Type();
  auto table = [&](llvm::function_ref<double(int64_t, int64_t)> fn) {
    return generateConstant(ctx, RankedTensorType::get({used, outputs}, f64),
                            [&](int64_t flat) { return fn(flat / outputs, flat % outputs); });
  };
  auto angle = [&](int64_t j, int64_t k) { return 2 * M_PI * double((j * k) % n) / double(n); };
  double scale = o.inverse ? 1.0 / double(n) : 1.0;
  auto mm = [&](Value a, Value b) { return ctx.make<MatmulOp>(a, b); };
  SmallVector<Value> results;
  if (o.inverse && o.onesided) {
    // x[t] = sum_k w_k (Re X_k cos - Im X_k sin) / N, w_k = 2 but for the
    // zero (and, for even N, the middle) frequency.
    auto weight = [&](int64_t k) { return k == 0 || 2 * k == n ? 1.0 : 2.0; };
    Value real = mm(re, table([&](int64_t k, int64_t t) {
                      return weight(k) * std::cos(angle(k, t)) * scale;
                    }));
    if (im)
      real = ctx.make<SubOp>(real, mm(im, table([&](int64_t k, int64_t t) {
                                         return weight(k) * std::sin(angle(k, t)) * scale;
                                       })));
    results.push_back(real);
  } else {
    // Forward: e^{-i theta}; inverse: e^{+i theta} / N.
    double sign = o.inverse ? 1.0 : -1.0;
    Value cosine = table([&](int64_t j, int64_t k) { return std::cos(angle(j, k)) * scale; });
    Value sine = table([&](int64_t j, int64_t k) { return sign * std::sin(angle(j, k)) * scale; });
    // (a + ib)(cos + i sine) = a cos - b sine + i (a sine + b cos).
    Value real = mm(re, cosine), imag = mm(re, sine);
    if (im) {
      real = ctx.make<SubOp>(real, mm(im, sine));
      imag = ctx.make<AddOp>(imag, mm(im, cosine));
    }
    results = {real, imag};
  }
  SmallVector<Value> parts;
  for (Value r : results)
    parts.push_back(unsqueeze(ctx, ctx.make<TransposeOp>(r, ctx.i64s(perm.back)), {rank - 1}));
  return parts.size() == 1 ? parts[0] : ctx.make<ConcatOp>(ValueRange(parts), ctx.i64(rank - 1));
}

LogicalResult importDft(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  if (rank < 2 || (type.getDimSize(rank - 1) != 1 && type.getDimSize(rank - 1) != 2))
    return ctx.invalid("the signal must be [..., 1] (real) or [..., 2] (complex)");
  if (!isa<FloatType>(type.getElementType()))
    return ctx.invalid("the signal must hold floats");
  DftOptions o;
  o.inverse = ctx.intAttr("inverse", 0) != 0;
  o.onesided = ctx.intAttr("onesided", 0) != 0;
  if (ctx.hasInput(1)) {
    std::optional<SmallVector<int64_t>> length = ctx.intsInput(1, "dft_length");
    if (!length)
      return failure();
    if (length->size() != 1)
      return ctx.invalid("dft_length must be a scalar");
    o.length = (*length)[0];
  }
  Value signal = ctx.cast(x, ctx.b.getF64Type());
  Type element = type.getElementType();
  // The axis: an attribute before opset 20, an input (default -2) after.
  if (ctx.opset < 20 || !ctx.hasInput(2) || ctx.isKnownInput(2)) {
    int64_t axis = ctx.opset < 20 ? ctx.intAttr("axis", 1) : -2;
    if (ctx.opset >= 20 && ctx.hasInput(2)) {
      std::optional<SmallVector<int64_t>> given = ctx.intsInput(2, "axis");
      if (!given)
        return failure();
      if (given->size() != 1)
        return ctx.invalid("axis must be a scalar");
      axis = (*given)[0];
    }
    std::optional<int64_t> a = ctx.normalizeAxis(axis, rank);
    if (!a)
      return failure();
    if (*a == rank - 1)
      return ctx.invalid("the axis cannot be the real/imaginary dim");
    return ctx.setOutput(0, ctx.cast(dftAlong(ctx, signal, *a, o), element));
  }
  // An axis read at run time: every axis it may name, then the one named.
  SmallVector<std::pair<int64_t, Value>> candidates;
  for (int64_t a = 0; a < rank - 1; ++a) {
    // Axes the DFT cannot run along (run-time or too short for the
    // one-sided inverse's default length) are no candidates.
    if (type.isDynamicDim(a) || type.getDimSize(a) == 0 ||
        (!o.length && o.inverse && o.onesided && type.getDimSize(a) < 2))
      continue;
    Value y = dftAlong(ctx, signal, a, o);
    if (!y)
      return failure();
    if (!candidates.empty() && y.getType() != candidates.front().second.getType())
      return ctx.unsupported("DFT with an axis read at run time whose result shape depends on "
                             "it; give the axis as a constant");
    candidates.push_back({a, y});
  }
  if (candidates.empty())
    return ctx.unsupported("DFT with an axis read at run time and no axis of static length");
  // Stack the candidates and take the one the axis names; an axis that
  // names none (or the real/imaginary dim) stops the run with a shape
  // error.
  int64_t count = candidates.size();
  SmallVector<int64_t> lookup(rank, count);
  SmallVector<Value> stacked;
  for (auto [i, candidate] : llvm::enumerate(candidates)) {
    lookup[candidate.first] = i;
    stacked.push_back(unsqueeze(ctx, candidate.second, {0}));
  }
  Value axis = asScalar(ctx, runtimeInts(ctx, 2));
  axis = ctx.make<SelectOp>(compare(ctx, ComparePredicate::lt, axis, i64Scalar(ctx, 0)),
                            ctx.make<AddOp>(axis, i64Scalar(ctx, rank)), axis);
  Value which = ctx.make<GatherOp>(ctx.indices(lookup), axis, ctx.i64(0));
  Value named = ctx.make<AndOp>(
      ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, axis, i64Scalar(ctx, 0)),
                      compare(ctx, ComparePredicate::lt, axis, i64Scalar(ctx, rank))),
      compare(ctx, ComparePredicate::lt, which, i64Scalar(ctx, count)));
  which = requireAtRunTime(ctx, which, named);
  Value all = stacked.size() == 1 ? stacked[0] : ctx.make<ConcatOp>(ValueRange(stacked), ctx.i64(0));
  return ctx.setOutput(0, ctx.cast(ctx.make<GatherOp>(all, which, ctx.i64(0)), element));
}

} // namespace

void registerSpectralOps(OpRegistry &r) {
  r.add("DFT", 17, kAnyLaterOpset, importDft);
}

} // namespace kiln::onnx_frontend
