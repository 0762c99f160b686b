//===- Shape.cpp - ONNX shape and layout ops ------------------------------===//
//
// Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Split, Slice, Expand,
// Tile, Shape, Size, DepthToSpace and SpaceToDepth (Pad and CenterCropPad:
// Pad.cpp). Inputs that carry shapes, axes or sizes are folded when they
// are constants (the importer folds as it builds, so Shape -> Gather ->
// Concat -> Reshape on static tensors becomes a constant) and read when
// the model runs otherwise (ops/Helpers.h).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

/// Axes from the attribute `name` before `inputSince`, else from input `i`
/// (absent input -> empty).
std::optional<SmallVector<int64_t>> axesFrom(NodeContext &ctx, int64_t inputSince,
                                             size_t i, StringRef name) {
  if (ctx.opset < inputSince)
    return ctx.intsAttr(name);
  if (!ctx.hasInput(i))
    return SmallVector<int64_t>();
  return ctx.intsInput(i, name);
}

std::optional<SmallVector<int64_t>> normalizeAxes(NodeContext &ctx,
                                                  SmallVector<int64_t> axes,
                                                  int64_t rank) {
  for (int64_t &a : axes) {
    std::optional<int64_t> n = ctx.normalizeAxis(a, rank, "axes entry");
    if (!n)
      return std::nullopt;
    a = *n;
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    ctx.invalid("axes repeat an axis");
    return std::nullopt;
  }
  return axes;
}

/// A shape input with at most `allowedUnknown` elements known only at run
/// time, those replaced by `unknownAs` (SymbolicShapes.h).
static std::optional<SmallVector<int64_t>>
shapeWithUnknowns(NodeContext &ctx, size_t i, int64_t unknownAs) {
  std::optional<SymbolicInts> shape = ctx.symbolicInput(i, "shape");
  if (!shape)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const std::optional<int64_t> &v : shape->values)
    out.push_back(v ? *v : unknownAs);
  return out;
}

LogicalResult importReshape(NodeContext &ctx) {
  bool allowZero = ctx.intAttr("allowzero", 0) != 0;
  // A shape computed at run time, reshaped (torch's exporter flattens
  // between shape computations, and reshapes F.pad's pads to pairs): the
  // same elements.
  if (ctx.opset >= 5 && ctx.isSymbolic(0)) {
    std::optional<SymbolicInts> data = ctx.symbolicInput(0, "data");
    std::optional<SmallVector<int64_t>> target = ctx.intsInput(1, "shape");
    if (!data || !target)
      return failure();
    SmallVector<int64_t> from = data->shape(), dims;
    int64_t count = static_cast<int64_t>(data->values.size()), product = 1, inferred = -1;
    for (auto [k, v] : llvm::enumerate(*target)) {
      if (v == 0 && !allowZero) {
        if (k >= from.size())
          return ctx.invalid("shape copies a dim the data does not have");
        v = from[k];
      }
      if (v == -1) {
        if (inferred >= 0)
          return ctx.invalid("shape infers more than one dim");
        inferred = static_cast<int64_t>(k);
        v = 1;
      } else if (v < 0) {
        return ctx.invalid("shape has a negative dim");
      }
      dims.push_back(v);
      product *= v;
    }
    if (inferred >= 0 && product != 0 && count % product == 0)
      dims[inferred] = count / product;
    else if (inferred >= 0 || product != count)
      return ctx.invalid("shape does not hold the data's " + llvm::Twine(count) + " elements");
    SymbolicInts reshaped = *data;
    reshaped.scalar = dims.empty();
    reshaped.dims.clear();
    if (dims.size() > 1)
      reshaped.dims = dims;
    if (Value value = ctx.optionalInput(0))
      ctx.bindOutput(0, ctx.make<ReshapeOp>(value, ctx.i64s(dims)));
    return ctx.setSymbolicOutput(0, reshaped);
  }
  Value x = ctx.input(0);
  // A shape read when the model runs.
  if (ctx.opset >= 5 && !ctx.isKnownInput(1) && !ctx.isSymbolic(1))
    return ctx.setOutput(0, ctx.make<DynamicReshapeOp>(x, runtimeInts(ctx, 1),
                                                       ctx.b.getBoolAttr(allowZero),
                                                       DenseI64ArrayAttr()));
  std::optional<SmallVector<int64_t>> shape =
      ctx.opset < 5 ? std::optional(ctx.intsAttr("shape")) : shapeWithUnknowns(ctx, 1, -2);
  if (!shape)
    return failure();
  // One element known only at run time (a dynamic batch times something)
  // is the one the reshape infers.
  int64_t unknown = llvm::count(*shape, -2);
  if (unknown > 1 || (unknown == 1 && llvm::is_contained(*shape, -1))) {
    // Several dims computed at run time: a reshape by the run-time value,
    // with the dims the importer can tell (checked when the model runs).
    Value target = ctx.optionalInput(1);
    if (!target)
      return ctx.unsupported("Reshape to a shape with more than one dim computed at run time");
    return ctx.setOutput(0, ctx.make<DynamicReshapeOp>(
                                x, runtimeInts(ctx, 1), ctx.b.getBoolAttr(allowZero),
                                ctx.i64s(knownReshapeDims(x, *shape, allowZero, target))));
  }
  llvm::replace(*shape, int64_t(-2), int64_t(-1));
  // allowzero: a 0 is a size, not a copy (kiln.reshape reads 0 as a copy).
  if (allowZero && llvm::is_contained(*shape, 0))
    return ctx.setOutput(0, ctx.make<DynamicReshapeOp>(x, ctx.indices(*shape),
                                                       ctx.b.getBoolAttr(true),
                                                       DenseI64ArrayAttr()));
  return ctx.setOutput(0, ctx.make<ReshapeOp>(x, ctx.i64s(*shape)));
}

