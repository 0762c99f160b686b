//===- Sort.cpp - ONNX TopK and Unique -------------------------------------===//
//
// TopK is kiln.topk (one scan of every row keeping the K best, along an
// axis of any length: compiler/Lowering/TopKToLoops.cpp). Unique compares
// every pair of entries (n^2 comparisons).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

LogicalResult importTopK(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  std::optional<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", -1), rank);
  int64_t k;
  Value runtimeK; // K read when the model runs
  if (ctx.opset >= 10 && !ctx.isKnownInput(1)) {
    runtimeK = asScalar(ctx, runtimeInts(ctx, 1));
    if (!runtimeK)
      return failure();
    k = 1;
  } else if (ctx.opset < 10) {
    k = ctx.intAttr("k", 0);
  } else {
    std::optional<SmallVector<int64_t>> given = ctx.intsInput(1, "K");
    if (!given)
      return failure();
    if (given->size() != 1)
      return ctx.invalid("K must hold one value");
    k = (*given)[0];
  }
  if (!axis)
    return failure();
  // The axis' length may be known only at run time (a K past it is then
  // an error when the model runs).
  int64_t n = cast<RankedTensorType>(x.getType()).getDimSize(*axis);
  if (k < 0 || (!ShapedType::isDynamic(n) && k > n)) {
    std::string length = ShapedType::isDynamic(n) ? "the axis' length" : std::to_string(n);
    return ctx.invalid("K = " + llvm::Twine(k) + " is outside [0, " + length + "]");
  }
  bool largest = ctx.intAttr("largest", 1) != 0;
  // sorted = 0 lets the results come in any order: Kiln's are sorted.
  ctx.attrsWithoutEffect({"sorted"});
  // Lowered as one scan of every row (compiler/Lowering/TopKToLoops.cpp).
  BoolAttr best = ctx.b.getBoolAttr(largest);
  SmallVector<Value> results =
      runtimeK ? ctx.makeMulti<TopKOp>(2, x, asVector(ctx, runtimeK), ctx.i64(*axis),
                                       IntegerAttr(), best)
               : ctx.makeMulti<TopKOp>(2, x, /*count=*/nullptr, ctx.i64(*axis), ctx.i64(k), best);
  if (results.size() != 2)
    return failure();
  ctx.bindOutput(0, results[0]);
  return ctx.setOutput(1, results[1]);
}

/// Unique: the distinct entries (elements, or slices along `axis`, whose
/// dims may be read at run time) of n (at most 4096: the comparisons are
/// n x n; a run-time n is checked when the model runs), in order of first
/// occurrence or sorted (slices lexicographically); with each one's first
/// index, each entry's slot, and the counts. The number of distinct entries
/// is decided at run time.
/// Entries Unique compares at most (pairwise: n x n x entry size).
constexpr int64_t kMaxUniqueEntries = 4096;

