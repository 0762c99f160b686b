//===- GatherScatter.cpp - ONNX element-indexed gathers and scatters ------===//
//
// GatherElements and GatherND become one kiln.gather over the flattened
// data with computed flat indices. Scatters (ScatterElements, ScatterND,
// MaxUnpool) use a one-hot matrix of the target positions: the scattered
// values are a matmul with it, and positions hit at least once take them.
// That costs updates x positions memory, fine for the index tensors models
// carry; a dedicated scatter op is the way out if a model needs more.
// Compress and ReverseSequence need their selectors at compile time and
// become a gather with constant indices.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Utils/ShapeMath.h"
#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {


shape::Dims stridesOf(ArrayRef<int64_t> dims) {
  return shape::strides(shape::Dims(dims.begin(), dims.end()));
}

/// The static shape of `v`, or nullopt (recorded) if it has a dynamic dim.
std::optional<SmallVector<int64_t>> staticShape(NodeContext &ctx, Value v,
                                                StringRef why) {
  RankedTensorType type = NodeContext::typeOf(v);
  if (!type)
    return std::nullopt;
  if (!type.hasStaticShape()) {
    ctx.unsupported(why + " needs static shapes");
    return std::nullopt;
  }
  return SmallVector<int64_t>(type.getShape());
}

/// i64 indices with negative entries wrapped by `size`.
Value wrapIndices(NodeContext &ctx, Value indices, int64_t size) {
  Value idx = ctx.cast(indices, ctx.b.getI64Type());
  Value negative = compare(ctx, ComparePredicate::lt, idx, ctx.scalarLike(idx, 0));
  return ctx.make<SelectOp>(negative, ctx.make<AddOp>(idx, ctx.scalarLike(idx, size)),
                            idx);
}

Value flatten(NodeContext &ctx, Value v) {
  return ctx.make<ReshapeOp>(v, ctx.i64s({-1}));
}

/// Flat positions in a tensor of `dataShape` for GatherElements-style
/// indices: `indices` along `axis`, the element's own coordinate elsewhere.
Value elementFlatIndex(NodeContext &ctx, Value indices,
                       ArrayRef<int64_t> dataShape,
                       ArrayRef<int64_t> indexShape, int64_t axis) {
  shape::Dims strides = stridesOf(dataShape);
  Value flat = ctx.make<MulOp>(wrapIndices(ctx, indices, dataShape[axis]),
                               ctx.scalar(ctx.b.getI64Type(), strides[axis]));
  for (size_t d = 0; d < indexShape.size(); ++d) {
    if (static_cast<int64_t>(d) == axis)
      continue;
    Value coordinate = ctx.make<MulOp>(iotaAlong(ctx, indexShape, d),
                                       ctx.scalar(ctx.b.getI64Type(), strides[d]));
    flat = ctx.make<AddOp>(flat, coordinate);
  }
  return flat;
}

LogicalResult importGatherElements(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  auto dataShape = staticShape(ctx, data, "GatherElements");
  auto indexShape = staticShape(ctx, indices, "GatherElements");
  if (!dataShape || !indexShape)
    return failure();
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), dataShape->size());
  if (!axis)
    return failure();
  Value flat = elementFlatIndex(ctx, indices, *dataShape, *indexShape, *axis);
  return ctx.setOutput(0, ctx.make<GatherOp>(flatten(ctx, data), flat, ctx.i64(0)));
}

enum class ScatterReduction { none, add, mul, max, min };