/// The shape [d0 * ... * d(axis-1), d(axis) * ... * d(rank-1)] of `x`
/// flattened at `axis`, from its run-time dims (a 1-D i64 tensor of 2).
Value flattenedShape(NodeContext &ctx, Value x, int64_t axis) {
  int64_t rank = NodeContext::rankOf(x);
  Value shape = shapeTensor(ctx, x);
  auto product = [&](int64_t from, int64_t to) {
    Value p = ctx.indices({1});
    for (int64_t d = from; d < to; ++d)
      p = ctx.make<MulOp>(p, ctx.make<GatherOp>(shape, ctx.indices({d}), ctx.i64(0)));
    return p;
  };
  return ctx.make<ConcatOp>(ValueRange{product(0, axis), product(axis, rank)}, ctx.i64(0));
}

LogicalResult importFlatten(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  int64_t axis = ctx.intAttr("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.invalid("axis " + llvm::Twine(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  auto product = [&](int64_t from, int64_t to) -> int64_t {
    int64_t p = 1;
    for (int64_t d = from; d < to; ++d) {
      if (type.isDynamicDim(d))
        return ShapedType::kDynamic;
      p *= type.getDimSize(d);
    }
    return p;
  };
  int64_t outer = product(0, axis), inner = product(axis, rank);
  SmallVector<int64_t> spec;
  if (!ShapedType::isDynamic(outer))
    spec = {outer, ShapedType::isDynamic(inner) ? -1 : inner};
  else if (!ShapedType::isDynamic(inner))
    spec = {axis == 1 ? 0 : -1, inner};
  else
    return ctx.setOutput(0, ctx.make<DynamicReshapeOp>(x, flattenedShape(ctx, x, axis),
                                                       ctx.b.getBoolAttr(true),
                                                       DenseI64ArrayAttr()));
  return ctx.setOutput(0, ctx.make<ReshapeOp>(x, ctx.i64s(spec)));
}

