//===- Normalization.cpp - ONNX normalisation and softmax -----------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

/// BatchNormalization with training_mode = 1 (opset 14+) in a model
/// compiled as it is: normalised by the batch's own mean and (biased)
/// variance per channel; outputs 1 and 2 are the running statistics moved
/// towards them by 1 - momentum. Deterministic, as ONNX defines it.
LogicalResult importBatchNormalizationTraining(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  Value mean = ctx.input(3), var = ctx.input(4);
  int64_t rank = NodeContext::rankOf(x);
  if (!x || rank < 2)
    return x ? ctx.invalid("input must be [N, C, D...]") : failure();
  SmallVector<int64_t> axes = {0}, spatial;
  for (int64_t d = 2; d < rank; ++d) {
    axes.push_back(d);
    spatial.push_back(d - 1);
  }
  auto perChannel = [&](Value v) { // [C] -> [C, 1, ...] against x
    return spatial.empty() ? v : unsqueeze(ctx, v, spatial);
  };
  Value batchMean = ctx.make<ReduceMeanOp>(x, ctx.i64s(axes), ctx.b.getBoolAttr(false));
  Value centered = ctx.make<SubOp>(x, perChannel(batchMean));
  Value batchVar = ctx.make<ReduceMeanOp>(ctx.make<MulOp>(centered, centered), ctx.i64s(axes),
                                          ctx.b.getBoolAttr(false));
  Value y = ctx.make<BatchNormOp>(x, scale, bias, batchMean, batchVar,
                                  ctx.b.getF32FloatAttr(ctx.floatAttr("epsilon", 1e-5f)));
  double momentum = ctx.floatAttr("momentum", 0.9f);
  auto running = [&](Value old, Value batch) {
    return ctx.make<AddOp>(ctx.make<MulOp>(old, ctx.scalarLike(old, momentum)),
                           ctx.make<MulOp>(batch, ctx.scalarLike(batch, 1 - momentum)));
  };
  ctx.bindOutput(1, running(mean, batchMean));
  ctx.bindOutput(2, running(var, batchVar));
  return ctx.setOutput(0, y);
}

LogicalResult importBatchNormalization(NodeContext &ctx) {
  // Outside a training step, training_mode computes from the batch.
  if (!ctx.training() && ctx.opset >= 14 && ctx.intAttr("training_mode", 0) != 0)
    return importBatchNormalizationTraining(ctx);
  // A training step trains every batch normalisation in its training form
  // and owns the running statistics: the outputs that would carry their
  // update may be declared, not read.
  bool trainingForm = ctx.training() && ctx.intAttr("training_mode", 0) != 0;
  for (size_t i = 1; i < 5; ++i)
    if (trainingForm ? ctx.outputUsed(i) : ctx.hasOutput(i))
      return ctx.unsupported("output " + llvm::Twine(i) + " (training statistics) is " +
                             (trainingForm ? "read; the training step owns them" : "not supported"));
  if (ctx.intAttr("training_mode", 0) != 0 && !ctx.training())
    return ctx.unsupported("training_mode = 1 (Kiln compiles inference; kiln compile --train "
                           "compiles the training step)");
  if (ctx.opset < 7 && ctx.intAttr("is_test", 1) == 0)
    return ctx.unsupported("is_test = 0 (Kiln compiles inference)");
  if (ctx.opset < 9 && ctx.intAttr("spatial", 1) == 0)
    return ctx.unsupported("spatial = 0");
  // The running statistics' update rate: inference reads them as they are.
  ctx.attrsWithoutEffect({"momentum"});
  return ctx.setOutput(
      0, ctx.make<BatchNormOp>(ctx.input(0), ctx.input(1), ctx.input(2),
                               ctx.input(3), ctx.input(4),
                               ctx.b.getF32FloatAttr(
                                   ctx.floatAttr("epsilon", 1e-5f))));
}

