//===- Pad.cpp - ONNX Pad and CenterCropPad -------------------------------===//
//
// Pad (constant, reflect, edge and, from opset 19, wrap; axes from opset
// 18) and CenterCropPad. Pads, values and axes that are constants become
// one kiln.pad; read when the model runs, each dim is a gather of the
// source index with the outside selected.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;
using namespace kiln;

namespace kiln::onnx_frontend {
namespace {

/// Pad with pads (or a constant value) read when the model runs: along
/// each dim a gather of the source index (i - low pad, clamped for edge,
/// mirrored for reflect, modulo the dim for wrap); constant mode selects the
/// value outside.
LogicalResult runtimePad(NodeContext &ctx, Value x, PadMode mode) {
  RankedTensorType type = NodeContext::typeOf(x);
  Value pads = runtimeInts(ctx, 1);
  if (!type || !pads)
    return failure();
  int64_t rank = type.getRank();
  if (ctx.opset >= 18 && ctx.hasInput(3) && !ctx.isKnownInput(3)) {
    // Axes read at run time: a dim's pad is the sum of the pads of the
    // axes that name it (at most one does).
    Value axes = runtimeAxes(ctx, 3, rank);
    RankedTensorType axesType = NodeContext::typeOf(axes);
    if (!axes || axesType.isDynamicDim(0))
      return failure();
    int64_t n = axesType.getDimSize(0);
    RankedTensorType given = NodeContext::typeOf(pads);
    if (given.getRank() != 1 || given.getDimSize(0) != 2 * n)
      return ctx.invalid("pads must hold two entries per axis");
    auto part = [&](int64_t start) {
      return ctx.make<SliceOp>(pads, ctx.i64s({start}), ctx.i64s({start + n}), ctx.i64s({1}));
    };
    Value lows = part(0), highs = part(n);
    SmallVector<Value> low, high;
    for (int64_t d = 0; d < rank; ++d) {
      Value names = ctx.cast(compare(ctx, ComparePredicate::eq, axes, i64Scalar(ctx, d)),
                             ctx.b.getI64Type());
      auto pick = [&](Value v) {
        return ctx.make<ReduceSumOp>(ctx.make<MulOp>(names, v), ctx.i64s({0}),
                                     ctx.b.getBoolAttr(false));
      };
      low.push_back(pick(lows));
      high.push_back(pick(highs));
    }
    low.append(high.begin(), high.end());
    pads = concatVector(ctx, low);
  } else if (ctx.opset >= 18 && ctx.hasInput(3)) {
    // Pads for the axes named (a constant): spread over every dim.
    std::optional<SmallVector<int64_t>> axes = ctx.intsInput(3, "axes");
    if (!axes)
      return failure();
    RankedTensorType given = NodeContext::typeOf(pads);
    if (given.getRank() != 1 || given.getDimSize(0) != 2 * static_cast<int64_t>(axes->size()))
      return ctx.invalid("pads must hold two entries per axis");
    SmallVector<Value> low(rank, i64Scalar(ctx, 0)), high(rank, i64Scalar(ctx, 0));
    for (size_t i = 0; i < axes->size(); ++i) {
      std::optional<int64_t> axis = ctx.normalizeAxis((*axes)[i], rank);
      if (!axis)
        return failure();
      low[*axis] = entryOf(ctx, pads, i);
      high[*axis] = entryOf(ctx, pads, i + axes->size());
    }
    low.append(high.begin(), high.end());
    pads = concatVector(ctx, low);
  }
  RankedTensorType padsType = NodeContext::typeOf(pads);
  if (padsType.getRank() != 1 || padsType.getDimSize(0) != 2 * rank)
    return ctx.unsupported("Pad with pads that are not two per dim (axes) read at run time");
  Value value = ctx.scalarLike(x, 0);
  if (ctx.hasInput(2)) {
    Value given = ctx.input(2);
    if (!given)
      return failure();
    value = asScalar(ctx, given);
  }
  // Pads computed at run time from shapes (SymbolicShapes.h) whose entries
  // for a dim are known zeros leave that dim, and its static size, alone.
  SmallVector<bool> unpadded(rank, false);
  if (ctx.isSymbolic(1) && !(ctx.opset >= 18 && ctx.hasInput(3)))
    if (std::optional<SymbolicInts> known = ctx.symbolicInput(1, "pads");
        known && static_cast<int64_t>(known->values.size()) == 2 * rank)
      for (int64_t d = 0; d < rank; ++d)
        unpadded[d] = known->values[d] == 0 && known->values[d + rank] == 0;
  auto c = [&](int64_t v) { return i64Scalar(ctx, v); };
  Value y = x, inside;
  for (int64_t d = 0; d < rank; ++d) {
    if (unpadded[d])
      continue;
    Value dim = dimValue(ctx, x, d);
    Value low = entryOf(ctx, pads, d), high = entryOf(ctx, pads, d + rank);
    Value size = ctx.make<AddOp>(ctx.make<AddOp>(dim, low), high);
    Value source = ctx.make<SubOp>(iotaOfLength(ctx, size), low);
    Value last = ctx.make<SubOp>(dim, c(1));
    Value index = source;
    if (mode == PadMode::reflect) {
      index = ctx.make<AbsOp>(index);
      index = ctx.make<SelectOp>(compare(ctx, ComparePredicate::gt, index, last),
                                 ctx.make<SubOp>(ctx.make<MulOp>(last, c(2)), index), index);
    }
    if (mode == PadMode::wrap)
      index = ctx.make<RemOp>(ctx.make<AddOp>(ctx.make<RemOp>(index, dim), dim), dim);
    index = ctx.make<MinOp>(ctx.make<MaxOp>(index, c(0)), last);
    y = ctx.make<GatherOp>(y, index, ctx.i64(d));
    if (mode == PadMode::constant) {
      Value in = ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, source, c(0)),
                                 compare(ctx, ComparePredicate::le, source, last));
      SmallVector<int64_t> spread(rank, 1);
      spread[d] = -1;
      in = ctx.make<ReshapeOp>(in, ctx.i64s(spread));
      inside = inside ? ctx.make<AndOp>(inside, in) : in;
    }
  }
  if (mode == PadMode::constant && inside)
    y = ctx.make<SelectOp>(inside, y, value);
  return ctx.setOutput(0, y);
}