/// Unsqueeze by axes read at run time: the result's dims are 1 at the
/// axes and the input's dims, in order, elsewhere.
LogicalResult runtimeUnsqueeze(NodeContext &ctx, Value x) {
  RankedTensorType axesType = NodeContext::typeOf(ctx.input(1));
  if (!axesType || axesType.getRank() != 1 || axesType.isDynamicDim(0))
    return ctx.unsupported("Unsqueeze axes of a length known only at run time");
  int64_t rank = NodeContext::rankOf(x), resultRank = rank + axesType.getDimSize(0);
  Value flags = axisFlags(ctx, runtimeAxes(ctx, 1, resultRank), resultRank);
  Value target = ctx.make<ExpandOp>(ctx.indices({1}), ctx.i64s({resultRank}));
  if (rank > 0) {
    Value source = ctx.make<SubOp>(iotaAlong(ctx, {resultRank}, 0),
                                   countBefore(ctx, flags, resultRank));
    Value dims = ctx.make<GatherOp>(shapeTensor(ctx, x), source, ctx.i64(0));
    target = ctx.make<SelectOp>(compare(ctx, ComparePredicate::ne, flags, i64Scalar(ctx, 0)),
                                i64Scalar(ctx, 1), dims);
  }
  return ctx.setOutput(
      0, ctx.make<DynamicReshapeOp>(x, target, ctx.b.getBoolAttr(true), DenseI64ArrayAttr()));
}

/// Squeeze by axes read at run time: the input's dims but those at the
/// axes, in order.
LogicalResult runtimeSqueeze(NodeContext &ctx, Value x) {
  std::optional<int64_t> axesCount = removedAxesCount(ctx, x, 1);
  if (!axesCount)
    return failure();
  RankedTensorType type = NodeContext::typeOf(x);
  int64_t rank = type.getRank(), count = *axesCount;
  // Every size-1 dim squeezed: the axes cannot be anything else.
  if (type.hasStaticShape() && llvm::count(type.getShape(), 1) == count) {
    SmallVector<int64_t> ones;
    for (int64_t d = 0; d < rank; ++d)
      if (type.getDimSize(d) == 1)
        ones.push_back(d);
    return ctx.setOutput(0, squeeze(ctx, x, ones));
  }
  Value flags = axisFlags(ctx, runtimeAxes(ctx, 1, rank), rank);
  return ctx.setOutput(0, squeezeFlagged(ctx, x, flags, rank - count));
}

LogicalResult importSqueeze(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (ctx.opset >= 13 && !ctx.isKnownInput(1) && !ctx.isSymbolic(1))
    return runtimeSqueeze(ctx, x);
  std::optional<SmallVector<int64_t>> axes = axesFrom(ctx, 13, 1, "axes");
  if (!type || !axes)
    return failure();
  if (axes->empty()) {
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.isDynamicDim(d))
        return ctx.unsupported("Squeeze without axes of a tensor with "
                               "dynamic dims");
      if (type.getDimSize(d) == 1)
        axes->push_back(d);
    }
  }
  axes = normalizeAxes(ctx, *axes, type.getRank());
  if (!axes)
    return failure();
  return ctx.setOutput(0, squeeze(ctx, x, *axes));
}

LogicalResult importUnsqueeze(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (ctx.opset >= 13 && !ctx.isKnownInput(1) && !ctx.isSymbolic(1))
    return runtimeUnsqueeze(ctx, x);
  std::optional<SmallVector<int64_t>> axes = axesFrom(ctx, 13, 1, "axes");
  if (!x || !axes)
    return failure();
  axes = normalizeAxes(ctx, *axes, NodeContext::rankOf(x) + axes->size());
  if (!axes)
    return failure();
  return ctx.setOutput(0, unsqueeze(ctx, x, *axes));
}

LogicalResult importTranspose(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  SmallVector<int64_t> perm = ctx.intsAttr("perm");
  if (!ctx.hasAttr("perm"))
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  for (int64_t &p : perm)
    if (p < 0)
      p += rank;
  return ctx.setOutput(0, ctx.make<TransposeOp>(x, ctx.i64s(perm)));
}

LogicalResult importConcat(NodeContext &ctx) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    inputs.push_back(ctx.input(i));
  if (inputs.empty())
    return ctx.invalid("needs at least one input");
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 1), NodeContext::rankOf(inputs[0]));
  if (!axis)
    return failure();
  return ctx.setOutput(0, ctx.make<ConcatOp>(ValueRange(inputs), ctx.i64(*axis)));
}

