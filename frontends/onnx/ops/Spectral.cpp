//===- Spectral.cpp - ONNX DFT, STFT and MelWeightMatrix ------------------===//
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
// STFT frames the signal with one gather (the frame count read at run
// time from frame_step) and transforms the frames as DFT does, its tables
// computed at run time when frame_length is only known then.
// MelWeightMatrix computes each (frequency, mel bin) weight elementwise
// from the bins' edges, its dims read at run time.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"
#include "frontends/onnx/TensorData.h"

#include "onnx/onnx.pb.h"

#include <cmath>
#include <numeric>

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

/// Rank-0 input `i` (an integer) as i64, read at run time or known.
Value scalarInt(NodeContext &ctx, size_t i) {
  Value v = runtimeInts(ctx, i);
  if (v && NodeContext::typeOf(v).getNumElements() != 1) {
    ctx.invalid("input " + llvm::Twine(i) + " must be a scalar");
    return {};
  }
  return v ? asScalar(ctx, v) : Value();
}

/// The DFT of the last dim of `re` and `im` (f64, [..., n]; `im` may be
/// null) of a length `n` read at run time: matmuls with cosine and sine
/// tables computed when the model runs. [..., k, 2] with k = n / 2 + 1
/// when `onesided`, else n.
Value dftOfRuntimeLength(NodeContext &ctx, Value re, Value im, Value n, bool onesided) {
  Type f64 = ctx.b.getF64Type();
  Value k = onesided ? ctx.make<AddOp>(ctx.make<DivOp>(n, i64Scalar(ctx, 2)), i64Scalar(ctx, 1))
                     : n;
  Value j = unsqueeze(ctx, iotaOfLength(ctx, n), {1});
  Value f = unsqueeze(ctx, iotaOfLength(ctx, k), {0});
  // 2 pi ((j k) mod n) / n: exact integer phases, as the static tables.
  Value phase = ctx.make<RemOp>(ctx.make<MulOp>(j, f), n);
  Value angle = ctx.make<DivOp>(ctx.make<MulOp>(ctx.cast(phase, f64), ctx.scalar(f64, 2 * M_PI)),
                                ctx.cast(n, f64));
  Value cosine = ctx.make<CosOp>(angle);
  Value sine = ctx.make<NegOp>(ctx.make<SinOp>(angle)); // e^{-i theta}
  Value real = ctx.make<MatmulOp>(re, cosine), imag = ctx.make<MatmulOp>(re, sine);
  if (im) {
    real = ctx.make<SubOp>(real, ctx.make<MatmulOp>(im, sine));
    imag = ctx.make<AddOp>(imag, ctx.make<MatmulOp>(im, cosine));
  }
  int64_t rank = NodeContext::rankOf(real);
  return ctx.make<ConcatOp>(ValueRange{unsqueeze(ctx, real, {rank}), unsqueeze(ctx, imag, {rank})},
                            ctx.i64(rank));
}