/// Writes `updates` ([U, R]) into `data` ([P, R]) at rows `rows` ([U]);
/// with a reduction, combines the row with every update written to it.
Value scatterRows(NodeContext &ctx, Value data, Value rows, Value updates,
                  int64_t numRows, ScatterReduction reduction) {
  Type element = NodeContext::elementTypeOf(data);
  SmallVector<int64_t> positions = {1, numRows};
  Value hits = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, rows, {1}),
                       generateConstant(ctx,
                                        RankedTensorType::get(positions, ctx.b.getI64Type()),
                                        [](int64_t i) { return static_cast<double>(i); }));
  Value oneHot = ctx.cast(hits, element);                        // [U, P]
  Value oneHotT = ctx.make<TransposeOp>(oneHot, ctx.i64s({1, 0})); // [P, U]
  if (reduction == ScatterReduction::mul || reduction == ScatterReduction::max ||
      reduction == ScatterReduction::min) {
    // Every (row, update) pair [P, U, R]: the update where it hits the
    // row, else a value that leaves the row as it is (1 for mul, the row
    // itself for max and min); reduced over the updates.
    Value hit = unsqueeze(ctx, ctx.make<TransposeOp>(hits, ctx.i64s({1, 0})), {2});
    Value fill = reduction == ScatterReduction::mul ? ctx.scalarLike(data, 1.0)
                                                    : unsqueeze(ctx, data, {1});
    Value terms = ctx.make<SelectOp>(hit, unsqueeze(ctx, updates, {0}), fill);
    DenseI64ArrayAttr overUpdates = ctx.i64s({1});
    BoolAttr drop = ctx.b.getBoolAttr(false);
    if (reduction == ScatterReduction::mul)
      return ctx.make<MulOp>(data, ctx.make<ReduceProdOp>(terms, overUpdates, drop));
    Value reduced = reduction == ScatterReduction::max
                        ? ctx.make<ReduceMaxOp>(terms, overUpdates, drop)
                        : ctx.make<ReduceMinOp>(terms, overUpdates, drop);
    return reduction == ScatterReduction::max ? ctx.make<MaxOp>(data, reduced)
                                              : ctx.make<MinOp>(data, reduced);
  }
  Value scattered = ctx.make<MatmulOp>(oneHotT, updates);        // [P, R]
  if (reduction == ScatterReduction::add)
    return ctx.make<AddOp>(data, scattered);
  Value count = ctx.make<ReduceSumOp>(oneHotT, ctx.i64s({1}), ctx.b.getBoolAttr(true));
  Value written = compare(ctx, ComparePredicate::gt, count, ctx.scalarLike(count, 0));
  return ctx.make<SelectOp>(written, scattered, data);
}

std::optional<ScatterReduction> scatterReduction(NodeContext &ctx) {
  std::string reduction = ctx.stringAttr("reduction", "none");
  if (reduction == "none")
    return ScatterReduction::none;
  if (reduction == "add")
    return ScatterReduction::add;
  if (reduction == "mul")
    return ScatterReduction::mul;
  if (reduction == "max" && ctx.opset >= 18)
    return ScatterReduction::max;
  if (reduction == "min" && ctx.opset >= 18)
    return ScatterReduction::min;
  ctx.invalid("reduction '" + reduction + "'");
  return std::nullopt;
}

LogicalResult importScatterElements(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  auto dataShape = staticShape(ctx, data, "ScatterElements");
  auto indexShape = staticShape(ctx, indices, "ScatterElements");
  std::optional<ScatterReduction> reduction = scatterReduction(ctx);
  if (!dataShape || !indexShape || !reduction)
    return failure();
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), dataShape->size());
  if (!axis)
    return failure();
  int64_t total = 1;
  for (int64_t d : *dataShape)
    total *= d;
  Value flat = flatten(ctx, elementFlatIndex(ctx, indices, *dataShape, *indexShape, *axis));
  Value rows = ctx.make<ReshapeOp>(data, ctx.i64s({total, 1}));
  Value values = ctx.make<ReshapeOp>(updates, ctx.i64s({-1, 1}));
  Value result = scatterRows(ctx, rows, flat, values, total, *reduction);
  return ctx.setOutput(0, ctx.make<ReshapeOp>(result, ctx.i64s(*dataShape)));
}