LogicalResult importUnique(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  Type i64 = ctx.b.getI64Type();
  bool sorted = ctx.intAttr("sorted", 1) != 0;
  // source: what Y gathers from along `axis`; table: [n, m] entry values.
  Value source = x, table;
  int64_t axis = 0;
  if (ctx.hasAttr("axis")) {
    std::optional<int64_t> a = ctx.normalizeAxis(ctx.intAttr("axis", 0), type.getRank());
    if (!a)
      return failure();
    axis = *a;
    // The axis and the entries it holds may have run-time dims.
    SmallVector<int64_t> toFront = {axis};
    int64_t entrySize = 1;
    bool runtimeEntries = false;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis) {
        toFront.push_back(d);
        runtimeEntries |= type.isDynamicDim(d);
        entrySize *= type.isDynamicDim(d) ? 1 : type.getDimSize(d);
      }
    Value front = ctx.make<TransposeOp>(x, ctx.i64s(toFront));
    if (!runtimeEntries) {
      table = ctx.make<ReshapeOp>(front, ctx.i64s({0, entrySize}));
    } else {
      // [n, entry size], both read when the model runs.
      SmallVector<Value> dims = dimValues(ctx, front);
      Value size = i64Scalar(ctx, 1);
      for (size_t d = 1; d < dims.size(); ++d)
        size = ctx.make<MulOp>(size, dims[d]);
      table = ctx.make<DynamicReshapeOp>(front, concatVector(ctx, {dims[0], size}),
                                         ctx.b.getBoolAttr(true), DenseI64ArrayAttr());
    }
  } else {
    source = ctx.make<ReshapeOp>(x, ctx.i64s({-1}));
    table = ctx.make<ReshapeOp>(source, ctx.i64s({-1, 1}));
  }
  RankedTensorType tableType = NodeContext::typeOf(table);
  if (!tableType)
    return failure();
  int64_t n = tableType.getDimSize(0);
  if (!ShapedType::isDynamic(n) && n > kMaxUniqueEntries)
    return ctx.unsupported("Unique of more than " + llvm::Twine(kMaxUniqueEntries) +
                           " entries (its comparisons are quadratic)");
  if (n == 0)
    return ctx.unsupported("Unique of an empty tensor");
  if (ShapedType::isDynamic(n)) {
    // A run-time count above the bound stops the run before the quadratic
    // comparisons are sized (the table is read through the check).
    Value ok = compare(ctx, ComparePredicate::le, dimValue(ctx, table, 0),
                       i64Scalar(ctx, kMaxUniqueEntries));
    Value rows = requireAtRunTime(ctx, iotaOfDim(ctx, table, 0, 1, 0), ok);
    table = ctx.make<GatherOp>(table, rows, ctx.i64(0));
  }
  Value row = iotaOfDim(ctx, table, 0, 2, 0), column = iotaOfDim(ctx, table, 0, 2, 1);
  auto lowerTriangle = [&](bool inclusive) { // [i, j] = 1 where j < i (or j <= i)
    return ctx.cast(compare(ctx, inclusive ? ComparePredicate::le : ComparePredicate::lt, column,
                            row),
                    i64);
  };
  auto sum = [&](Value v, int64_t d) {
    return ctx.make<ReduceSumOp>(v, ctx.i64s({d}), ctx.b.getBoolAttr(false));
  };
  Value ti = unsqueeze(ctx, table, {1}), tj = unsqueeze(ctx, table, {0}); // [n,1,m], [1,n,m]
  Value equal = compare(ctx, ComparePredicate::eq, ti, tj);                // [n, n, m]
  Value same = ctx.make<ReduceMinOp>(ctx.cast(equal, i64), ctx.i64s({2}),
                                     ctx.b.getBoolAttr(false)); // [n, n]: entries i and j equal
  Value first = ctx.cast(compare(ctx, ComparePredicate::eq,
                                 sum(ctx.make<MulOp>(same, lowerTriangle(false)), 1),
                                 i64Scalar(ctx, 0)),
                         i64); // [n]: no earlier equal entry
  // key[i]: the slot of entry i's value in the result.
  Value key;
  if (sorted) {
    // j's entry is lexicographically below i's: at the first position t
    // where they differ, j's value is smaller.
    Value differ = ctx.cast(ctx.make<NotOp>(equal), i64);
    // [s, t] = 1 where s < t, over the entry's positions.
    Value before = ctx.cast(compare(ctx, ComparePredicate::lt, iotaOfDim(ctx, table, 1, 2, 0),
                                    iotaOfDim(ctx, table, 1, 2, 1)),
                            i64);
    Value differedBefore = sum(ctx.make<MulOp>(unsqueeze(ctx, differ, {3}),
                                               unsqueeze(ctx, before, {0, 1})),
                               2); // [n, n, t]
    Value decides = ctx.make<AndOp>(
        compare(ctx, ComparePredicate::lt, tj, ti),
        compare(ctx, ComparePredicate::eq, differedBefore, i64Scalar(ctx, 0)));
    Value below = ctx.make<ReduceMaxOp>(ctx.cast(decides, i64), ctx.i64s({2}),
                                        ctx.b.getBoolAttr(false)); // [n, n]
    key = sum(ctx.make<MulOp>(below, unsqueeze(ctx, first, {0})), 1);
  } else {
    // The number of first occurrences up to entry i's first occurrence.
    Value running = sum(ctx.make<MulOp>(lowerTriangle(true), unsqueeze(ctx, first, {0})), 1);
    Value firstOf = ctx.make<ArgMaxOp>(same, ctx.i64(1), ctx.b.getBoolAttr(false),
                                       ctx.b.getBoolAttr(false));
    key = ctx.make<SubOp>(ctx.make<GatherOp>(running, firstOf, ctx.i64(0)), i64Scalar(ctx, 1));
  }
  Value count = sum(first, 0);
  Value slots = unsqueeze(ctx, iotaOfLength(ctx, count), {1}); // [u, 1]
  Value inSlot = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, key, {0}), slots); // [u, n]
  Value firstInSlot = ctx.make<AndOp>(
      inSlot, compare(ctx, ComparePredicate::ne, unsqueeze(ctx, first, {0}), i64Scalar(ctx, 0)));
  Value positions = sum(ctx.make<SelectOp>(firstInSlot, column, i64Scalar(ctx, 0)), 1); // [u]
  ctx.bindOutput(0, ctx.make<GatherOp>(source, positions, ctx.i64(axis)));
  if (ctx.hasOutput(1))
    ctx.bindOutput(1, positions);
  if (ctx.hasOutput(2))
    ctx.bindOutput(2, key);
  if (ctx.hasOutput(3))
    ctx.bindOutput(3, sum(ctx.cast(inSlot, i64), 1));
  return ctx.finish();
}

} // namespace

void registerSortOps(OpRegistry &r) {
  r.add("TopK", 1, kAnyLaterOpset, importTopK);
  r.add("Unique", 11, kAnyLaterOpset, importUnique);
}

} // namespace kiln::onnx_frontend
