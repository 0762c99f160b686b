//===- GatherScatter.cpp - ONNX element-indexed gathers and scatters ------===//
//
// GatherElements and GatherND become one kiln.gather over the flattened
// data with computed flat indices. Scatters (ScatterElements, ScatterND,
// MaxUnpool) compare every target position with every update's: a
// position takes the last update that hits it (one max-reduction, then a
// gather), or with a reduction combines them (add: a matmul by the
// one-hot matrix). That costs updates x positions time, fine for the
// index tensors models carry; a dedicated scatter op is the way out if a
// model needs more.
// Compress and ReverseSequence need their selectors at compile time and
// become a gather with constant indices. Col2Im is a gather the other way
// round: each image position reads its column from every block offset and
// sums them.
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

/// i64 indices with negative entries wrapped by `size` (a rank-0 i64).
Value wrapIndices(NodeContext &ctx, Value indices, Value size) {
  Value idx = ctx.cast(indices, ctx.b.getI64Type());
  Value negative = compare(ctx, ComparePredicate::lt, idx, ctx.scalarLike(idx, 0));
  return ctx.make<SelectOp>(negative, ctx.make<AddOp>(idx, size), idx);
}

/// Row-major strides of `dims` (rank-0 i64 values; constants fold).
SmallVector<Value> strideValues(NodeContext &ctx, ArrayRef<Value> dims) {
  SmallVector<Value> strides(dims.size());
  Value stride = i64Scalar(ctx, 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride = ctx.make<MulOp>(stride, dims[d]);
  }
  return strides;
}

Value flatten(NodeContext &ctx, Value v) {
  return ctx.make<ReshapeOp>(v, ctx.i64s({-1}));
}

/// Flat positions in `data` for GatherElements-style indices: `indices`
/// along `axis`, the element's own coordinate (in `positions`, by default
/// `indices` itself; `indices` broadcasts against it) elsewhere. Dims known
/// only at run time are read when the model runs.
Value elementFlatIndex(NodeContext &ctx, Value indices, Value data, int64_t axis,
                       Value positions = {}) {
  if (!positions)
    positions = indices;
  SmallVector<Value> dims = dimValues(ctx, data);
  SmallVector<Value> strides = strideValues(ctx, dims);
  int64_t rank = dims.size();
  Value flat = ctx.make<MulOp>(wrapIndices(ctx, indices, dims[axis]), strides[axis]);
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis)
      continue;
    Value coordinate = ctx.make<MulOp>(iotaOfDim(ctx, positions, d, rank, d), strides[d]);
    flat = ctx.make<AddOp>(flat, coordinate);
  }
  return flat;
}

/// The rank of `data` and `axis` normalised for it, when `indices` has the
/// same rank (GatherElements, ScatterElements).
std::optional<int64_t> elementsAxis(NodeContext &ctx, Value data, Value indices) {
  if (!data || !indices)
    return std::nullopt;
  int64_t rank = NodeContext::rankOf(data);
  if (NodeContext::rankOf(indices) != rank) {
    ctx.invalid("indices and data have different ranks");
    return std::nullopt;
  }
  return ctx.normalizeAxis(ctx.intAttr("axis", 0), rank);
}

LogicalResult importGatherElements(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  std::optional<int64_t> axis = elementsAxis(ctx, data, indices);
  if (!axis)
    return failure();
  Value flat = elementFlatIndex(ctx, indices, data, *axis);
  return ctx.setOutput(0, ctx.make<GatherOp>(flatten(ctx, data), flat, ctx.i64(0)));
}

enum class ScatterReduction { none, add, mul, max, min };

