//===- Loss.cpp - ONNX loss functions --------------------------------------===//
//
// NegativeLogLikelihoodLoss picks each target's log-probability with a
// one-hot mask (no data-dependent indexing), weights it and reduces;
// SoftmaxCrossEntropyLoss is log_softmax followed by the same.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {


/// The NLL of log-probabilities `logp` ([N, C, d...]) for `target`
/// ([N, d...]) with optional class weights, ignore_index and reduction.
Value negativeLogLikelihood(NodeContext &ctx, Value logp, Value target,
                            Value weight) {
  int64_t rank = NodeContext::rankOf(logp);
  if (rank < 2) {
    ctx.invalid("input must be [N, C, ...]");
    return {};
  }
  std::optional<int64_t> classes = staticDim(ctx, logp, 1, "the loss");
  if (!classes)
    return {};
  if (NodeContext::rankOf(target) != rank - 1) {
    ctx.invalid("target must have rank " + std::to_string(rank - 1) + " ([N, d1, ...]), not " +
                std::to_string(NodeContext::rankOf(target)));
    return {};
  }
  Value t = ctx.cast(target, ctx.b.getI64Type());
  Value keep;
  if (ctx.hasAttr("ignore_index")) {
    Value ignored = ctx.scalar(ctx.b.getI64Type(), ctx.intAttr("ignore_index", 0));
    keep = compare(ctx, ComparePredicate::ne, t, ignored);
    // An ignored target may be out of range: look up class 0 instead.
    t = ctx.make<SelectOp>(keep, t, ctx.scalarLike(t, 0));
  }
  SmallVector<int64_t> iotaShape(rank - 1, 1);
  iotaShape[0] = *classes;
  Value iota = generateConstant(ctx, RankedTensorType::get(iotaShape, ctx.b.getI64Type()),
                                [](int64_t i) { return static_cast<double>(i); });
  Value hit = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, t, {1}), iota);
  Value picked = ctx.make<ReduceSumOp>(
      ctx.make<SelectOp>(hit, logp, ctx.scalarLike(logp, 0)), ctx.i64s({1}),
      ctx.b.getBoolAttr(false));
  Value loss = ctx.make<NegOp>(picked);
  Value w = weight ? ctx.make<GatherOp>(weight, t, ctx.i64(0))
                   : Value();
  if (keep) {
    Value zero = ctx.scalarLike(logp, 0);
    w = ctx.make<SelectOp>(keep, w ? w : ctx.scalarLike(logp, 1), zero);
  }
  if (w)
    loss = ctx.make<MulOp>(loss, w);
  std::string reduction = ctx.stringAttr("reduction", "mean");
  if (reduction == "none")
    return loss;
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank - 1; ++d)
    all.push_back(d);
  auto total = [&](Value v) {
    return ctx.make<ReduceSumOp>(v, ctx.i64s(all), ctx.b.getBoolAttr(false));
  };
  if (reduction == "sum")
    return total(loss);
  if (reduction != "mean") {
    ctx.invalid("reduction '" + reduction + "' is not none, sum or mean");
    return {};
  }
  if (!w)
    return ctx.make<ReduceMeanOp>(loss, ctx.i64s(all), ctx.b.getBoolAttr(false));
  // A weighted mean divides by the weights actually used (w has the
  // target's shape, as the loss does).
  return ctx.make<DivOp>(total(loss), total(w));
}

LogicalResult importNLLLoss(NodeContext &ctx) {
  return ctx.setOutput(0, negativeLogLikelihood(ctx, ctx.input(0), ctx.input(1),
                                                ctx.optionalInput(2)));
}

LogicalResult importSoftmaxCrossEntropyLoss(NodeContext &ctx) {
  Value scores = ctx.input(0);
  Value logp = ctx.make<LogSoftmaxOp>(scores, ctx.i64(1));
  ctx.bindOutput(1, logp);
  return ctx.setOutput(0, negativeLogLikelihood(ctx, logp, ctx.input(1),
                                                ctx.optionalInput(2)));
}

} // namespace

void registerLossOps(OpRegistry &r) {
  r.add("NegativeLogLikelihoodLoss", 12, kAnyLaterOpset, importNLLLoss);
  r.add("SoftmaxCrossEntropyLoss", 12, kAnyLaterOpset, importSoftmaxCrossEntropyLoss);
}

} // namespace kiln::onnx_frontend