/// Split with sizes read when the model runs (splitAtRunTime): output i is
/// piece i.
LogicalResult bindRuntimeSplit(NodeContext &ctx, Value x, int64_t axis, ArrayRef<Value> sizes) {
  for (auto [i, piece] : llvm::enumerate(splitAtRunTime(ctx, x, axis, sizes)))
    ctx.bindOutput(i, piece);
  return ctx.finish();
}

LogicalResult importSplit(NodeContext &ctx) {
  Value x = ctx.input(0);
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), NodeContext::rankOf(x));
  if (ctx.opset >= 13 && !ctx.isKnownInput(1)) {
    Value sizes = runtimeInts(ctx, 1);
    if (!axis || !sizes)
      return failure();
    RankedTensorType sizesType = NodeContext::typeOf(sizes);
    if (sizesType.getRank() != 1 || sizesType.getDimSize(0) != static_cast<int64_t>(ctx.numOutputs()))
      return ctx.invalid("split must hold one size per output");
    SmallVector<Value> pieces;
    for (size_t i = 0; i < ctx.numOutputs(); ++i)
      pieces.push_back(entryOf(ctx, sizes, i));
    return bindRuntimeSplit(ctx, x, *axis, pieces);
  }
  std::optional<SmallVector<int64_t>> sizes = axesFrom(ctx, 13, 1, "split");
  if (!axis || !sizes)
    return failure();
  int64_t parts = ctx.numOutputs();
  if (sizes->empty()) {
    if (ctx.hasAttr("num_outputs"))
      parts = ctx.intAttr("num_outputs", parts);
    if (parts <= 0)
      return ctx.invalid("no outputs to split into");
    if (parts != static_cast<int64_t>(ctx.numOutputs()))
      return ctx.invalid("num_outputs differs from the node's outputs");
    if (NodeContext::typeOf(x).isDynamicDim(*axis)) {
      // An even split of a dim known at run time: pieces of ceil(dim /
      // parts), the last one shorter. (Before opset 18 the dim must divide
      // evenly; an uneven one gives the same pieces.)
      Value dim = dimValue(ctx, x, *axis), n = i64Scalar(ctx, parts);
      Value chunk = ctx.make<DivOp>(
          ctx.make<AddOp>(dim, i64Scalar(ctx, parts - 1)), n);
      SmallVector<Value> pieces;
      for (int64_t i = 0; i < parts; ++i) {
        Value left = ctx.make<SubOp>(dim, ctx.make<MulOp>(chunk, i64Scalar(ctx, i)));
        pieces.push_back(ctx.make<MinOp>(chunk, ctx.make<MaxOp>(left, i64Scalar(ctx, 0))));
      }
      return bindRuntimeSplit(ctx, x, *axis, pieces);
    }
    int64_t dim = NodeContext::typeOf(x).getDimSize(*axis);
    int64_t chunk = (dim + parts - 1) / parts;
    if (ctx.opset < 18 && dim % parts != 0)
      return ctx.invalid("dim of " + llvm::Twine(dim) +
                         " does not split evenly into " + llvm::Twine(parts));
    for (int64_t i = 0, left = dim; i < parts; ++i, left -= chunk)
      sizes->push_back(std::min(chunk, left));
  }
  if (static_cast<int64_t>(sizes->size()) != static_cast<int64_t>(ctx.numOutputs()))
    return ctx.invalid(llvm::Twine(sizes->size()) + " split sizes for " +
                       llvm::Twine(ctx.numOutputs()) + " outputs");
  SmallVector<Value> pieces = ctx.makeMulti<SplitOp>(
      sizes->size(), x, ctx.i64(*axis), ctx.i64s(*sizes));
  for (auto [i, piece] : llvm::enumerate(pieces))
    ctx.bindOutput(i, piece);
  return ctx.finish();
}