LogicalResult importInstanceNormalization(NodeContext &ctx) {
  // Normalising over the spatial dims is layer_norm from axis 2; the
  // per-channel scale and bias follow.
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  if (x && rank < 3)
    return ctx.invalid("input must be [N, C, D...]");
  Value one = ctx.scalarLike(x, 1), zero = ctx.scalarLike(x, 0);
  Value normalized = ctx.make<LayerNormOp>(
      x, one, zero, ctx.i64(2),
      ctx.b.getF32FloatAttr(ctx.floatAttr("epsilon", 1e-5f)));
  SmallVector<int64_t> axes;
  for (int64_t d = 1; d < rank - 1; ++d)
    axes.push_back(d);
  Value scale = unsqueeze(ctx, ctx.input(1), axes);
  Value bias = unsqueeze(ctx, ctx.input(2), axes);
  return ctx.setOutput(
      0, ctx.make<AddOp>(ctx.make<MulOp>(normalized, scale), bias));
}

LogicalResult importLayerNormalization(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  std::optional<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", -1), rank);
  if (!axis)
    return failure();
  float epsilon = ctx.floatAttr("epsilon", 1e-5f);
  if (ctx.hasOutput(1) || ctx.hasOutput(2)) {
    // The statistics as separate reductions; Y stays one layer_norm.
    SmallVector<int64_t> axes;
    for (int64_t d = *axis; d < rank; ++d)
      axes.push_back(d);
    auto mean = [&](Value v) {
      return ctx.make<ReduceMeanOp>(v, ctx.i64s(axes), ctx.b.getBoolAttr(true));
    };
    Value mu = mean(x);
    Value centered = ctx.make<SubOp>(x, mu);
    Value variance = mean(ctx.make<MulOp>(centered, centered));
    ctx.bindOutput(1, mu);
    ctx.bindOutput(2, ctx.make<RsqrtOp>(
                         ctx.make<AddOp>(variance, ctx.scalarLike(x, epsilon))));
  }
  Value bias = ctx.optionalInput(2);
  if (!bias)
    bias = ctx.scalarLike(x, 0);
  return ctx.setOutput(
      0, ctx.make<LayerNormOp>(x, ctx.input(1), bias, ctx.i64(*axis),
                               ctx.b.getF32FloatAttr(epsilon)));
}

/// RMSNormalization (opset 23): x / sqrt(mean(x^2 over [axis, rank)) +
/// epsilon) * scale, the first stage computed in float when stash_type is 1
/// (the default).
LogicalResult importRMSNormalization(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1);
  if (!x || !scale)
    return failure();
  int64_t rank = NodeContext::rankOf(x);
  std::optional<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", -1), rank);
  if (!axis)
    return failure();
  Type element = NodeContext::elementTypeOf(x);
  int64_t stash = ctx.intAttr("stash_type", 1);
  if (stash != 1 && stash != 0 && stash != 10 && stash != 11 && stash != 16)
    return ctx.invalid("stash_type must name a float type");
  Value xs = stash == 1 ? ctx.cast(x, ctx.b.getF32Type()) : x;
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  Value meanSquare =
      ctx.make<ReduceMeanOp>(ctx.make<MulOp>(xs, xs), ctx.i64s(axes), ctx.b.getBoolAttr(true));
  Value rms = ctx.make<SqrtOp>(
      ctx.make<AddOp>(meanSquare, ctx.scalarLike(meanSquare, ctx.floatAttr("epsilon", 1e-5f))));
  Value normalized = ctx.cast(ctx.make<DivOp>(xs, rms), element);
  return ctx.setOutput(0, ctx.make<MulOp>(normalized, scale));
}