/// TensorScatter (opset 24): a KV-cache update. Along `axis`, cache position
/// p of batch b takes update row p - write_indices[b] (modulo the cache
/// length in circular mode) when that row exists, else keeps the past.
LogicalResult importTensorScatter(NodeContext &ctx) {
  Value past = ctx.input(0), update = ctx.input(1);
  auto cacheShape = staticShape(ctx, past, "TensorScatter");
  auto updateShape = staticShape(ctx, update, "TensorScatter");
  if (!cacheShape || !updateShape)
    return failure();
  int64_t rank = cacheShape->size();
  std::optional<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", -2), rank);
  if (!axis)
    return failure();
  if (*axis == 0)
    return ctx.invalid("axis cannot be the batch dim");
  std::string mode = ctx.stringAttr("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return ctx.invalid("mode must be linear or circular");
  int64_t length = (*cacheShape)[*axis], rows = (*updateShape)[*axis];
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis ? (*cacheShape)[d] != (*updateShape)[d] : rows > length)
      return ctx.invalid("update does not fit the cache");
  // k[b, .., p, ..]: the update row for cache position p of batch b.
  Value k = iotaAlong(ctx, *cacheShape, *axis);
  if (Value written = ctx.optionalInput(2)) {
    SmallVector<int64_t> perBatch(rank, 1);
    perBatch[0] = -1;
    k = ctx.make<SubOp>(k, ctx.make<ReshapeOp>(ctx.cast(written, ctx.b.getI64Type()),
                                              ctx.i64s(perBatch)));
  }
  if (mode == "circular") {
    Value m = i64Scalar(ctx, length);
    k = ctx.make<RemOp>(ctx.make<AddOp>(ctx.make<RemOp>(k, m), m), m);
  }
  Value valid = ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, k, i64Scalar(ctx, 0)),
                                compare(ctx, ComparePredicate::lt, k, i64Scalar(ctx, rows)));
  // Every element's index (clamped) in the update's flat layout.
  Value zeros = generateConstant(ctx, RankedTensorType::get(*cacheShape, ctx.b.getI64Type()),
                                 [](int64_t) { return 0.0; });
  Value index = ctx.make<AddOp>(
      ctx.make<MinOp>(ctx.make<MaxOp>(k, i64Scalar(ctx, 0)), i64Scalar(ctx, rows - 1)), zeros);
  Value flat = elementFlatIndex(ctx, index, *updateShape, *cacheShape, *axis);
  Value taken = ctx.make<GatherOp>(flatten(ctx, update), flatten(ctx, flat), ctx.i64(0));
  taken = ctx.make<ReshapeOp>(taken, ctx.i64s(*cacheShape));
  return ctx.setOutput(0, ctx.make<SelectOp>(valid, taken, past));
}

/// GatherND / ScatterND: the flat row of data's first batch + k dims that
/// each index tuple (the last dim of `indices`) names.
Value tupleFlatIndex(NodeContext &ctx, Value indices, ArrayRef<int64_t> dataShape,
                     ArrayRef<int64_t> indexShape, int64_t batchDims) {
  int64_t k = indexShape.back();
  int64_t rank = indexShape.size();
  SmallVector<int64_t> leading(dataShape.begin(), dataShape.begin() + batchDims + k);
  shape::Dims strides = stridesOf(leading);
  SmallVector<int64_t> tupleShape(indexShape.begin(), indexShape.end() - 1);
  Value flat = ctx.scalar(ctx.b.getI64Type(), 0);
  for (int64_t b = 0; b < batchDims; ++b)
    flat = ctx.make<AddOp>(flat, ctx.make<MulOp>(iotaAlong(ctx, tupleShape, b),
                                                 ctx.scalar(ctx.b.getI64Type(), strides[b])));
  for (int64_t j = 0; j < k; ++j) {
    SmallVector<int64_t> starts(rank, 0), ends(indexShape), steps(rank, 1);
    starts[rank - 1] = j;
    ends[rank - 1] = j + 1;
    Value component = ctx.make<ReshapeOp>(
        ctx.make<SliceOp>(indices, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps)),
        ctx.i64s(tupleShape));
    Value wrapped = wrapIndices(ctx, component, dataShape[batchDims + j]);
    flat = ctx.make<AddOp>(flat, ctx.make<MulOp>(wrapped,
                                                 ctx.scalar(ctx.b.getI64Type(),
                                                            strides[batchDims + j])));
  }
  return flat;
}

LogicalResult importGatherND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  auto dataShape = staticShape(ctx, data, "GatherND");
  auto indexShape = staticShape(ctx, indices, "GatherND");
  if (!dataShape || !indexShape)
    return failure();
  int64_t batchDims = ctx.intAttr("batch_dims", 0);
  int64_t k = indexShape->empty() ? 0 : indexShape->back();
  if (indexShape->empty() || batchDims < 0 ||
      batchDims + k > static_cast<int64_t>(dataShape->size()))
    return ctx.invalid("index tuples are longer than the data's rank");
  Value flat = tupleFlatIndex(ctx, indices, *dataShape, *indexShape, batchDims);
  SmallVector<int64_t> rows = {-1};
  rows.append(dataShape->begin() + batchDims + k, dataShape->end());
  Value table = ctx.make<ReshapeOp>(data, ctx.i64s(rows));
  return ctx.setOutput(0, ctx.make<GatherOp>(table, flat, ctx.i64(0)));
}

