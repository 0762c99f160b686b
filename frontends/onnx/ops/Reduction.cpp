//===- Reduction.cpp - ONNX reductions and arg-reductions -----------------===//
//
// Axes come from an attribute (older opsets) or a constant input (ReduceSum
// from 13, the rest from 18). Empty axes mean "all" unless
// noop_with_empty_axes is set. L1, L2, LogSum, LogSumExp and SumSquare are
// built from kiln's sum and max.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

enum class Reduction { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

/// The sorted, normalised axes of a reduction node, or nullopt (recorded).
std::optional<SmallVector<int64_t>> reductionAxes(NodeContext &ctx, Value x,
                                                  bool axesAreInput) {
  int64_t rank = NodeContext::rankOf(x);
  SmallVector<int64_t> axes;
  if (axesAreInput) {
    if (ctx.hasInput(1)) {
      std::optional<SmallVector<int64_t>> given = ctx.intsInput(1, "axes");
      if (!given)
        return std::nullopt;
      axes = *given;
    }
  } else {
    axes = ctx.intsAttr("axes");
  }
  if (axes.empty()) {
    if (ctx.intAttr("noop_with_empty_axes", 0) != 0)
      return axes;
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
    return axes;
  }
  for (int64_t &a : axes) {
    std::optional<int64_t> n = ctx.normalizeAxis(a, rank, "axes entry");
    if (!n)
      return std::nullopt;
    a = *n;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

template <Reduction kind, int64_t axesInputSince>
LogicalResult importReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  std::optional<SmallVector<int64_t>> axes =
      reductionAxes(ctx, x, ctx.opset >= axesInputSince);
  if (!axes)
    return failure();
  DenseI64ArrayAttr axesAttr = ctx.i64s(*axes);
  BoolAttr keep = ctx.b.getBoolAttr(ctx.intAttr("keepdims", 1) != 0);
  auto sum = [&](Value v) { return ctx.make<ReduceSumOp>(v, axesAttr, keep); };
  Value y;
  switch (kind) {
  case Reduction::Sum:
    y = sum(x);
    break;
  case Reduction::Mean:
    y = ctx.make<ReduceMeanOp>(x, axesAttr, keep);
    break;
  case Reduction::Max:
    y = ctx.make<ReduceMaxOp>(x, axesAttr, keep);
    break;
  case Reduction::Min:
    y = ctx.make<ReduceMinOp>(x, axesAttr, keep);
    break;
  case Reduction::Prod:
    y = ctx.make<ReduceProdOp>(x, axesAttr, keep);
    break;
  case Reduction::L1:
    y = sum(ctx.make<AbsOp>(x));
    break;
  case Reduction::L2: {
    Type element = NodeContext::elementTypeOf(x);
    Value f = isa<FloatType>(element) ? x : ctx.cast(x, ctx.b.getF32Type());
    y = ctx.cast(ctx.make<SqrtOp>(sum(ctx.make<MulOp>(f, f))), element);
    break;
  }
  case Reduction::LogSum:
    y = ctx.make<LogOp>(sum(x));
    break;
  case Reduction::LogSumExp: {
    // max + log(sum(exp(x - max))), so large inputs do not overflow.
    Value max = ctx.make<ReduceMaxOp>(x, axesAttr, ctx.b.getBoolAttr(true));
    Value shifted = ctx.make<ExpOp>(ctx.make<SubOp>(x, max));
    Value logSum = ctx.make<LogOp>(
        ctx.make<ReduceSumOp>(shifted, axesAttr, ctx.b.getBoolAttr(true)));
    y = ctx.make<AddOp>(logSum, max);
    if (!keep.getValue())
      y = squeeze(ctx, y, *axes);
    break;
  }
  case Reduction::SumSquare:
    y = sum(ctx.make<MulOp>(x, x));
    break;
  }
  return ctx.setOutput(0, y);
}

template <typename OpTy> LogicalResult importArgReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), NodeContext::rankOf(x));
  if (!axis)
    return failure();
  return ctx.setOutput(
      0, ctx.make<OpTy>(x, ctx.i64(*axis),
                        ctx.b.getBoolAttr(ctx.intAttr("keepdims", 1) != 0),
                        ctx.b.getBoolAttr(ctx.intAttr("select_last_index", 0) != 0)));
}

} // namespace

void registerReductionOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("ReduceSum", 1, any, importReduce<Reduction::Sum, 13>);
  r.add("ReduceMean", 1, any, importReduce<Reduction::Mean, 18>);
  r.add("ReduceMax", 1, any, importReduce<Reduction::Max, 18>);
  r.add("ReduceMin", 1, any, importReduce<Reduction::Min, 18>);
  r.add("ReduceProd", 1, any, importReduce<Reduction::Prod, 18>);
  r.add("ReduceL1", 1, any, importReduce<Reduction::L1, 18>);
  r.add("ReduceL2", 1, any, importReduce<Reduction::L2, 18>);
  r.add("ReduceLogSum", 1, any, importReduce<Reduction::LogSum, 18>);
  r.add("ReduceLogSumExp", 1, any, importReduce<Reduction::LogSumExp, 18>);
  r.add("ReduceSumSquare", 1, any, importReduce<Reduction::SumSquare, 18>);
  r.add("ArgMax", 1, any, importArgReduce<ArgMaxOp>);
  r.add("ArgMin", 1, any, importArgReduce<ArgMinOp>);
}

} // namespace kiln::onnx_frontend
