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
  bool noopWithEmptyAxes = ctx.intAttr("noop_with_empty_axes", 0) != 0;
  if (axes.empty()) {
    if (noopWithEmptyAxes)
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

/// The reductions of `kind` over `axes` built from kiln's primitive
/// reductions; `reduce(prim, v, keep)` applies primitive `prim` (Sum, Mean,
/// Max, Min or Prod) over the axes, whatever decides them.
template <typename Reduce>
Value buildReduction(NodeContext &ctx, Reduction kind, Value x, bool keep, Reduce reduce) {
  auto sum = [&](Value v) { return reduce(Reduction::Sum, v, keep); };
  switch (kind) {
  case Reduction::Sum:
  case Reduction::Mean:
  case Reduction::Max:
  case Reduction::Min:
  case Reduction::Prod:
    return reduce(kind, x, keep);
  case Reduction::L1:
    return sum(ctx.make<AbsOp>(x));
  case Reduction::L2: {
    Type element = NodeContext::elementTypeOf(x);
    Value f = isa<FloatType>(element) ? x : ctx.cast(x, ctx.b.getF32Type());
    return ctx.cast(ctx.make<SqrtOp>(sum(ctx.make<MulOp>(f, f))), element);
  }
  case Reduction::LogSum:
    return ctx.make<LogOp>(sum(x));
  case Reduction::LogSumExp: {
    // max + log(sum(exp(x - max))), so large inputs do not overflow; the
    // caller drops the kept dims when keepdims is 0.
    Value max = reduce(Reduction::Max, x, true);
    Value shifted = ctx.make<ExpOp>(ctx.make<SubOp>(x, max));
    return ctx.make<AddOp>(ctx.make<LogOp>(reduce(Reduction::Sum, shifted, true)), max);
  }
  case Reduction::SumSquare:
    return sum(ctx.make<MulOp>(x, x));
  }
  return {};
}

Value primitive(NodeContext &ctx, Reduction prim, Value v, ArrayRef<int64_t> axes, bool keep) {
  DenseI64ArrayAttr axesAttr = ctx.i64s(axes);
  BoolAttr keepAttr = ctx.b.getBoolAttr(keep);
  switch (prim) {
  case Reduction::Mean:
    return ctx.make<ReduceMeanOp>(v, axesAttr, keepAttr);
  case Reduction::Max:
    return ctx.make<ReduceMaxOp>(v, axesAttr, keepAttr);
  case Reduction::Min:
    return ctx.make<ReduceMinOp>(v, axesAttr, keepAttr);
  case Reduction::Prod:
    return ctx.make<ReduceProdOp>(v, axesAttr, keepAttr);
  default:
    return ctx.make<ReduceSumOp>(v, axesAttr, keepAttr);
  }
}

/// A reduction over axes read when the model runs: along each dim, the
/// dim reduced (kept as 1) where the axes name it, else left whole (so
/// every dim costs one reduction); keepdims = 0 then drops the named dims.
Value runtimeReduce(NodeContext &ctx, Reduction kind, Value x) {
  std::optional<int64_t> count = removedAxesCount(ctx, x, 1);
  if (!count)
    return {};
  // The axes have a static length, and not 0 (an empty tensor is known when
  // compiling): noop_with_empty_axes cannot apply.
  ctx.attrsWithoutEffect({"noop_with_empty_axes"});
  int64_t rank = NodeContext::rankOf(x);
  Value flags = axisFlags(ctx, runtimeAxes(ctx, 1, rank), rank);
  auto reduce = [&](Reduction prim, Value v, bool) {
    for (int64_t d = 0; d < rank; ++d) {
      Value named = compare(ctx, ComparePredicate::ne, entryOf(ctx, flags, d), i64Scalar(ctx, 0));
      Value size = ctx.make<SelectOp>(named, i64Scalar(ctx, 1), dimValue(ctx, v, d));
      Value positions = iotaOfLength(ctx, size);
      Value reduced = ctx.make<GatherOp>(primitive(ctx, prim, v, {d}, true),
                                         ctx.make<MulOp>(positions, i64Scalar(ctx, 0)),
                                         ctx.i64(d));
      v = ctx.make<SelectOp>(named, reduced, ctx.make<GatherOp>(v, positions, ctx.i64(d)));
    }
    return v;
  };
  Value y = buildReduction(ctx, kind, x, true, reduce);
  if (ctx.intAttr("keepdims", 1) == 0)
    y = squeezeFlagged(ctx, y, flags, rank - *count);
  return y;
}

template <Reduction kind, int64_t axesInputSince>
LogicalResult importReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  // ReduceMax/Min 20 take bool (any / all): reduced as 0.0 and 1.0.
  Type element = NodeContext::elementTypeOf(x);
  bool isBool = element.isInteger(1);
  if (isBool) {
    if (kind != Reduction::Max && kind != Reduction::Min)
      return ctx.invalid("only ReduceMax and ReduceMin take bool inputs");
    x = ctx.cast(x, ctx.b.getF32Type());
  }
  auto finish = [&](Value y) {
    if (!y)
      return failure();
    // Back to bool by > 0.5: an empty ReduceMax (-inf) is false, an empty
    // ReduceMin (+inf) true.
    return ctx.setOutput(0, isBool ? compare(ctx, ComparePredicate::gt, y, ctx.scalarLike(y, 0.5))
                                   : y);
  };
  if (ctx.opset >= axesInputSince && !ctx.isKnownInput(1))
    return finish(runtimeReduce(ctx, kind, x));
  std::optional<SmallVector<int64_t>> axes =
      reductionAxes(ctx, x, ctx.opset >= axesInputSince);
  if (!axes)
    return failure();
  bool keep = ctx.intAttr("keepdims", 1) != 0;
  Value y = buildReduction(ctx, kind, x, keep, [&](Reduction prim, Value v, bool keepDims) {
    return primitive(ctx, prim, v, *axes, keepDims);
  });
  if (kind == Reduction::LogSumExp && !keep)
    y = squeeze(ctx, y, *axes);
  return finish(y);
}

template <typename OpTy> LogicalResult importArgReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), NodeContext::rankOf(x));
  if (!axis)
    return failure();
  // An axis with no elements has no position to give (ONNX Runtime stops;
  // Kiln gave 0): refused when known, else the run stops.
  int64_t length = NodeContext::typeOf(x).getDimSize(*axis);
  if (length == 0)
    return ctx.invalid("axis " + llvm::Twine(*axis) + " has no elements: there is no position "
                       "to give");
  Value result = ctx.make<OpTy>(x, ctx.i64(*axis),
                                ctx.b.getBoolAttr(ctx.intAttr("keepdims", 1) != 0),
                                ctx.b.getBoolAttr(ctx.intAttr("select_last_index", 0) != 0));
  if (ShapedType::isDynamic(length))
    result = requireAtRunTime(ctx, result,
                              compare(ctx, ComparePredicate::gt, dimValue(ctx, x, *axis),
                                      i64Scalar(ctx, 0)));
  return ctx.setOutput(0, result);
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