LogicalResult importScatterND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  auto dataShape = staticShape(ctx, data, "ScatterND");
  auto indexShape = staticShape(ctx, indices, "ScatterND");
  std::optional<ScatterReduction> reduction = scatterReduction(ctx);
  if (!dataShape || !indexShape || !reduction)
    return failure();
  int64_t k = indexShape->empty() ? 0 : indexShape->back();
  if (indexShape->empty() || k > static_cast<int64_t>(dataShape->size()))
    return ctx.invalid("index tuples are longer than the data's rank");
  int64_t positions = 1, rest = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(dataShape->size()); ++d)
    (d < k ? positions : rest) *= (*dataShape)[d];
  Value flat = flatten(ctx, tupleFlatIndex(ctx, indices, *dataShape, *indexShape, 0));
  Value rows = ctx.make<ReshapeOp>(data, ctx.i64s({positions, rest}));
  Value values = ctx.make<ReshapeOp>(updates, ctx.i64s({-1, rest}));
  Value result = scatterRows(ctx, rows, flat, values, positions, *reduction);
  return ctx.setOutput(0, ctx.make<ReshapeOp>(result, ctx.i64s(*dataShape)));
}

LogicalResult importMaxUnpool(NodeContext &ctx) {
  Value x = ctx.input(0), indices = ctx.input(1);
  auto shape = staticShape(ctx, x, "MaxUnpool");
  if (!shape)
    return failure();
  // Indices address the default output (from kernel, strides and pads);
  // an explicit output_shape pads that with zeros at the end, as ONNX's
  // own test data expects.
  SmallVector<int64_t> outShape(*shape);
  {
    SmallVector<int64_t> kernel = ctx.intsAttr("kernel_shape");
    size_t spatial = kernel.size();
    if (spatial + 2 != shape->size())
      return ctx.invalid("kernel_shape does not match the input's rank");
    SmallVector<int64_t> strides = ctx.intsAttr("strides"), pads = ctx.intsAttr("pads");
    if (strides.empty())
      strides.assign(spatial, 1);
    if (pads.empty())
      pads.assign(2 * spatial, 0);
    for (size_t i = 0; i < spatial; ++i)
      outShape[i + 2] = ((*shape)[i + 2] - 1) * strides[i] + kernel[i] -
                        pads[i] - pads[i + spatial];
  }
  int64_t total = 1;
  for (int64_t d : outShape)
    total *= d;
  Value zeros = generateConstant(
      ctx, RankedTensorType::get({total, 1}, NodeContext::elementTypeOf(x)),
      [](int64_t) { return 0.0; });
  Value flat = flatten(ctx, ctx.cast(indices, ctx.b.getI64Type()));
  Value values = ctx.make<ReshapeOp>(x, ctx.i64s({-1, 1}));
  Value result = scatterRows(ctx, zeros, flat, values, total, ScatterReduction::none);
  Value unpooled = ctx.make<ReshapeOp>(result, ctx.i64s(outShape));
  if (!ctx.hasInput(2))
    return ctx.setOutput(0, unpooled);
  std::optional<SmallVector<int64_t>> given = ctx.intsInput(2, "output_shape");
  if (!given)
    return failure();
  if (given->size() != outShape.size())
    return ctx.invalid("output_shape has the wrong rank");
  SmallVector<int64_t> pads(2 * outShape.size(), 0);
  for (size_t d = 0; d < outShape.size(); ++d) {
    if ((*given)[d] < outShape[d])
      return ctx.invalid("output_shape is smaller than the unpooled shape");
    pads[outShape.size() + d] = (*given)[d] - outShape[d];
  }
  return ctx.setOutput(0, zeroPad(ctx, unpooled, pads));
}