/// Indices of an ONNX Slice of a dim of size `dim` (rank-0 i64 values):
/// start and end clamped as ONNX says, then start + i * step for i below
/// the count. A zero step gives a negative count (a run-time error).
Value sliceIndices(NodeContext &ctx, Value dim, Value start, Value end, Value step) {
  auto c = [&](int64_t v) { return i64Scalar(ctx, v); };
  auto clamp = [&](Value v, Value lo, Value hi) {
    return ctx.make<MinOp>(ctx.make<MaxOp>(v, lo), hi);
  };
  auto fromEnd = [&](Value v) {
    return ctx.make<SelectOp>(compare(ctx, ComparePredicate::lt, v, c(0)),
                              ctx.make<AddOp>(v, dim), v);
  };
  Value s = fromEnd(start), e = fromEnd(end);
  Value lastIndex = ctx.make<SubOp>(dim, c(1));
  Value forward = compare(ctx, ComparePredicate::gt, step, c(0));
  Value first = ctx.make<SelectOp>(forward, clamp(s, c(0), dim), clamp(s, c(0), lastIndex));
  Value stop = ctx.make<SelectOp>(forward, clamp(e, c(0), dim), clamp(e, c(-1), lastIndex));
  // ceil(|stop - first| / |step|), at least 0.
  Value distance = ctx.make<SelectOp>(forward, ctx.make<SubOp>(stop, first),
                                      ctx.make<SubOp>(first, stop));
  Value stride = ctx.make<SelectOp>(forward, step, ctx.make<NegOp>(step));
  Value zeroStep = compare(ctx, ComparePredicate::eq, step, c(0));
  Value safeStride = ctx.make<SelectOp>(zeroStep, c(1), stride);
  Value count = ctx.make<DivOp>(
      ctx.make<AddOp>(ctx.make<MaxOp>(distance, c(0)), ctx.make<SubOp>(safeStride, c(1))),
      safeStride);
  count = ctx.make<SelectOp>(zeroStep, c(-1), count);
  return ctx.make<AddOp>(first, ctx.make<MulOp>(iotaOfLength(ctx, count), step));
}

/// Slice with starts, ends, axes or steps read when the model runs: each
/// dim that may be sliced is a gather of computed indices.
LogicalResult runtimeSlice(NodeContext &ctx, Value x) {
  RankedTensorType type = NodeContext::typeOf(x);
  Value starts = runtimeInts(ctx, 1), ends = runtimeInts(ctx, 2);
  if (!type || !starts || !ends)
    return failure();
  RankedTensorType startsType = NodeContext::typeOf(starts);
  if (startsType.getRank() != 1 || startsType.isDynamicDim(0))
    return ctx.unsupported("Slice starts of a length known only at run time");
  int64_t rank = type.getRank(), count = startsType.getDimSize(0);
  Value steps = ctx.hasInput(4) ? runtimeInts(ctx, 4)
                                : ctx.indices(SmallVector<int64_t>(count, 1));
  // Axes known when compiling say which dims are sliced; else every dim
  // takes its entry where the axes name it (and is kept whole elsewhere).
  std::optional<SmallVector<int64_t>> knownAxes;
  if (!ctx.hasInput(3)) {
    knownAxes.emplace();
    for (int64_t i = 0; i < count; ++i)
      knownAxes->push_back(i);
  } else if (ctx.isKnownInput(3)) {
    knownAxes = ctx.intsInput(3, "axes");
    if (!knownAxes)
      return failure();
  }
  Value y = x;
  if (knownAxes) {
    if (static_cast<int64_t>(knownAxes->size()) != count)
      return ctx.invalid("starts and axes differ in length");
    for (int64_t i = 0; i < count; ++i) {
      std::optional<int64_t> axis = ctx.normalizeAxis((*knownAxes)[i], rank, "axes entry");
      if (!axis)
        return failure();
      Value indices = sliceIndices(ctx, dimValue(ctx, x, *axis), entryOf(ctx, starts, i),
                                   entryOf(ctx, ends, i), entryOf(ctx, steps, i));
      y = ctx.make<GatherOp>(y, indices, ctx.i64(*axis));
    }
    return ctx.setOutput(0, y);
  }
  Value axes = runtimeAxes(ctx, 3, rank);
  for (int64_t d = 0; d < rank; ++d) {
    Value named = compare(ctx, ComparePredicate::eq, axes, i64Scalar(ctx, d));
    auto pick = [&](Value entries, int64_t otherwise) {
      Value chosen = ctx.make<ReduceSumOp>(
          ctx.make<SelectOp>(named, entries, i64Scalar(ctx, 0)), ctx.i64s({0}),
          ctx.b.getBoolAttr(false));
      Value any = ctx.make<ReduceMaxOp>(ctx.cast(named, ctx.b.getI64Type()), ctx.i64s({0}),
                                        ctx.b.getBoolAttr(false));
      return ctx.make<SelectOp>(compare(ctx, ComparePredicate::ne, any, i64Scalar(ctx, 0)),
                                chosen, i64Scalar(ctx, otherwise));
    };
    Value indices = sliceIndices(ctx, dimValue(ctx, x, d), pick(starts, 0),
                                 pick(ends, int64_t(1) << 62), pick(steps, 1));
    y = ctx.make<GatherOp>(y, indices, ctx.i64(d));
  }
  return ctx.setOutput(0, y);
}

