//===- FoldBatchNorm.cpp - batch_norm folded into its convolution ---------===//
//
// Implements kiln-fold-batch-norm. An inference batch norm is a per-channel
// affine map, so after a convolution whose weights are constant it can be
// folded into them:
//
//   s  = scale / sqrt(variance + epsilon)
//   W' = W * s            (per output channel)
//   b' = (b - mean) * s + bias     (b: the convolution's bias, or 0)
//
// The arithmetic is done in double and rounded once to the element type.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/Matchers.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Every element of a float constant (dense or resource) as a double.
std::optional<SmallVector<double>> readFloats(ConstantOp constant) {
  ElementsAttr value = constant.getValue();
  auto element = dyn_cast<FloatType>(value.getElementType());
  if (!element)
    return std::nullopt;
  SmallVector<double> out;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    for (APFloat v : dense.getValues<APFloat>())
      out.push_back(v.convertToDouble());
    return out;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource || !resource.getRawHandle().getBlob())
    return std::nullopt;
  ArrayRef<char> raw = resource.getRawHandle().getBlob()->getData();
  unsigned bytes = element.getWidth() / 8;
  int64_t count = value.getNumElements();
  if (element.getWidth() % 8 != 0 || static_cast<int64_t>(raw.size()) != count * bytes)
    return std::nullopt;
  out.reserve(count);
  // f32 and f64 directly (a model's weights: millions of elements); other
  // widths through APFloat.
  if (element.isF32() || element.isF64()) {
    for (int64_t i = 0; i < count; ++i) {
      if (element.isF32()) {
        float f;
        std::memcpy(&f, raw.data() + i * 4, 4);
        out.push_back(f);
      } else {
        double d;
        std::memcpy(&d, raw.data() + i * 8, 8);
        out.push_back(d);
      }
    }
    return out;
  }
  for (int64_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, raw.data() + i * bytes, bytes); // little-endian hosts
    APFloat v(element.getFloatSemantics(), APInt(element.getWidth(), bits));
    out.push_back(v.convertToDouble());
  }
  return out;
}

/// `value` rounded to nearest-even in `type`.
APFloat roundTo(FloatType type, double value) {
  APFloat f(value);
  bool lost = false;
  f.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return f;
}

/// `values` rounded to `type`'s element type, as a resource blob named
/// after `name` (weights stay out of the attribute uniquer).
ElementsAttr writeFloats(RankedTensorType type, ArrayRef<double> values, StringRef name) {
  auto element = cast<FloatType>(type.getElementType());
  unsigned bytes = element.getWidth() / 8;
  SmallVector<char> raw(values.size() * bytes);
  for (auto [i, v] : llvm::enumerate(values)) {
    // f32 and f64 directly (the cast rounds to nearest-even, as APFloat).
    if (element.isF32()) {
      float f = static_cast<float>(v);
      std::memcpy(raw.data() + i * 4, &f, 4);
    } else if (element.isF64()) {
      std::memcpy(raw.data() + i * 8, &v, 8);
    } else {
      uint64_t bits = roundTo(element, v).bitcastToAPInt().getZExtValue();
      std::memcpy(raw.data() + i * bytes, &bits, bytes);
    }
  }
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(raw), alignof(int64_t));
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

/// A batch norm's scale, bias, mean and variance, `channels` values each.
struct Statistics {
  SmallVector<double> scale, shift, mean, variance;
};

/// `bn`'s statistics when all four are constants (seen through reshapes)
/// of `channels` values each; nullopt (a match failure's reason in
/// `why`) otherwise.
std::optional<Statistics> readStatistics(BatchNormOp bn, int64_t channels, StringRef &why) {
  Statistics out;
  std::pair<Value, SmallVector<double> *> parts[] = {{bn.getScale(), &out.scale},
                                                     {bn.getBias(), &out.shift},
                                                     {bn.getMean(), &out.mean},
                                                     {bn.getVariance(), &out.variance}};
  for (auto [value, values] : parts) {
    ConstantOp constant = constantThroughReshapes(value);
    std::optional<SmallVector<double>> read = constant ? readFloats(constant) : std::nullopt;
    if (!read) {
      why = "statistics are not constant";
      return std::nullopt;
    }
    if (static_cast<int64_t>(read->size()) != channels) {
      why = "per-channel sizes disagree";
      return std::nullopt;
    }
    *values = std::move(*read);
  }
  return out;
}