LogicalResult importPad(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  std::string modeName = ctx.stringAttr("mode", "constant");
  PadMode mode;
  if (modeName == "constant")
    mode = PadMode::constant;
  else if (modeName == "reflect")
    mode = PadMode::reflect;
  else if (modeName == "edge")
    mode = PadMode::edge;
  else if (modeName == "wrap" && ctx.opset >= 19)
    mode = PadMode::wrap;
  else
    return ctx.unsupported("pad mode '" + modeName + "'");
  std::optional<SmallVector<int64_t>> pads;
  double value = 0;
  if (ctx.opset < 11) {
    pads = ctx.intsAttr(ctx.opset < 2 ? "paddings" : "pads");
    value = ctx.floatAttr("value", 0.0f);
  } else {
    if (!ctx.isKnownInput(1) || !ctx.isKnownInput(2) || !ctx.isKnownInput(3))
      return runtimePad(ctx, x, mode);
    pads = ctx.intsInput(1, "pads");
    if (ctx.hasInput(2)) {
      std::optional<SmallVector<double>> v = ctx.floatsInput(2, "constant_value");
      if (!v)
        return failure();
      if (v->size() != 1)
        return ctx.invalid("constant_value must hold one value");
      value = (*v)[0];
    }
  }
  if (!x || !pads)
    return failure();
  if (ctx.opset >= 18 && ctx.hasInput(3)) {
    std::optional<SmallVector<int64_t>> axes = ctx.intsInput(3, "axes");
    if (!axes)
      return failure();
    if (pads->size() != 2 * axes->size())
      return ctx.invalid("pads must hold two entries per axis");
    SmallVector<int64_t> full(2 * rank, 0);
    for (size_t i = 0; i < axes->size(); ++i) {
      std::optional<int64_t> axis = ctx.normalizeAxis((*axes)[i], rank);
      if (!axis)
        return failure();
      full[*axis] = (*pads)[i];
      full[*axis + rank] = (*pads)[i + axes->size()];
    }
    pads = full;
  }
  return ctx.setOutput(
      0, ctx.make<PadOp>(x, ctx.i64s(*pads),
                         PadModeAttr::get(ctx.context(), mode),
                         ctx.b.getF64FloatAttr(value)));
}

/// CenterCropPad (opset 18): each named axis cropped or zero-padded to its
/// entry of `shape` (read when the model runs), centred: the output
/// position o reads input o + crop start - pad start, where padding to
/// max(dim, size) puts (max - dim) / 2 before and the crop starts at
/// (max - size) / 2.
LogicalResult importCenterCropPad(NodeContext &ctx) {
  Value x = ctx.input(0);
  Value shape = runtimeInts(ctx, 1);
  if (!x || !shape)
    return failure();
  int64_t rank = NodeContext::rankOf(x);
  SmallVector<int64_t> axes = ctx.intsAttr("axes");
  if (!ctx.hasAttr("axes"))
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  RankedTensorType shapeType = NodeContext::typeOf(shape);
  if (shapeType.getRank() != 1 ||
      shapeType.getDimSize(0) != static_cast<int64_t>(axes.size()))
    return ctx.invalid("shape must hold one size per axis");
  auto c = [&](int64_t v) { return i64Scalar(ctx, v); };
  Value y = x, inside;
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int64_t> axis = ctx.normalizeAxis(axes[i], rank);
    if (!axis)
      return failure();
    Value dim = dimValue(ctx, x, *axis), size = entryOf(ctx, shape, i);
    Value padded = ctx.make<MaxOp>(dim, size);
    Value padStart = ctx.make<DivOp>(ctx.make<SubOp>(padded, dim), c(2));
    Value cropStart = ctx.make<DivOp>(ctx.make<SubOp>(padded, size), c(2));
    Value source = ctx.make<SubOp>(ctx.make<AddOp>(iotaOfLength(ctx, size), cropStart), padStart);
    Value last = ctx.make<SubOp>(dim, c(1));
    y = ctx.make<GatherOp>(y, ctx.make<MinOp>(ctx.make<MaxOp>(source, c(0)), last),
                           ctx.i64(*axis));
    Value in = ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, source, c(0)),
                               compare(ctx, ComparePredicate::le, source, last));
    SmallVector<int64_t> spread(rank, 1);
    spread[*axis] = -1;
    in = ctx.make<ReshapeOp>(in, ctx.i64s(spread));
    inside = inside ? ctx.make<AndOp>(inside, in) : in;
  }
  if (inside)
    y = ctx.make<SelectOp>(inside, y, ctx.scalarLike(x, 0));
  return ctx.setOutput(0, y);
}

} // namespace

void registerPadOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Pad", 1, any, importPad);
  r.add("CenterCropPad", 18, any, importCenterCropPad);
}

} // namespace kiln::onnx_frontend