/// Writes `updates` ([U, R]) into `data` ([P, R]) at rows `rows` ([U]);
/// with a reduction, combines the row with every update written to it.
Value scatterRows(NodeContext &ctx, Value data, Value rows, Value updates,
                  ScatterReduction reduction) {
  Type element = NodeContext::elementTypeOf(data);
  // Built as [P, U], as the matmul reads it (a transpose of [U, P] took
  // 30 ms of swin_t's 110 at 224 x 224, for a mask of 56 x 56 positions).
  Value hits = compare(ctx, ComparePredicate::eq, iotaOfDim(ctx, data, 0, 2, 0),
                       unsqueeze(ctx, rows, {0}));               // [P, U]
  if (reduction == ScatterReduction::mul || reduction == ScatterReduction::max ||
      reduction == ScatterReduction::min) {
    // Every (row, update) pair [P, U, R]: the update where it hits the
    // row, else a value that leaves the row as it is (1 for mul, the row
    // itself for max and min); reduced over the updates.
    Value hit = unsqueeze(ctx, hits, {2});
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
  if (reduction == ScatterReduction::add)
    return ctx.make<AddOp>(data, ctx.make<MatmulOp>(ctx.cast(hits, element), updates));
  // Each row takes the last update written to it, as ONNX's reference
  // writes them in turn: the largest 1 + u that hits it, 0 for none, picks
  // from the updates after a row of zeros (one reduction, no one-hot
  // matrix in memory; the matmul summed updates that hit one row).
  int64_t width = NodeContext::typeOf(updates).getDimSize(1); // static: callers' [-1, R]
  Value order = ctx.make<AddOp>(iotaOfDim(ctx, rows, 0, 2, 1), i64Scalar(ctx, 1)); // [1, U]
  Value tagged = ctx.make<SelectOp>(hits, order, i64Scalar(ctx, 0));              // [P, U]
  // Kept as [P, 1]: a row reduction, fused with the select (FuseReductions).
  Value last = ctx.make<MaxOp>(
      ctx.make<ReduceMaxOp>(tagged, ctx.i64s({1}), ctx.b.getBoolAttr(true)), i64Scalar(ctx, 0));
  Value zeroRow = ctx.make<ExpandOp>(ctx.scalarLike(updates, 0), ctx.i64s({1, width}));
  Value picked = ctx.make<GatherOp>(ctx.make<ConcatOp>(ValueRange{zeroRow, updates}, ctx.i64(0)),
                                    flatten(ctx, last), ctx.i64(0));
  Value written = compare(ctx, ComparePredicate::gt, last, i64Scalar(ctx, 0));
  return ctx.make<SelectOp>(written, picked, data);
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
  std::optional<ScatterReduction> reduction = scatterReduction(ctx);
  std::optional<int64_t> axis = elementsAxis(ctx, data, indices);
  if (!reduction || !axis)
    return failure();
  Value flat = flatten(ctx, elementFlatIndex(ctx, indices, data, *axis));
  Value rows = ctx.make<ReshapeOp>(data, ctx.i64s({-1, 1}));
  Value values = ctx.make<ReshapeOp>(updates, ctx.i64s({-1, 1}));
  Value result = scatterRows(ctx, rows, flat, values, *reduction);
  return ctx.setOutput(0, reshapeLike(ctx, result, data));
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
  Value flat = elementFlatIndex(ctx, index, update, *axis);
  Value taken = ctx.make<GatherOp>(flatten(ctx, update), flatten(ctx, flat), ctx.i64(0));
  taken = ctx.make<ReshapeOp>(taken, ctx.i64s(*cacheShape));
  return ctx.setOutput(0, ctx.make<SelectOp>(valid, taken, past));
}

/// GatherND / ScatterND: the flat row of data's first batch + k dims that
/// each index tuple (the last dim of `indices`, k entries) names.
Value tupleFlatIndex(NodeContext &ctx, Value indices, Value data, int64_t k,
                     int64_t batchDims) {
  int64_t rank = NodeContext::rankOf(indices);
  SmallVector<Value> leading = dimValues(ctx, data);
  leading.resize(batchDims + k);
  SmallVector<Value> strides = strideValues(ctx, leading);
  Value flat = i64Scalar(ctx, 0);
  for (int64_t b = 0; b < batchDims; ++b)
    flat = ctx.make<AddOp>(flat, ctx.make<MulOp>(iotaOfDim(ctx, indices, b, rank - 1, b),
                                                 strides[b]));
  for (int64_t j = 0; j < k; ++j) {
    SmallVector<int64_t> starts(rank, 0), ends(rank, INT64_MAX), steps(rank, 1);
    starts[rank - 1] = j;
    ends[rank - 1] = j + 1;
    Value component = squeeze(
        ctx, ctx.make<SliceOp>(indices, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps)),
        {rank - 1});
    Value wrapped = wrapIndices(ctx, component, leading[batchDims + j]);
    flat = ctx.make<AddOp>(flat, ctx.make<MulOp>(wrapped, strides[batchDims + j]));
  }
  return flat;
}