LogicalResult importSlice(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  if (ctx.opset >= 10 && (!ctx.isKnownInput(1) || !ctx.isKnownInput(2) ||
                          !ctx.isKnownInput(3) || !ctx.isKnownInput(4)))
    return runtimeSlice(ctx, x);
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = ctx.intsAttr("starts");
    ends = ctx.intsAttr("ends");
    axes = ctx.intsAttr("axes");
  } else {
    starts = ctx.intsInput(1, "starts");
    ends = ctx.intsInput(2, "ends");
    axes = ctx.hasInput(3) ? ctx.intsInput(3, "axes") : SmallVector<int64_t>();
    steps = ctx.hasInput(4) ? ctx.intsInput(4, "steps") : SmallVector<int64_t>();
  }
  if (!x || !starts || !ends || !axes || (ctx.opset >= 10 && !steps))
    return failure();
  if (axes->empty())
    for (size_t i = 0; i < starts->size(); ++i)
      axes->push_back(i);
  if (!steps || steps->empty())
    steps = SmallVector<int64_t>(starts->size(), 1);
  if (ends->size() != starts->size() || axes->size() != starts->size() ||
      steps->size() != starts->size())
    return ctx.invalid("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> fullStarts(rank, 0), fullEnds(rank, INT64_MAX),
      fullSteps(rank, 1);
  for (size_t i = 0; i < axes->size(); ++i) {
    std::optional<int64_t> axis = ctx.normalizeAxis((*axes)[i], rank, "axes entry");
    if (!axis)
      return failure();
    fullStarts[*axis] = (*starts)[i];
    fullEnds[*axis] = (*ends)[i];
    fullSteps[*axis] = (*steps)[i];
  }
  return ctx.setOutput(0, ctx.make<SliceOp>(x, ctx.i64s(fullStarts),
                                            ctx.i64s(fullEnds),
                                            ctx.i64s(fullSteps)));
}

LogicalResult importExpand(NodeContext &ctx) {
  // A shape read when the model runs: broadcast against an iota of it.
  if (!ctx.isKnownInput(1) && !ctx.isSymbolic(1)) {
    Value x = ctx.input(0);
    Value iota = ctx.make<IotaOp>(runtimeInts(ctx, 1), ctx.i64(0));
    Value all = compare(ctx, ComparePredicate::eq, iota, iota);
    return ctx.setOutput(0, ctx.make<SelectOp>(all, x, x));
  }
  std::optional<SmallVector<int64_t>> shape = shapeWithUnknowns(ctx, 1, -2);
  RankedTensorType type = NodeContext::typeOf(ctx.input(0));
  if (!shape || !type)
    return failure();
  // A dim known only at run time keeps the input's own dynamic dim (1
  // broadcasts to it); against a static input dim it cannot be expressed.
  int64_t offset = static_cast<int64_t>(shape->size()) - type.getRank();
  for (int64_t d = 0; d < static_cast<int64_t>(shape->size()); ++d) {
    if ((*shape)[d] != -2)
      continue;
    if (d < offset || !type.isDynamicDim(d - offset)) {
      // Broadcast against the run-time value instead.
      Value target = ctx.optionalInput(1);
      if (!target)
        return ctx.unsupported("Expand to a dim computed at run time over a static dim");
      Value x = ctx.input(0);
      Value iota = ctx.make<IotaOp>(runtimeInts(ctx, 1), ctx.i64(0));
      Value all = compare(ctx, ComparePredicate::eq, iota, iota);
      return ctx.setOutput(0, ctx.make<SelectOp>(all, x, x));
    }
    (*shape)[d] = 1;
  }
  return ctx.setOutput(0, ctx.make<ExpandOp>(ctx.input(0), ctx.i64s(*shape)));
}