/// GroupNormalization: mean and variance per instance per group of
/// channels (in float when stash_type is 1), then scale and bias per channel
/// (opset 21) or per group (opset 18).
LogicalResult importGroupNormalization(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  if (!x || !scale || !bias)
    return failure();
  int64_t rank = NodeContext::rankOf(x);
  if (rank < 2)
    return ctx.invalid("X must have a batch and a channel dim");
  std::optional<int64_t> channels = staticDim(ctx, x, 1, "GroupNormalization's channels");
  if (!channels)
    return failure();
  int64_t groups = ctx.intAttr("num_groups", 0);
  if (groups <= 0 || *channels % groups != 0)
    return ctx.invalid("num_groups must divide the channels");
  Type element = NodeContext::elementTypeOf(x);
  Value xs = ctx.intAttr("stash_type", 1) == 1 ? ctx.cast(x, ctx.b.getF32Type()) : x;
  Value grouped = ctx.make<ReshapeOp>(xs, ctx.i64s({0, groups, -1}));
  auto mean = [&](Value v) {
    return ctx.make<ReduceMeanOp>(v, ctx.i64s({2}), ctx.b.getBoolAttr(true));
  };
  Value centered = ctx.make<SubOp>(grouped, mean(grouped));
  Value variance = mean(ctx.make<MulOp>(centered, centered));
  Value normalized = ctx.make<MulOp>(
      centered, ctx.make<RsqrtOp>(ctx.make<AddOp>(
                    variance, ctx.scalarLike(variance, ctx.floatAttr("epsilon", 1e-5f)))));
  // Back to X's shape: [N, C, rest...] with the rest copied from X.
  RankedTensorType xType = NodeContext::typeOf(x);
  SmallVector<int64_t> back{0, *channels};
  for (int64_t d = 2; d < rank; ++d) {
    if (xType.isDynamicDim(d) && d != rank - 1)
      return ctx.unsupported("GroupNormalization with a dynamic spatial dim but the last");
    back.push_back(xType.isDynamicDim(d) ? -1 : xType.getDimSize(d));
  }
  Value y = ctx.cast(ctx.make<ReshapeOp>(normalized, ctx.i64s(back)), element);
  SmallVector<int64_t> perChannel(rank, 1);
  perChannel[1] = *channels;
  if (ctx.opset < 21) {
    // Opset 18: one scale and bias per group, repeated over its channels.
    SmallVector<int64_t> index;
    for (int64_t c = 0; c < *channels; ++c)
      index.push_back(c / (*channels / groups));
    scale = ctx.make<GatherOp>(scale, ctx.indices(index), ctx.i64(0));
    bias = ctx.make<GatherOp>(bias, ctx.indices(index), ctx.i64(0));
  }
  scale = ctx.make<ReshapeOp>(scale, ctx.i64s(perChannel));
  bias = ctx.make<ReshapeOp>(bias, ctx.i64s(perChannel));
  return ctx.setOutput(0, ctx.make<AddOp>(ctx.make<MulOp>(y, scale), bias));
}

/// LpNormalization: x / ||x||_p along an axis (p 1 or 2); zero where the
/// norm is zero.
LogicalResult importLpNormalization(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", -1), NodeContext::rankOf(x));
  if (!axis)
    return failure();
  int64_t p = ctx.intAttr("p", 2);
  if (p != 1 && p != 2)
    return ctx.invalid("p must be 1 or 2");
  auto sum = [&](Value v) {
    return ctx.make<ReduceSumOp>(v, ctx.i64s({*axis}), ctx.b.getBoolAttr(true));
  };
  Value norm = p == 1 ? sum(ctx.make<AbsOp>(x)) : ctx.make<SqrtOp>(sum(ctx.make<MulOp>(x, x)));
  Value zero = ctx.scalarLike(x, 0.0);
  Value isZero = compare(ctx, ComparePredicate::eq, norm, zero);
  Value safe = ctx.make<SelectOp>(isZero, ctx.scalarLike(x, 1.0), norm);
  return ctx.setOutput(0, ctx.make<SelectOp>(isZero, zero, ctx.make<DivOp>(x, safe)));
}