/// STFT (opset 17): frames of frame_length entries every frame_step along
/// the signal ([batch, length, 1 or 2]), each weighted by the window (ones
/// when absent), transformed: [batch, frames, bins, 2]. frames = 1 +
/// (length - frame_length) / frame_step, read at run time; frame_length is
/// the window's length, the frame_length input, or the signal's length.
LogicalResult importStft(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  if (type.getRank() != 3 || (type.getDimSize(2) != 1 && type.getDimSize(2) != 2))
    return ctx.invalid("the signal must be [batch, length, 1] or [batch, length, 2]");
  if (!isa<FloatType>(type.getElementType()))
    return ctx.invalid("the signal must hold floats");
  bool onesided = ctx.intAttr("onesided", 1) != 0;
  bool complex = type.getDimSize(2) == 2;
  if (complex && onesided)
    return ctx.invalid("a complex signal has no one-sided transform");
  Value window = ctx.optionalInput(2);
  Type f64 = ctx.b.getF64Type();
  // The frame length: static when the window or a constant gives it.
  std::optional<int64_t> staticLength;
  Value length;
  if (window) {
    if (NodeContext::rankOf(window) != 1)
      return ctx.invalid("the window must be 1-D");
    if (!NodeContext::typeOf(window).isDynamicDim(0))
      staticLength = NodeContext::typeOf(window).getDimSize(0);
    length = dimValue(ctx, window, 0);
  }
  if (ctx.hasInput(3)) {
    if (ctx.isKnownInput(3)) {
      std::optional<SmallVector<int64_t>> given = ctx.intsInput(3, "frame_length");
      if (!given || given->size() != 1)
        return given ? ctx.invalid("frame_length must be a scalar") : failure();
      if (staticLength && *staticLength != given->front())
        return ctx.invalid("frame_length differs from the window's length");
      staticLength = given->front();
      length = i64Scalar(ctx, given->front());
    } else {
      Value given = scalarInt(ctx, 3);
      if (window && given)
        given = requireAtRunTime(ctx, given,
                                 compare(ctx, ComparePredicate::eq, given, length));
      length = given;
    }
  }
  if (!length) {
    if (!type.isDynamicDim(1))
      staticLength = type.getDimSize(1);
    length = dimValue(ctx, x, 1);
  }
  Value step = scalarInt(ctx, 1);
  if (!step || !length)
    return failure();
  // frames = 1 + (signal length - frame length) / step, with frame length
  // in [1, signal length] and step >= 1 (else a shape error at run time).
  Value signalLength = dimValue(ctx, x, 1), one = i64Scalar(ctx, 1);
  Value ok = ctx.make<AndOp>(
      ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, step, one),
                      compare(ctx, ComparePredicate::ge, length, one)),
      compare(ctx, ComparePredicate::le, length, signalLength));
  Value frames = ctx.make<AddOp>(
      ctx.make<DivOp>(ctx.make<SubOp>(signalLength, length), step), one);
  frames = requireAtRunTime(ctx, frames, ok);
  // positions[f, t] = f * step + t: [frames, frame length] gathered along
  // the signal's dim 1 -> [batch, frames, frame length, C].
  Value starts = unsqueeze(ctx, ctx.make<MulOp>(iotaOfLength(ctx, frames), step), {1});
  Value offsets;
  if (staticLength)
    offsets = ctx.indices([&] {
      SmallVector<int64_t> v(*staticLength);
      std::iota(v.begin(), v.end(), 0);
      return v;
    }());
  else
    offsets = iotaOfLength(ctx, length);
  Value positions = ctx.make<AddOp>(starts, unsqueeze(ctx, offsets, {0}));
  Value framed = ctx.make<GatherOp>(ctx.cast(x, f64), positions, ctx.i64(1));
  if (window)
    framed = ctx.make<MulOp>(framed, unsqueeze(ctx, ctx.cast(window, f64), {1}));
  Value spectrum;
  if (staticLength) {
    DftOptions o;
    o.onesided = onesided;
    spectrum = dftAlong(ctx, framed, 2, o);
  } else {
    auto part = [&](int64_t c) {
      SmallVector<int64_t> starts(4, 0), ends(4, INT64_MAX), steps(4, 1);
      starts[3] = c;
      ends[3] = c + 1;
      return squeeze(ctx, ctx.make<SliceOp>(framed, ctx.i64s(starts), ctx.i64s(ends),
                                            ctx.i64s(steps)),
                     {3});
    };
    spectrum = dftOfRuntimeLength(ctx, part(0), complex ? part(1) : Value(), length, onesided);
  }
  return ctx.setOutput(0, ctx.cast(spectrum, type.getElementType()));
}

/// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] weights
/// of triangular filters between mel-spaced edges, as ONNX's reference
/// (its bins floor((dft_length + 1) f / sample_rate) of num_mel_bins + 2
/// mel-spaced frequencies), each weight computed elementwise in f64 from
/// its bin's three edges; the dims are read at run time.
LogicalResult importMelWeightMatrix(NodeContext &ctx) {
  Type element = elementTypeOf(ctx.context(), static_cast<int>(ctx.intAttr(
                                                  "output_datatype", onnx::TensorProto::FLOAT)));
  if (!element)
    return ctx.unsupported("output_datatype " + llvm::Twine(ctx.intAttr("output_datatype", 0)) +
                           " is not a data type Kiln supports");
  Value bins = scalarInt(ctx, 0), dftLength = scalarInt(ctx, 1), rate = scalarInt(ctx, 2);
  Value lowerHz = ctx.optionalInput(3), upperHz = ctx.optionalInput(4);
  if (!bins || !dftLength || !rate || !ctx.input(3) || !ctx.input(4))
    return failure();
  Type f64 = ctx.b.getF64Type();
  auto real = [&](Value v) { return ctx.cast(asScalar(ctx, v), f64); };
  auto c = [&](double v) { return ctx.scalar(f64, v); };
  Value ok = ctx.make<AndOp>(
      ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, bins, i64Scalar(ctx, 1)),
                      compare(ctx, ComparePredicate::ge, dftLength, i64Scalar(ctx, 1))),
      compare(ctx, ComparePredicate::ge, rate, i64Scalar(ctx, 1)));
  bins = requireAtRunTime(ctx, bins, ok);
  // mel(f) = 2595 log10(1 + f / 700); the edges are evenly spaced in mel.
  auto mel = [&](Value hz) {
    return ctx.make<MulOp>(
        ctx.make<LogOp>(ctx.make<AddOp>(c(1), ctx.make<DivOp>(real(hz), c(700)))),
        c(2595 / std::log(10.0)));
  };
  Value lowMel = mel(lowerHz), highMel = mel(upperHz);
  Value edgesCount = ctx.make<AddOp>(bins, i64Scalar(ctx, 2));
  Value melStep = ctx.make<DivOp>(ctx.make<SubOp>(highMel, lowMel), ctx.cast(edgesCount, f64));
  Value edgeMel = ctx.make<AddOp>(
      ctx.make<MulOp>(ctx.cast(iotaOfLength(ctx, edgesCount), f64), melStep), lowMel);
  Value edgeHz = ctx.make<MulOp>(
      ctx.make<SubOp>(ctx.make<ExpOp>(ctx.make<MulOp>(edgeMel, c(std::log(10.0) / 2595))), c(1)),
      c(700));
  Value edgeBin = ctx.make<FloorOp>(ctx.make<DivOp>(
      ctx.make<MulOp>(ctx.cast(ctx.make<AddOp>(dftLength, i64Scalar(ctx, 1)), f64), edgeHz),
      ctx.cast(rate, f64)));
  // For frequency j (rows) and mel bin i (columns): the edges of bin i.
  Value freqs = ctx.make<AddOp>(ctx.make<DivOp>(dftLength, i64Scalar(ctx, 2)), i64Scalar(ctx, 1));
  Value j = ctx.cast(unsqueeze(ctx, iotaOfLength(ctx, freqs), {1}), f64);
  Value i = unsqueeze(ctx, iotaOfLength(ctx, bins), {0});
  auto edge = [&](int64_t k) {
    return ctx.make<GatherOp>(edgeBin, ctx.make<AddOp>(i, i64Scalar(ctx, k)), ctx.i64(0));
  };
  Value lower = edge(0), center = edge(1), upper = edge(2);
  Value rise = ctx.make<SubOp>(center, lower), fall = ctx.make<SubOp>(upper, center);
  Value zero = c(0);
  auto between = [&](Value lo, ComparePredicate loP, Value hi, ComparePredicate hiP) {
    return ctx.make<AndOp>(compare(ctx, loP, j, lo), compare(ctx, hiP, j, hi));
  };
  // The rising side (j in [lower, center]; a zero-width one is 1 at the
  // center), then the falling side (j in [center, upper)) over it.
  Value rising = ctx.make<SelectOp>(
      compare(ctx, ComparePredicate::eq, rise, zero),
      ctx.make<SelectOp>(compare(ctx, ComparePredicate::eq, j, center), c(1), zero),
      ctx.make<SelectOp>(between(lower, ComparePredicate::ge, center, ComparePredicate::le),
                         ctx.make<DivOp>(ctx.make<SubOp>(j, lower), rise), zero));
  Value falling = ctx.make<AndOp>(compare(ctx, ComparePredicate::gt, fall, zero),
                                  between(center, ComparePredicate::ge, upper,
                                          ComparePredicate::lt));
  Value weight = ctx.make<SelectOp>(falling, ctx.make<DivOp>(ctx.make<SubOp>(upper, j), fall),
                                    rising);
  return ctx.setOutput(0, ctx.cast(weight, element));
}

} // namespace

void registerSpectralOps(OpRegistry &r) {
  r.add("DFT", 17, kAnyLaterOpset, importDft);
  r.add("STFT", 17, kAnyLaterOpset, importStft);
  r.add("MelWeightMatrix", 17, kAnyLaterOpset, importMelWeightMatrix);
}

} // namespace kiln::onnx_frontend
