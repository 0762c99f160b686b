//===- Normalization.cpp - ONNX normalisation and softmax -----------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

LogicalResult importBatchNormalization(NodeContext &ctx) {
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
        std::optional<int64_t> size = staticDim(ctx, v, axis, "Hardmax");
        if (!size)
          return {};
        int64_t rank = NodeContext::rankOf(v);
        Value best = ctx.make<ArgMaxOp>(v, ctx.i64(axis), ctx.b.getBoolAttr(true),
                                        ctx.b.getBoolAttr(false));
        SmallVector<int64_t> iotaShape(rank, 1);
        iotaShape[axis] = *size;
        Value iota = generateConstant(
            ctx, RankedTensorType::get(iotaShape, ctx.b.getI64Type()),
            [](int64_t i) { return static_cast<double>(i); });
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
  r.add("MeanVarianceNormalization", 9, any, importMeanVarianceNormalization);
  r.add("Softmax", 1, any, importSoftmaxFamily<SoftmaxOp>);
  r.add("LogSoftmax", 1, any, importSoftmaxFamily<LogSoftmaxOp>);
  r.add("Hardmax", 1, any, importHardmax);
}

} // namespace kiln::onnx_frontend