/// Compress by a condition read when the model runs: output k takes the
/// position whose running count of selected entries reaches k + 1 (the
/// result's length is the count, decided at run time).
/// The positions (i64 [count], count decided at run time) of the non-zero
/// entries of `flags` (i64 [n]), in order: entry i is the position whose
/// running count of selected entries reaches i + 1. Quadratic in n.
Value selectedPositions(NodeContext &ctx, Value flags, int64_t n) {
  Value selected = ctx.cast(compare(ctx, ComparePredicate::ne, flags, i64Scalar(ctx, 0)),
                            ctx.b.getI64Type());
  Value upTo = generateConstant(ctx, RankedTensorType::get({n, n}, ctx.b.getI64Type()),
                                [&](int64_t flat) { return flat % n <= flat / n ? 1.0 : 0.0; });
  Value running = ctx.make<ReduceSumOp>(ctx.make<MulOp>(upTo, unsqueeze(ctx, selected, {0})),
                                        ctx.i64s({1}), ctx.b.getBoolAttr(false));
  Value count = ctx.make<ReduceSumOp>(selected, ctx.i64s({0}), ctx.b.getBoolAttr(false));
  Value slots = unsqueeze(ctx, ctx.make<AddOp>(iotaOfLength(ctx, count), i64Scalar(ctx, 1)), {1});
  Value hit = ctx.make<AndOp>(
      compare(ctx, ComparePredicate::eq, unsqueeze(ctx, running, {0}), slots),
      compare(ctx, ComparePredicate::ne, unsqueeze(ctx, selected, {0}), i64Scalar(ctx, 0)));
  Value positions = ctx.make<ReduceSumOp>(
      ctx.make<SelectOp>(hit, iotaAlong(ctx, {1, n}, 1), i64Scalar(ctx, 0)), ctx.i64s({1}),
      ctx.b.getBoolAttr(false));
  return positions;
}

Value runtimeCompress(NodeContext &ctx, Value source, int64_t axis, int64_t size) {
  Value condition = ctx.input(1);
  RankedTensorType type = NodeContext::typeOf(condition);
  if (!type)
    return {};
  if (type.getRank() != 1) {
    ctx.invalid("condition must be 1-D");
    return {};
  }
  Value flags = ctx.cast(condition, ctx.b.getI64Type());
  int64_t n = size;
  if (type.isDynamicDim(0)) {
    // A condition of a length known at run time: entries past it are
    // false.
    Value length = dimValue(ctx, condition, 0);
    Value positions = iotaAlong(ctx, {n}, 0);
    Value inside = compare(ctx, ComparePredicate::lt, positions, length);
    Value last = ctx.make<SubOp>(length, i64Scalar(ctx, 1));
    flags = ctx.make<SelectOp>(
        inside,
        ctx.make<GatherOp>(flags, ctx.make<MinOp>(positions, last), ctx.i64(0)),
        i64Scalar(ctx, 0));
  } else {
    n = std::min(size, type.getDimSize(0));
    flags = ctx.make<SliceOp>(flags, ctx.i64s({0}), ctx.i64s({n}), ctx.i64s({1}));
  }
  return ctx.make<GatherOp>(source, selectedPositions(ctx, flags, n), ctx.i64(axis));
}

LogicalResult importCompress(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool runtime = !ctx.isKnownInput(1);
  std::optional<SmallVector<int64_t>> condition =
      runtime ? std::optional(SmallVector<int64_t>()) : ctx.intsInput(1, "condition");
  if (!x || !condition)
    return failure();
  Value source = x;
  int64_t axis = 0;
  if (ctx.hasAttr("axis")) {
    std::optional<int64_t> a = ctx.normalizeAxis(ctx.intAttr("axis", 0),
                                                 NodeContext::rankOf(x));
    if (!a)
      return failure();
    axis = *a;
  } else {
    source = flatten(ctx, x);
  }
  std::optional<int64_t> size = staticDim(ctx, source, axis, "Compress");
  if (!size)
    return failure();
  if (runtime)
    return ctx.setOutput(0, runtimeCompress(ctx, source, axis, *size));
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < std::min<int64_t>(*size, condition->size()); ++i)
    if ((*condition)[i])
      kept.push_back(i);
  if (kept.empty())
    return ctx.unsupported("a Compress that selects nothing (empty result)");
  return ctx.setOutput(0, ctx.make<GatherOp>(source, ctx.indices(kept), ctx.i64(axis)));
}

/// NonZero: the coordinates ([rank, count], count decided at run time) of
/// the non-zero elements in row-major order.
LogicalResult importNonZero(NodeContext &ctx) {
  Value x = ctx.input(0);
  auto shape = staticShape(ctx, x, "NonZero");
  if (!shape)
    return failure();
  int64_t n = 1;
  for (int64_t d : *shape)
    n *= d;
  // The selection builds an n x n matrix.
  if (n > 4096)
    return ctx.unsupported("NonZero of more than 4096 elements (its selection is quadratic)");
  Value flags = ctx.cast(compare(ctx, ComparePredicate::ne, flatten(ctx, x), ctx.scalarLike(x, 0)),
                         ctx.b.getI64Type());
  Value positions = selectedPositions(ctx, flags, n);
  shape::Dims strides = stridesOf(*shape);
  SmallVector<Value> rows;
  for (size_t d = 0; d < shape->size(); ++d) {
    Value coordinate = ctx.make<RemOp>(ctx.make<DivOp>(positions, i64Scalar(ctx, strides[d])),
                                       i64Scalar(ctx, (*shape)[d]));
    rows.push_back(unsqueeze(ctx, coordinate, {0}));
  }
  if (rows.empty())
    return ctx.unsupported("NonZero of a scalar");
  return ctx.setOutput(0, rows.size() == 1 ? rows[0] : ctx.make<ConcatOp>(ValueRange(rows), ctx.i64(0)));
}