struct FoldIntoConvolution : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn, PatternRewriter &b) const override {
    // batch_norm(conv(x, W)) or batch_norm(add(conv(x, W), bias)), each
    // intermediate used once (folding must not change another user).
    Value input = bn.getInput();
    AddOp biasAdd = input.getDefiningOp<AddOp>();
    ConstantOp convBias;
    Value biasValue;
    if (biasAdd) {
      if (!input.hasOneUse())
        return b.notifyMatchFailure(bn, "bias add has other users");
      Value lhs = biasAdd.getLhs(), rhs = biasAdd.getRhs();
      if (!lhs.getDefiningOp<ConvOp>())
        std::swap(lhs, rhs);
      convBias = constantThroughReshapes(rhs);
      biasValue = rhs;
      input = lhs;
    }
    auto conv = input.getDefiningOp<ConvOp>();
    if (!conv || !input.hasOneUse() || (biasAdd && !convBias))
      return b.notifyMatchFailure(bn, "not a convolution with a constant bias");
    auto resultType = cast<RankedTensorType>(conv.getType());
    if (resultType.getRank() < 3 || resultType.isDynamicDim(1) ||
        (biasAdd && biasAdd.getType() != resultType))
      return b.notifyMatchFailure(bn, "channel count unknown");
    int64_t channels = resultType.getDimSize(1);
    // A bias must vary only along the channel dim of the result.
    if (biasAdd && (!variesOnlyAlong(biasValue, resultType, 1) ||
                    cast<RankedTensorType>(convBias.getType()).getNumElements() != channels))
      return b.notifyMatchFailure(bn, "bias is not per channel");
    ConstantOp weight = conv.getWeight().getDefiningOp<ConstantOp>();
    if (!weight)
      return b.notifyMatchFailure(bn, "weights are not constant");
    StringRef why;
    std::optional<Statistics> stats = readStatistics(bn, channels, why);
    if (!stats)
      return b.notifyMatchFailure(bn, why);
    auto w = readFloats(weight);
    std::optional<SmallVector<double>> bias =
        convBias ? readFloats(convBias) : SmallVector<double>(channels, 0.0);
    if (!w || !bias)
      return b.notifyMatchFailure(bn, "constant not readable as floats");
    if (static_cast<int64_t>(bias->size()) != channels ||
        static_cast<int64_t>(w->size()) % channels != 0)
      return b.notifyMatchFailure(bn, "per-channel sizes disagree");

    double epsilon = bn.getEpsilon().convertToDouble();
    int64_t perChannel = static_cast<int64_t>(w->size()) / channels;
    SmallVector<double> newBias(channels);
    for (int64_t c = 0; c < channels; ++c) {
      double factor = stats->scale[c] / std::sqrt(stats->variance[c] + epsilon);
      for (int64_t i = 0; i < perChannel; ++i)
        (*w)[c * perChannel + i] *= factor;
      newBias[c] = ((*bias)[c] - stats->mean[c]) * factor + stats->shift[c];
    }

    Location loc = b.getFusedLoc({conv.getLoc(), bn.getLoc()});
    auto weightType = cast<RankedTensorType>(weight.getType());
    auto newWeight = ConstantOp::create(b, weight.getLoc(),
                                        writeFloats(weightType, *w, "bn_folded_weight"));
    auto newConv = ConvOp::create(b, loc, resultType, conv.getInput(), newWeight,
                                  conv.getStridesAttr(), conv.getPadsAttr(),
                                  conv.getDilationsAttr(), conv.getGroupsAttr());
    // [C, 1, ...]: broadcasts along dim 1 of the result.
    SmallVector<int64_t> biasShape = {channels};
    biasShape.append(resultType.getRank() - 2, 1);
    auto biasType = RankedTensorType::get(biasShape, resultType.getElementType());
    SmallVector<APFloat> biasValues;
    auto element = cast<FloatType>(resultType.getElementType());
    for (double v : newBias)
      biasValues.push_back(roundTo(element, v));
    auto newBiasOp = ConstantOp::create(b, bn.getLoc(), DenseElementsAttr::get(biasType, biasValues));
    b.replaceOpWithNewOp<AddOp>(bn, bn.getType(), newConv.getResult(), newBiasOp.getResult());
    return success();
  }
};

/// Any other batch norm with constant parameters: x * s + t, s and t
/// computed here ([1, C, 1, ...], the input's rank) instead of (x - mean)
/// * scale / sqrt(var + eps) + bias at every run. A backend can hand the
/// channel affine map (and an activation after it) to a library in the
/// layout of the op before it (a DenseNet's batch norm and ReLU before
/// each convolution, on the concatenation's channels-last output). Tried
/// after FoldIntoConvolution (lower benefit).
struct BatchNormAsChannelAffine : OpRewritePattern<BatchNormOp> {
  BatchNormAsChannelAffine(MLIRContext *context)
      : OpRewritePattern<BatchNormOp>(context, /*benefit=*/1) {}

  LogicalResult matchAndRewrite(BatchNormOp bn, PatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(bn.getType());
    auto element = dyn_cast<FloatType>(type.getElementType());
    if (!element || type.getRank() < 2 || type.isDynamicDim(1))
      return b.notifyMatchFailure(bn, "channel count unknown");
    int64_t channels = type.getDimSize(1);
    StringRef why;
    std::optional<Statistics> stats = readStatistics(bn, channels, why);
    if (!stats)
      return b.notifyMatchFailure(bn, why);
    double epsilon = bn.getEpsilon().convertToDouble();
    SmallVector<APFloat> factors, offsets;
    for (int64_t c = 0; c < channels; ++c) {
      double factor = stats->scale[c] / std::sqrt(stats->variance[c] + epsilon);
      factors.push_back(roundTo(element, factor));
      offsets.push_back(roundTo(element, stats->shift[c] - stats->mean[c] * factor));
    }
    SmallVector<int64_t> shape(type.getRank(), 1);
    shape[1] = channels;
    auto vectorType = RankedTensorType::get(shape, element);
    Value factor = ConstantOp::create(b, bn.getLoc(), DenseElementsAttr::get(vectorType, factors));
    Value offset = ConstantOp::create(b, bn.getLoc(), DenseElementsAttr::get(vectorType, offsets));
    Value scaled = MulOp::create(b, bn.getLoc(), type, bn.getInput(), factor);
    b.replaceOpWithNewOp<AddOp>(bn, type, scaled, offset);
    return success();
  }
};

struct FoldBatchNorm : kiln::impl::FoldBatchNormBase<FoldBatchNorm> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoConvolution>(&getContext(), /*benefit=*/2);
    patterns.add<BatchNormAsChannelAffine>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