/// The tuple length k of GatherND / ScatterND's indices (their last dim,
/// static), checked against data's rank; and data's dims after the first
/// `batchDims + k` (the rows' shape), which must be static.
std::optional<std::pair<int64_t, SmallVector<int64_t>>>
tupleShape(NodeContext &ctx, Value data, Value indices, int64_t batchDims, StringRef op) {
  RankedTensorType dataType = NodeContext::typeOf(data), indexType = NodeContext::typeOf(indices);
  if (!dataType || !indexType)
    return std::nullopt;
  if (indexType.getRank() == 0 || batchDims < 0 || batchDims >= indexType.getRank()) {
    ctx.invalid("indices must have a tuple dim after the batch dims");
    return std::nullopt;
  }
  int64_t k = indexType.getShape().back();
  if (ShapedType::isDynamic(k)) {
    ctx.unsupported(op + " with index tuples of a length known only at run time");
    return std::nullopt;
  }
  if (batchDims + k > dataType.getRank()) {
    ctx.invalid("index tuples are longer than the data's rank");
    return std::nullopt;
  }
  SmallVector<int64_t> rest(dataType.getShape().drop_front(batchDims + k));
  if (llvm::any_of(rest, ShapedType::isDynamic)) {
    ctx.unsupported(op + " of rows whose dims are known only at run time");
    return std::nullopt;
  }
  return std::make_pair(k, rest);
}

LogicalResult importGatherND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  int64_t batchDims = ctx.intAttr("batch_dims", 0);
  auto tuple = tupleShape(ctx, data, indices, batchDims, "GatherND");
  if (!tuple)
    return failure();
  auto [k, rest] = *tuple;
  Value flat = tupleFlatIndex(ctx, indices, data, k, batchDims);
  SmallVector<int64_t> rows = {-1};
  rows.append(rest);
  Value table = ctx.make<ReshapeOp>(data, ctx.i64s(rows));
  return ctx.setOutput(0, ctx.make<GatherOp>(table, flat, ctx.i64(0)));
}

LogicalResult importScatterND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  std::optional<ScatterReduction> reduction = scatterReduction(ctx);
  auto tuple = tupleShape(ctx, data, indices, 0, "ScatterND");
  if (!tuple || !reduction)
    return failure();
  auto [k, rest] = *tuple;
  int64_t rowSize = 1;
  for (int64_t d : rest)
    rowSize *= d;
  Value flat = flatten(ctx, tupleFlatIndex(ctx, indices, data, k, 0));
  Value rows = ctx.make<ReshapeOp>(data, ctx.i64s({-1, rowSize}));
  Value values = ctx.make<ReshapeOp>(updates, ctx.i64s({-1, rowSize}));
  Value result = scatterRows(ctx, rows, flat, values, *reduction);
  return ctx.setOutput(0, reshapeLike(ctx, result, data));
}

/// MaxUnpool with a batch known only at run time (channels and spatial
/// dims static): each (n, c) plane scatters its values to the positions
/// its indices name within the plane (indices count over the whole
/// tensor, so the plane's start is subtracted), by a one-hot of plane
/// positions.
Value unpoolRuntimeBatch(NodeContext &ctx, Value x, Value indices,
                         ArrayRef<int64_t> outShape) {
  RankedTensorType type = NodeContext::typeOf(x);
  int64_t inPlane = 1, outPlane = 1;
  for (int64_t d = 2; d < type.getRank(); ++d) {
    inPlane *= type.getDimSize(d);
    outPlane *= outShape[d];
  }
  Value rows = ctx.make<ReshapeOp>(x, ctx.i64s({-1, inPlane}));
  Value where = ctx.make<ReshapeOp>(ctx.cast(indices, ctx.b.getI64Type()), ctx.i64s({-1, inPlane}));
  Value starts = ctx.make<MulOp>(iotaOfDim(ctx, rows, 0, 2, 0), i64Scalar(ctx, outPlane));
  Value within = unsqueeze(ctx, ctx.make<SubOp>(where, starts), {2});   // [R, in, 1]
  Value positions = iotaAlong(ctx, {1, 1, outPlane}, 2);               // [1, 1, out]
  Value hit = compare(ctx, ComparePredicate::eq, within, positions);   // [R, in, out]
  Value spread = ctx.make<SelectOp>(hit, unsqueeze(ctx, rows, {2}), ctx.scalarLike(x, 0));
  Value planes = ctx.make<ReduceSumOp>(spread, ctx.i64s({1}), ctx.b.getBoolAttr(false));
  SmallVector<int64_t> shape(outShape);
  shape[0] = -1;
  return ctx.make<ReshapeOp>(planes, ctx.i64s(shape));
}