LogicalResult importReverseSequence(NodeContext &ctx) {
  Value x = ctx.input(0);
  auto shape = staticShape(ctx, x, "ReverseSequence");
  if (!shape)
    return failure();
  int64_t timeAxis = ctx.intAttr("time_axis", 0), batchAxis = ctx.intAttr("batch_axis", 1);
  if (shape->size() < 2 || (timeAxis != 0 && timeAxis != 1) || batchAxis != 1 - timeAxis)
    return ctx.invalid("time_axis and batch_axis must be 0 and 1 in some order");
  if (!ctx.isKnownInput(1)) {
    // Lengths read when the model runs: the same source rule on tensors.
    Value lengths = runtimeInts(ctx, 1);
    RankedTensorType lengthsType = NodeContext::typeOf(lengths);
    if (!lengthsType)
      return failure();
    if (lengthsType.getRank() != 1 || lengthsType.getDimSize(0) != (*shape)[batchAxis])
      return ctx.invalid("sequence_lens needs one length per batch entry");
    shape::Dims strides = stridesOf(*shape);
    SmallVector<int64_t> spread(shape->size(), 1);
    spread[batchAxis] = (*shape)[batchAxis];
    Value len = ctx.make<ReshapeOp>(lengths, ctx.i64s(spread));
    Value t = iotaAlong(ctx, *shape, timeAxis);
    Value from = ctx.make<SelectOp>(compare(ctx, ComparePredicate::lt, t, len),
                                    ctx.make<SubOp>(ctx.make<SubOp>(len, i64Scalar(ctx, 1)), t), t);
    Value flat = generateConstant(ctx, RankedTensorType::get(*shape, ctx.b.getI64Type()),
                                  [](int64_t i) { return static_cast<double>(i); });
    Value sources = ctx.make<AddOp>(
        flat, ctx.make<MulOp>(ctx.make<SubOp>(from, t), i64Scalar(ctx, strides[timeAxis])));
    return ctx.setOutput(0, ctx.make<GatherOp>(flatten(ctx, x), sources, ctx.i64(0)));
  }
  std::optional<SmallVector<int64_t>> lengths = ctx.intsInput(1, "sequence_lens");
  if (!lengths)
    return failure();
  if (static_cast<int64_t>(lengths->size()) != (*shape)[batchAxis])
    return ctx.invalid("sequence_lens needs one length per batch entry");
  // Every element's source: time t of batch b reads t' = len - 1 - t when
  // t < len, else itself.
  shape::Dims strides = stridesOf(*shape);
  int64_t total = 1;
  for (int64_t d : *shape)
    total *= d;
  Value sources = generateConstant(
      ctx, RankedTensorType::get(*shape, ctx.b.getI64Type()), [&](int64_t flat) {
        int64_t t = (flat / strides[timeAxis]) % (*shape)[timeAxis];
        int64_t b = (flat / strides[batchAxis]) % (*shape)[batchAxis];
        int64_t len = (*lengths)[b];
        int64_t from = t < len ? len - 1 - t : t;
        return static_cast<double>(flat + (from - t) * strides[timeAxis]);
      });
  (void)total;
  return ctx.setOutput(0, ctx.make<GatherOp>(flatten(ctx, x), sources, ctx.i64(0)));
}

} // namespace

void registerGatherScatterOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("GatherElements", 11, any, importGatherElements);
  r.add("ScatterElements", 11, any, importScatterElements);
  r.add("Scatter", 9, 10, importScatterElements);
  r.add("GatherND", 11, any, importGatherND);
  r.add("ScatterND", 11, any, importScatterND);
  r.add("TensorScatter", 24, any, importTensorScatter);
  r.add("NonZero", 9, any, importNonZero);
  r.add("MaxUnpool", 9, any, importMaxUnpool);
  r.add("Compress", 9, any, importCompress);
  r.add("ReverseSequence", 10, any, importReverseSequence);
}

} // namespace kiln::onnx_frontend