LogicalResult importMeanVarianceNormalization(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  SmallVector<int64_t> axes = ctx.intsAttr("axes");
  if (!ctx.hasAttr("axes"))
    axes = {0, 2, 3};
  for (int64_t &a : axes) {
    std::optional<int64_t> n = ctx.normalizeAxis(a, rank, "axes entry");
    if (!n)
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  auto mean = [&](Value v) {
    return ctx.make<ReduceMeanOp>(v, ctx.i64s(axes), ctx.b.getBoolAttr(true));
  };
  Value mu = mean(x);
  Value variance = ctx.make<SubOp>(mean(ctx.make<MulOp>(x, x)),
                                   ctx.make<MulOp>(mu, mu));
  Value deviation = ctx.make<AddOp>(ctx.make<SqrtOp>(variance),
                                    ctx.scalarLike(x, 1e-9));
  return ctx.setOutput(0, ctx.make<DivOp>(ctx.make<SubOp>(x, mu), deviation));
}

/// Applies `body` along `axis`; before opset 13 the input is first
/// flattened to 2-D at `axis` and `body` applies along dim 1.
Value alongAxis(NodeContext &ctx, Value x, int64_t defaultAxis,
                llvm::function_ref<Value(Value, int64_t)> body) {
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return {};
  int64_t rank = type.getRank();
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", defaultAxis), std::max<int64_t>(rank, 1));
  if (!axis)
    return {};
  if (rank == 0) {
    ctx.invalid("input must not be a scalar");
    return {};
  }
  if (ctx.opset >= 13 || *axis == rank - 1)
    return body(x, *axis);
  int64_t trailing = 1;
  for (int64_t d = *axis; d < rank; ++d) {
    std::optional<int64_t> size = staticDim(ctx, x, d, "coercing to 2-D");
    if (!size)
      return {};
    trailing *= *size;
  }
  Value flat = ctx.make<ReshapeOp>(x, ctx.i64s({-1, trailing}));
  SmallVector<int64_t> back;
  bool inferred = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (type.isDynamicDim(d) && !inferred) {
      back.push_back(-1);
      inferred = true;
    } else if (type.isDynamicDim(d)) {
      ctx.unsupported("coercing a tensor with two dynamic dims to 2-D");
      return {};
    } else {
      back.push_back(type.getDimSize(d));
    }
  }
  return ctx.make<ReshapeOp>(body(flat, 1), ctx.i64s(back));
}

template <typename OpTy> LogicalResult importSoftmaxFamily(NodeContext &ctx) {
  int64_t defaultAxis = ctx.opset >= 13 ? -1 : 1;
  return ctx.setOutput(0, alongAxis(ctx, ctx.input(0), defaultAxis,
                                    [&](Value v, int64_t axis) {
                                      return ctx.make<OpTy>(v, ctx.i64(axis));
                                    }));
}

LogicalResult importHardmax(NodeContext &ctx) {
  int64_t defaultAxis = ctx.opset >= 13 ? -1 : 1;
  return ctx.setOutput(
      0, alongAxis(ctx, ctx.input(0), defaultAxis, [&](Value v, int64_t axis) -> Value {
        int64_t rank = NodeContext::rankOf(v);
        Value best = ctx.make<ArgMaxOp>(v, ctx.i64(axis), ctx.b.getBoolAttr(true),
                                        ctx.b.getBoolAttr(false));
        Value iota = iotaOfDim(ctx, v, axis, rank, axis);
        Value hit = ctx.make<CompareOp>(
            ComparePredicateAttr::get(ctx.context(), ComparePredicate::eq),
            best, iota);
        return ctx.cast(hit, NodeContext::elementTypeOf(v));
      }));
}

} // namespace

void registerNormalizationOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("BatchNormalization", 1, any, importBatchNormalization);
  r.add("InstanceNormalization", 1, any, importInstanceNormalization);
  r.add("LayerNormalization", 17, any, importLayerNormalization);
  r.add("RMSNormalization", 23, any, importRMSNormalization);
  r.add("GroupNormalization", 18, any, importGroupNormalization);
  r.add("LpNormalization", 1, any, importLpNormalization);
  r.add("MeanVarianceNormalization", 9, any, importMeanVarianceNormalization);
  r.add("Softmax", 1, any, importSoftmaxFamily<SoftmaxOp>);
  r.add("LogSoftmax", 1, any, importSoftmaxFamily<LogSoftmaxOp>);
  r.add("Hardmax", 1, any, importHardmax);
}

} // namespace kiln::onnx_frontend