LogicalResult importMaxUnpool(NodeContext &ctx) {
  Value x = ctx.input(0), indices = ctx.input(1);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  bool runtimeBatch = type.isDynamicDim(0) &&
                      llvm::none_of(type.getShape().drop_front(),
                                    [](int64_t d) { return ShapedType::isDynamic(d); });
  std::optional<SmallVector<int64_t>> shape;
  if (runtimeBatch)
    shape = SmallVector<int64_t>(type.getShape());
  else
    shape = staticShape(ctx, x, "MaxUnpool");
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
  Value unpooled;
  if (runtimeBatch) {
    unpooled = unpoolRuntimeBatch(ctx, x, indices, outShape);
  } else {
    int64_t total = 1;
    for (int64_t d : outShape)
      total *= d;
    Value zeros = generateConstant(
        ctx, RankedTensorType::get({total, 1}, NodeContext::elementTypeOf(x)),
        [](int64_t) { return 0.0; });
    Value flat = flatten(ctx, ctx.cast(indices, ctx.b.getI64Type()));
    Value values = ctx.make<ReshapeOp>(x, ctx.i64s({-1, 1}));
    Value result = scatterRows(ctx, zeros, flat, values, ScatterReduction::none);
    unpooled = ctx.make<ReshapeOp>(result, ctx.i64s(outShape));
  }
  if (!ctx.hasInput(2))
    return ctx.setOutput(0, unpooled);
  if (!ctx.isKnownInput(2) || runtimeBatch) {
    // An output_shape read at run time (or against a batch known only
    // then): each dim extended with zeros to its size (a size below the
    // unpooled one is a run-time error).
    Value target = runtimeInts(ctx, 2);
    RankedTensorType targetType = NodeContext::typeOf(target);
    if (!targetType)
      return failure();
    if (targetType.getRank() != 1 || targetType.getDimSize(0) != int64_t(outShape.size()))
      return ctx.invalid("output_shape has the wrong rank");
    int64_t rank = outShape.size();
    SmallVector<Value> dims = dimValues(ctx, unpooled);
    Value y = unpooled, inside;
    for (int64_t d = 0; d < rank; ++d) {
      Value size = entryOf(ctx, target, d);
      size = requireAtRunTime(ctx, size, compare(ctx, ComparePredicate::ge, size, dims[d]));
      Value positions = iotaOfLength(ctx, size);
      Value last = ctx.make<SubOp>(dims[d], i64Scalar(ctx, 1));
      y = ctx.make<GatherOp>(y, ctx.make<MinOp>(positions, last), ctx.i64(d));
      SmallVector<int64_t> spread(rank, 1);
      spread[d] = -1;
      Value in = ctx.make<ReshapeOp>(compare(ctx, ComparePredicate::le, positions, last),
                                     ctx.i64s(spread));
      inside = inside ? ctx.make<AndOp>(inside, in) : in;
    }
    return ctx.setOutput(0, ctx.make<SelectOp>(inside, y, ctx.scalarLike(y, 0)));
  }
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

/// The value of a rank-0 (or one-element) i64 constant, else nullopt.
std::optional<int64_t> knownInt(Value v) {
  DenseElementsAttr attr = NodeContext::constantOf(v);
  if (!attr || attr.getNumElements() != 1 || !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  return (*attr.getValues<APInt>().begin()).getSExtValue();
}

/// An i64 iota of length `n` (rank 0) laid out along dim `at` of `rank`
/// dims (all others 1), static where `n` is a constant.
Value iotaLaidOut(NodeContext &ctx, Value n, int64_t rank, int64_t at) {
  SmallVector<int64_t> shape(rank, 1);
  if (std::optional<int64_t> length = knownInt(n)) {
    shape[at] = *length;
    return iotaAlong(ctx, shape, at);
  }
  shape[at] = -1;
  return ctx.make<ReshapeOp>(iotaOfLength(ctx, n), ctx.i64s(shape));
}

/// Stops the import when `ok` is a constant false (with `why`); keeps the
/// check for the run when it is known only then.
Value checked(NodeContext &ctx, Value v, Value ok, const Twine &why) {
  std::optional<int64_t> known = knownInt(ctx.cast(ok, ctx.b.getI64Type()));
  if (known && *known)
    return v;
  if (known) {
    ctx.invalid(why);
    return {};
  }
  return requireAtRunTime(ctx, v, ok);
}

/// Col2Im (opset 18): columns [N, C * prod(block_shape), L] summed back
/// into images [N, C, *image_shape], the inverse layout of an im2col
/// (PyTorch's fold). Output element y of a spatial dim takes, from each
/// block offset k, column l = (y + pad_begin - k * dilation) / stride
/// where that divides and 0 <= l < L_d (the sliding blocks along the dim):
/// one gather of every (channel, position, offset) from the flattened
/// columns, zero where no block covers it, summed over the offsets. The
/// image and block shapes may be read at run time (the output's dims then
/// too); sizes that do not fit the columns stop the run with a shape error.
LogicalResult importCol2Im(NodeContext &ctx) {
  Value x = ctx.input(0), image = runtimeInts(ctx, 1), block = runtimeInts(ctx, 2);
  RankedTensorType type = NodeContext::typeOf(x), imageType = NodeContext::typeOf(image),
                   blockType = NodeContext::typeOf(block);
  if (!type || !imageType || !blockType)
    return failure();
  if (type.getRank() != 3)
    return ctx.invalid("input must be 3-D: [N, C * prod(block_shape), L]");
  if (imageType.getRank() != 1 || imageType.isDynamicDim(0) || imageType != blockType ||
      imageType.getDimSize(0) < 1)
    return ctx.invalid("image_shape and block_shape must be 1-D, of one static length >= 1");
  int64_t spatial = imageType.getDimSize(0), rank = 1 + 2 * spatial;
  SmallVector<int64_t> dilations = ctx.intsAttr("dilations"), pads = ctx.intsAttr("pads"),
                       strides = ctx.intsAttr("strides");
  if (dilations.empty())
    dilations.assign(spatial, 1);
  if (pads.empty())
    pads.assign(2 * spatial, 0);
  if (strides.empty())
    strides.assign(spatial, 1);
  if (int64_t(dilations.size()) != spatial || int64_t(strides.size()) != spatial ||
      int64_t(pads.size()) != 2 * spatial)
    return ctx.invalid("dilations, strides and pads must have one entry per image dim "
                       "(pads two)");
  if (llvm::any_of(dilations, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(strides, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(pads, [](int64_t v) { return v < 0; }))
    return ctx.invalid("dilations and strides must be >= 1, pads >= 0");
  auto i64 = [&](int64_t v) { return i64Scalar(ctx, v); };
  auto add = [&](Value a, Value b) { return ctx.make<AddOp>(a, b); };
  auto mul = [&](Value a, Value b) { return ctx.make<MulOp>(a, b); };
  auto both = [&](Value a, Value b) { return ctx.make<AndOp>(a, b); };
  // Each dim's image size, block size and block count L_d.
  SmallVector<Value> sizes(spatial), blocks(spatial), counts(spatial);
  Value fits = compare(ctx, ComparePredicate::eq, i64(0), i64(0));
  for (int64_t d = 0; d < spatial; ++d) {
    sizes[d] = entryOf(ctx, image, d);
    blocks[d] = entryOf(ctx, block, d);
    std::optional<int64_t> size = knownInt(sizes[d]), blockDim = knownInt(blocks[d]);
    if ((size && *size < 0) || (blockDim && *blockDim < 1))
      return ctx.invalid("image_shape must be >= 0 and block_shape >= 1");
    Value reach = add(mul(ctx.make<SubOp>(blocks[d], i64(1)), i64(dilations[d])), i64(1));
    Value span = ctx.make<SubOp>(add(sizes[d], i64(pads[d] + pads[spatial + d])), reach);
    counts[d] = add(ctx.make<DivOp>(span, i64(strides[d])), i64(1));
    fits = both(fits, both(compare(ctx, ComparePredicate::ge, blocks[d], i64(1)),
                           compare(ctx, ComparePredicate::ge, span, i64(0))));
  }
  Value blockSize = i64(1), blockCount = i64(1);
  for (int64_t d = 0; d < spatial; ++d) {
    blockSize = mul(blockSize, blocks[d]);
    blockCount = mul(blockCount, counts[d]);
  }
  Value columns = dimValue(ctx, x, 1), length = dimValue(ctx, x, 2);
  Value channels = ctx.make<DivOp>(columns, blockSize);
  fits = both(fits, both(compare(ctx, ComparePredicate::eq, mul(channels, blockSize), columns),
                         compare(ctx, ComparePredicate::eq, blockCount, length)));
  // Dims of the index: [C, image dims..., block dims...].
  Value row = mul(iotaLaidOut(ctx, channels, rank, 0), blockSize);
  Value column = i64(0), valid;
  Value blockStride = i64(1), countStride = i64(1);
  for (int64_t d = spatial - 1; d >= 0; --d) {
    Value y = iotaLaidOut(ctx, sizes[d], rank, 1 + d);
    Value k = iotaLaidOut(ctx, blocks[d], rank, 1 + spatial + d);
    Value offset = ctx.make<SubOp>(add(y, i64(pads[d])), mul(k, i64(dilations[d])));
    Value l = ctx.make<DivOp>(ctx.make<MaxOp>(offset, i64(0)), i64(strides[d]));
    Value onBlock = both(
        both(compare(ctx, ComparePredicate::ge, offset, i64(0)),
             compare(ctx, ComparePredicate::eq, mul(l, i64(strides[d])), offset)),
        compare(ctx, ComparePredicate::lt, l, counts[d]));
    valid = valid ? both(valid, onBlock) : onBlock;
    row = add(row, mul(k, blockStride));
    column = add(column, mul(l, countStride));
    blockStride = mul(blockStride, blocks[d]);
    countStride = mul(countStride, counts[d]);
  }
  Value index = ctx.make<SelectOp>(valid, add(mul(row, length), column), i64(0));
  index = checked(ctx, index, fits,
                  "image_shape and block_shape do not fit the input's columns: it must be "
                  "[N, C * prod(block_shape), L] with L the blocks the padded image holds");
  Value flat = type.getNumDynamicDims() == 0
                   ? ctx.make<ReshapeOp>(x, ctx.i64s({type.getDimSize(0), -1}))
                   : ctx.make<DynamicReshapeOp>(x, ctx.indices({0, -1}), ctx.b.getBoolAttr(false),
                                                DenseI64ArrayAttr());
  Value gathered = ctx.make<GatherOp>(flat, index, ctx.i64(1));
  Value spread = ctx.make<SelectOp>(valid, gathered, ctx.scalarLike(x, 0));
  SmallVector<int64_t> offsets;
  for (int64_t d = 0; d < spatial; ++d)
    offsets.push_back(2 + spatial + d);
  return ctx.setOutput(0, ctx.make<ReduceSumOp>(spread, ctx.i64s(offsets),
                                                ctx.b.getBoolAttr(false)));
}

/// Compress by a condition read when the model runs: output k takes the
/// position whose running count of selected entries reaches k + 1 (the
/// result's length is the count, decided at run time).
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
  return ctx.make<GatherOp>(source, selectedPositions(ctx, flags), ctx.i64(axis));
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
  if (runtime) {
    RankedTensorType sourceType = NodeContext::typeOf(source);
    if (sourceType.isDynamicDim(axis)) {
      // A dim of run-time length: the condition (no longer than the dim,
      // as ONNX requires) selects its positions.
      Value condition = ctx.input(1);
      if (NodeContext::rankOf(condition) != 1)
        return ctx.invalid("condition must be 1-D");
      Value flags = ctx.cast(condition, ctx.b.getI64Type());
      return ctx.setOutput(0, ctx.make<GatherOp>(source, selectedPositions(ctx, flags),
                                                 ctx.i64(axis)));
    }
    return ctx.setOutput(0, runtimeCompress(ctx, source, axis, sourceType.getDimSize(axis)));
  }
  // A constant condition selects constant positions; on a dim known only
  // at run time, one past its end is a run-time error (ONNX requires the
  // condition to be no longer than the dim).
  int64_t size = NodeContext::typeOf(source).getDimSize(axis);
  if (ShapedType::isDynamic(size))
    size = condition->size();
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < std::min<int64_t>(size, condition->size()); ++i)
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
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  // The selection builds an n x n matrix (a run-time n is bounded when the
  // model runs).
  if (type.hasStaticShape() && type.getNumElements() > kMaxSelected)
    return ctx.unsupported("NonZero of more than " + llvm::Twine(kMaxSelected) +
                           " elements (its selection is quadratic)");
  Value flags = ctx.cast(compare(ctx, ComparePredicate::ne, flatten(ctx, x), ctx.scalarLike(x, 0)),
                         ctx.b.getI64Type());
  Value positions = selectedPositions(ctx, flags);
  SmallVector<Value> dims = dimValues(ctx, x);
  SmallVector<Value> strides = strideValues(ctx, dims);
  SmallVector<Value> rows;
  for (size_t d = 0; d < dims.size(); ++d) {
    Value coordinate = ctx.make<RemOp>(ctx.make<DivOp>(positions, strides[d]), dims[d]);
    rows.push_back(unsqueeze(ctx, coordinate, {0}));
  }
  if (rows.empty())
    return ctx.unsupported("NonZero of a scalar");
  return ctx.setOutput(0, rows.size() == 1 ? rows[0] : ctx.make<ConcatOp>(ValueRange(rows), ctx.i64(0)));
}

LogicalResult importReverseSequence(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  int64_t timeAxis = ctx.intAttr("time_axis", 0), batchAxis = ctx.intAttr("batch_axis", 1);
  if (rank < 2 || (timeAxis != 0 && timeAxis != 1) || batchAxis != 1 - timeAxis)
    return ctx.invalid("time_axis and batch_axis must be 0 and 1 in some order");
  std::optional<SmallVector<int64_t>> known;
  if (ctx.isKnownInput(1)) {
    known = ctx.intsInput(1, "sequence_lens");
    if (!known)
      return failure();
    if (!type.isDynamicDim(batchAxis) &&
        static_cast<int64_t>(known->size()) != type.getDimSize(batchAxis))
      return ctx.invalid("sequence_lens needs one length per batch entry");
  }
  if (known && type.hasStaticShape()) {
    // Every element's source: time t of batch b reads t' = len - 1 - t
    // when t < len, else itself.
    SmallVector<int64_t> shape(type.getShape());
    shape::Dims strides = stridesOf(shape);
    Value sources = generateConstant(
        ctx, RankedTensorType::get(shape, ctx.b.getI64Type()), [&](int64_t flat) {
          int64_t t = (flat / strides[timeAxis]) % shape[timeAxis];
          int64_t b = (flat / strides[batchAxis]) % shape[batchAxis];
          int64_t len = (*known)[b];
          int64_t from = t < len ? len - 1 - t : t;
          return static_cast<double>(flat + (from - t) * strides[timeAxis]);
        });
    return ctx.setOutput(0, ctx.make<GatherOp>(flatten(ctx, x), sources, ctx.i64(0)));
  }
  // Lengths or dims read when the model runs: the same rule on tensors, a
  // gather along the time axis.
  Value lengths = known ? ctx.indices(*known) : runtimeInts(ctx, 1);
  RankedTensorType lengthsType = NodeContext::typeOf(lengths);
  if (!lengthsType)
    return failure();
  if (lengthsType.getRank() != 1 ||
      (!lengthsType.isDynamicDim(0) && !type.isDynamicDim(batchAxis) &&
       lengthsType.getDimSize(0) != type.getDimSize(batchAxis)))
    return ctx.invalid("sequence_lens needs one length per batch entry");
  SmallVector<int64_t> spread(rank, 1);
  spread[batchAxis] = -1;
  Value len = ctx.make<ReshapeOp>(lengths, ctx.i64s(spread));
  Value t = iotaOfDim(ctx, x, timeAxis, rank, timeAxis);
  Value from = ctx.make<SelectOp>(compare(ctx, ComparePredicate::lt, t, len),
                                  ctx.make<SubOp>(ctx.make<SubOp>(len, i64Scalar(ctx, 1)), t), t);
  Value sources = elementFlatIndex(ctx, from, x, timeAxis, x);
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
  r.add("Col2Im", 18, any, importCol2Im);
  r.add("Compress", 9, any, importCompress);
  r.add("ReverseSequence", 10, any, importReverseSequence);
}

} // namespace kiln::onnx_frontend