LogicalResult importTile(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!ctx.isKnownInput(1)) {
    // Repeats read when the model runs: along each dim, gather index i
    // mod the dim over dim * repeats entries.
    Value repeats = runtimeInts(ctx, 1);
    if (!type || !repeats)
      return failure();
    Value y = x;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      Value dim = dimValue(ctx, x, d);
      Value positions = iotaOfLength(ctx, ctx.make<MulOp>(dim, entryOf(ctx, repeats, d)));
      y = ctx.make<GatherOp>(y, ctx.make<RemOp>(positions, dim), ctx.i64(d));
    }
    return ctx.setOutput(0, y);
  }
  std::optional<SmallVector<int64_t>> repeats = ctx.intsInput(1, "repeats");
  if (!type || !repeats)
    return failure();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(repeats->size()) != rank)
    return ctx.invalid("repeats has " + llvm::Twine(repeats->size()) +
                       " entries for rank " + llvm::Twine(rank));
  // [d0, d1] -> [1, d0, 1, d1] -> expand to [r0, d0, r1, d1] -> merge pairs.
  SmallVector<int64_t> ones, expandShape, merged;
  bool inferred = false;
  for (int64_t d = 0; d < rank; ++d) {
    ones.push_back(2 * d);
    expandShape.append({(*repeats)[d], 1});
    int64_t size = type.getDimSize(d);
    if (!ShapedType::isDynamic(size)) {
      merged.push_back(size * (*repeats)[d]);
    } else if (!inferred) {
      merged.push_back(-1);
      inferred = true;
    } else {
      return ctx.unsupported("Tile of a tensor with two dynamic dims");
    }
  }
  Value spread = unsqueeze(ctx, x, ones);
  Value expanded = ctx.make<ExpandOp>(spread, ctx.i64s(expandShape));
  return ctx.setOutput(0, ctx.make<ReshapeOp>(expanded, ctx.i64s(merged)));
}

LogicalResult importShape(NodeContext &ctx) {
  RankedTensorType type = NodeContext::typeOf(ctx.input(0));
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  int64_t start = ctx.intAttr("start", 0), end = ctx.intAttr("end", rank);
  auto clampIndex = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  start = clampIndex(start);
  end = clampIndex(end);
  // Dynamic dims are unknown elements of a symbolic shape, which also has
  // its run-time value.
  SymbolicInts dims;
  for (int64_t d = start; d < end; ++d)
    dims.values.push_back(type.isDynamicDim(d) ? std::nullopt
                                               : std::optional<int64_t>(type.getDimSize(d)));
  if (!dims.fullyKnown())
    ctx.bindOutput(0, ctx.make<SliceOp>(ctx.make<ShapeOfOp>(ctx.input(0)), ctx.i64s({start}),
                                        ctx.i64s({end}), ctx.i64s({1})));
  return ctx.setSymbolicOutput(0, dims);
}

LogicalResult importSize(NodeContext &ctx) {
  RankedTensorType type = NodeContext::typeOf(ctx.input(0));
  if (!type)
    return failure();
  if (!type.hasStaticShape()) // the product of the dims, read at run time
    return ctx.setOutput(0, ctx.make<ReduceProdOp>(ctx.make<ShapeOfOp>(ctx.input(0)),
                                                   ctx.i64s({0}), ctx.b.getBoolAttr(false)));
  return ctx.setOutput(
      0, ctx.scalar(ctx.b.getI64Type(), static_cast<double>(type.getNumElements())));
}

/// The static C, H, W of the [N, C, H, W] input of `op`, with blocksize.
struct BlockShape {
  int64_t c, h, w, b;
};
std::optional<BlockShape> blockShape(NodeContext &ctx, Value x, StringRef op) {
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return std::nullopt;
  if (type.getRank() != 4) {
    ctx.invalid("input must be [N, C, H, W]");
    return std::nullopt;
  }
  std::optional<int64_t> c = staticDim(ctx, x, 1, op);
  std::optional<int64_t> h = staticDim(ctx, x, 2, op);
  std::optional<int64_t> w = staticDim(ctx, x, 3, op);
  if (!c || !h || !w)
    return std::nullopt;
  int64_t b = ctx.intAttr("blocksize", 0);
  if (b <= 0) {
    ctx.invalid("blocksize must be positive");
    return std::nullopt;
  }
  return BlockShape{*c, *h, *w, b};
}

/// DepthToSpace / SpaceToDepth: reshape to 6-D, permute, reshape back.
LogicalResult importDepthToSpace(NodeContext &ctx) {
  Value x = ctx.input(0);
  std::optional<BlockShape> s = blockShape(ctx, x, "DepthToSpace");
  if (!s)
    return failure();
  int64_t b = s->b;
  if (s->c % (b * b) != 0)
    return ctx.invalid("channels are not divisible by blocksize^2");
  bool crd = ctx.stringAttr("mode", "DCR") == "CRD";
  int64_t cOut = s->c / (b * b);
  SmallVector<int64_t> split = crd ? SmallVector<int64_t>{0, cOut, b, b, s->h, s->w}
                                   : SmallVector<int64_t>{0, b, b, cOut, s->h, s->w};
  SmallVector<int64_t> perm = crd ? SmallVector<int64_t>{0, 1, 4, 2, 5, 3}
                                  : SmallVector<int64_t>{0, 3, 4, 1, 5, 2};
  Value moved = ctx.make<TransposeOp>(ctx.make<ReshapeOp>(x, ctx.i64s(split)),
                                      ctx.i64s(perm));
  return ctx.setOutput(
      0, ctx.make<ReshapeOp>(moved, ctx.i64s({0, cOut, s->h * b, s->w * b})));
}

LogicalResult importSpaceToDepth(NodeContext &ctx) {
  Value x = ctx.input(0);
  std::optional<BlockShape> s = blockShape(ctx, x, "SpaceToDepth");
  if (!s)
    return failure();
  int64_t b = s->b;
  if (s->h % b != 0 || s->w % b != 0)
    return ctx.invalid("spatial dims are not divisible by blocksize");
  // DCR (the default): output channel (row * b + column) * C + c; CRD
  // (opset 28): c * b * b + row * b + column, as DepthToSpace's CRD reads.
  std::string mode = ctx.stringAttr("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    return ctx.invalid("mode must be DCR or CRD, got '" + mode + "'");
  Value split = ctx.make<ReshapeOp>(x, ctx.i64s({0, s->c, s->h / b, b, s->w / b, b}));
  Value moved = ctx.make<TransposeOp>(
      split, ctx.i64s(mode == "CRD" ? SmallVector<int64_t>{0, 1, 3, 5, 2, 4}
                                    : SmallVector<int64_t>{0, 3, 5, 1, 2, 4}));
  return ctx.setOutput(
      0, ctx.make<ReshapeOp>(moved, ctx.i64s({0, s->c * b * b, s->h / b, s->w / b})));
}

} // namespace

void registerShapeOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Reshape", 1, any, importReshape);
  r.add("Flatten", 1, any, importFlatten);
  r.add("Squeeze", 1, any, importSqueeze);
  r.add("Unsqueeze", 1, any, importUnsqueeze);
  r.add("Transpose", 1, any, importTranspose);
  r.add("Concat", 1, any, importConcat);
  r.add("Split", 1, any, importSplit);
  r.add("Slice", 1, any, importSlice);
  r.add("Expand", 8, any, importExpand);
  r.add("Tile", 6, any, importTile);
  r.add("Shape", 1, any, importShape);
  r.add("Size", 1, any, importSize);
  r.add("DepthToSpace", 1, any, importDepthToSpace);
  r.add("SpaceToDepth", 1, any, importSpaceToDepth);
}

} // namespace kiln::onnx_frontend
