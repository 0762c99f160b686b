//===- ExpandComposites.cpp - kiln.conv_transpose, kiln.topk -> primitives ===//
//
// Implements kiln-expand-composites, the graph phase's first pass. The ops
// it expands are those both frontends (ONNX, PyTorch) need and no backend
// takes whole; expanding them here, before shape inference and folding,
// lets constant weights fold and pads merge into the convolution as they
// would from the frontends, and keeps one composition in one place.
//
//===----------------------------------------------------------------------===//

#include "compiler/Graph/Decompose.h"
#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/Builders.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_EXPANDCOMPOSITES
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinI64 = std::numeric_limits<int64_t>::min();

Value i64Constant(PatternRewriter &b, Location loc, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, b.getI64Type());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
}

Value zeroOf(PatternRewriter &b, Location loc, Type element) {
  auto type = RankedTensorType::get({}, element);
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getZeroAttr(element)));
}

Value slice(PatternRewriter &b, Location loc, Value v, ArrayRef<int64_t> starts,
            ArrayRef<int64_t> ends, ArrayRef<int64_t> steps) {
  return SliceOp::create(b, loc, v, b.getDenseI64ArrayAttr(starts),
                         b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps));
}

Value reshape(PatternRewriter &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  return ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr(shape));
}

Value compare(PatternRewriter &b, Location loc, ComparePredicate p, Value lhs, Value rhs) {
  return CompareOp::create(b, loc, ComparePredicateAttr::get(b.getContext(), p), lhs, rhs);
}

/// A transposed convolution as a stride-1 convolution of the zero-stuffed,
/// padded input with the weights regrouped and flipped.
struct ExpandConvTranspose : OpRewritePattern<ConvTransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvTransposeOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto wType = cast<RankedTensorType>(op.getWeight().getType());
    size_t spatial = wType.getRank() - 2;
    ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
    ArrayRef<int64_t> pads = op.getPads(), dilations = op.getDilations(),
                      outputPadding = op.getOutputPadding();
    Value stuffed = zeroStuff(b, loc, op.getInput(), op.getStrides());
    // Padded by span - pad (the span is dilation * (K - 1)), plus the
    // output padding at the end; a negative pad crops.
    SmallVector<int64_t> convPads(2 * (spatial + 2), 0);
    for (size_t i = 0; i < spatial; ++i) {
      int64_t span = (kernel[i] - 1) * dilations[i];
      convPads[2 + i] = span - pads[i];
      convPads[2 + i + spatial + 2] = span - pads[i + spatial] + outputPadding[i];
    }
    Value padded = zeroPad(b, loc, stuffed, convPads);
    // Weights [C, O/g, K...] -> [g, C/g, O/g, K...] -> [g, O/g, C/g, K...]
    // -> [O, C/g, K...], flipped spatially.
    int64_t groups = static_cast<int64_t>(op.getGroups());
    int64_t cin = wType.getDimSize(0), coutPerGroup = wType.getDimSize(1);
    SmallVector<int64_t> grouped = {groups, cin / groups, coutPerGroup};
    grouped.append(kernel.begin(), kernel.end());
    SmallVector<int64_t> perm = {0, 2, 1};
    for (size_t i = 0; i < spatial; ++i)
      perm.push_back(3 + i);
    SmallVector<int64_t> regrouped = {groups * coutPerGroup, cin / groups};
    regrouped.append(kernel.begin(), kernel.end());
    Value w = reshape(b, loc,
                      TransposeOp::create(b, loc, reshape(b, loc, op.getWeight(), grouped),
                                          b.getDenseI64ArrayAttr(perm)),
                      regrouped);
    SmallVector<int64_t> starts(spatial + 2, 0), ends(spatial + 2, kMaxI64),
        steps(spatial + 2, 1);
    for (size_t i = 0; i < spatial; ++i) {
      starts[i + 2] = -1;
      ends[i + 2] = kMinI64;
      steps[i + 2] = -1;
    }
    Value flipped = slice(b, loc, w, starts, ends, steps);
    Value y = ConvOp::create(b, loc, padded, flipped,
                             b.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1)),
                             b.getDenseI64ArrayAttr(SmallVector<int64_t>(2 * spatial, 0)),
                             b.getDenseI64ArrayAttr(dilations), op.getGroupsAttr());
    if (y.getType() != op.getType())
      return op.emitOpError("expands to a convolution of type ")
             << y.getType() << ", not " << op.getType();
    b.replaceOp(op, y);
    return success();
  }
};

/// The value no entry is worse than: -inf (the lowest integer) for the
/// largest, +inf (the highest) for the smallest.
Value worstOf(PatternRewriter &b, Location loc, Type element, bool largest) {
  auto type = RankedTensorType::get({}, element);
  Attribute worst;
  if (auto f = dyn_cast<FloatType>(element)) {
    worst = b.getFloatAttr(element, APFloat::getInf(f.getFloatSemantics(), largest));
  } else {
    unsigned bits = element.getIntOrFloatBitWidth();
    worst = b.getIntegerAttr(element, largest ? APInt::getSignedMinValue(bits)
                                              : APInt::getSignedMaxValue(bits));
  }
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, worst));
}

/// TopK of a small k in k passes over `v` ([..., n], the axis last): the
/// best value among the entries not yet taken, the lowest such index
/// holding it (a NaN best: the lowest NaN not yet taken), that index taken.
/// Results [..., k], best first, ties in index order, as by ranks.
std::pair<Value, Value> selectBest(PatternRewriter &b, Location loc, Value v, int64_t k,
                                   bool largest) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t last = type.getRank() - 1, n = type.getDimSize(last);
  Type element = type.getElementType();
  SmallVector<int64_t> iota(n);
  for (int64_t i = 0; i < n; ++i)
    iota[i] = i;
  Value positions = i64Constant(b, loc, {n}, iota), beyond = i64Constant(b, loc, {}, {n});
  Value worst = worstOf(b, loc, element, largest);
  DenseI64ArrayAttr axes = b.getDenseI64ArrayAttr({last});
  BoolAttr keep = b.getBoolAttr(true);
  Value isNaN = isa<FloatType>(element) ? compare(b, loc, ComparePredicate::ne, v, v) : Value();
  Value free; // entries not yet taken (all of them at first)
  SmallVector<Value> values, indices;
  for (int64_t r = 0; r < k; ++r) {
    Value candidates = free ? SelectOp::create(b, loc, free, v, worst) : v;
    Value best = largest ? ReduceMaxOp::create(b, loc, candidates, axes, keep).getResult()
                         : ReduceMinOp::create(b, loc, candidates, axes, keep).getResult();
    Value hit = compare(b, loc, ComparePredicate::eq, v, best);
    if (isNaN)
      hit = OrOp::create(b, loc, hit,
                         AndOp::create(b, loc, isNaN,
                                       compare(b, loc, ComparePredicate::ne, best, best)));
    if (free)
      hit = AndOp::create(b, loc, hit, free);
    Value index = ReduceMinOp::create(b, loc, SelectOp::create(b, loc, hit, positions, beyond),
                                      axes, keep);
    Value others = compare(b, loc, ComparePredicate::ne, positions, index);
    free = free ? AndOp::create(b, loc, free, others).getResult() : others;
    values.push_back(best);
    indices.push_back(index);
  }
  auto joined = [&](ArrayRef<Value> parts) -> Value {
    if (parts.size() == 1)
      return parts.front();
    return ConcatOp::create(b, loc, parts, b.getI64IntegerAttr(last));
  };
  return {joined(values), joined(indices)};
}

/// TopK: k passes of a reduction for a small k (selectBest); otherwise by
/// ranks: entry i's rank is the number of entries that beat it (a better
/// value, or an equal one at a lower index); output slot r collects the
/// entry whose rank is r (a select and a sum over the entries).
struct ExpandTopK : OpRewritePattern<TopKOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TopKOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), axis = static_cast<int64_t>(op.getAxis());
    int64_t n = type.getDimSize(axis);
    // The axis last: [..., n]; the other dims copied (0) where reshaped.
    SmallVector<int64_t> toLast, back(rank);
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        toLast.push_back(d);
    toLast.push_back(axis);
    for (int64_t d = 0; d < rank; ++d)
      back[toLast[d]] = d;
    SmallVector<int64_t> keep(rank - 1, 0);
    auto keepThen = [&](std::initializer_list<int64_t> tail) {
      SmallVector<int64_t> shape(keep);
      shape.append(tail);
      return shape;
    };
    Value v = TransposeOp::create(b, loc, x, b.getDenseI64ArrayAttr(toLast));
    std::optional<int64_t> k;
    if (std::optional<uint64_t> given = op.getK())
      k = static_cast<int64_t>(*given);
    if (topkSelects(n, k)) {
      auto [values, indices] = selectBest(b, loc, v, *k, op.getLargest());
      // (One statement each: the order the ops are built in is the IR's.)
      Value valuesBack = TransposeOp::create(b, loc, values, b.getDenseI64ArrayAttr(back));
      Value indicesBack = TransposeOp::create(b, loc, indices, b.getDenseI64ArrayAttr(back));
      return replaceTopK(b, op, valuesBack, indicesBack);
    }
    if (n > kTopKMaxRanked)
      return op.emitOpError("over ") << n << " entries needs a static k of at most " << n / 8;
    Value xi = reshape(b, loc, v, keepThen({n, 1})); // entry i
    Value xj = reshape(b, loc, v, keepThen({1, n})); // entry j
    Value better = compare(b, loc, op.getLargest() ? ComparePredicate::gt : ComparePredicate::lt,
                           xj, xi);
    Value equal = compare(b, loc, ComparePredicate::eq, xj, xi);
    SmallVector<bool> lower(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < i; ++j)
        lower[i * n + j] = true; // [i, j]: j < i
    Value lowerIndex = ConstantOp::create(
        b, loc, DenseElementsAttr::get(RankedTensorType::get({n, n}, b.getI1Type()),
                                       ArrayRef<bool>(lower)));
    Value beats = OrOp::create(b, loc, better, AndOp::create(b, loc, equal, lowerIndex));
    auto beatsType = cast<RankedTensorType>(beats.getType());
    Value counts = CastOp::create(b, loc, beatsType.clone(b.getI64Type()), beats, false);
    Value ranks = ReduceSumOp::create(b, loc, counts, b.getDenseI64ArrayAttr({rank}),
                                      b.getBoolAttr(false));
    // Slots [1, k]: r < k.
    Value slots;
    if (k) {
      SmallVector<int64_t> r(*k);
      for (int64_t i = 0; i < *k; ++i)
        r[i] = i;
      slots = i64Constant(b, loc, {1, *k}, r);
    } else {
      // A count past the axis' length asks for an iota of length -1: a
      // shape error when the model runs.
      Value count = op.getCount();
      Value fits = compare(b, loc, ComparePredicate::le, count, i64Constant(b, loc, {1}, {n}));
      Value length = SelectOp::create(b, loc, fits, count, i64Constant(b, loc, {1}, {-1}));
      slots = reshape(b, loc, IotaOp::create(b, loc, length, b.getI64IntegerAttr(0)), {1, -1});
    }
    Value placed = compare(b, loc, ComparePredicate::eq, reshape(b, loc, ranks, keepThen({n, 1})),
                           slots);
    auto collect = [&](Value perEntry) -> Value {
      Type element = cast<RankedTensorType>(perEntry.getType()).getElementType();
      Value chosen = SelectOp::create(b, loc, placed, perEntry, zeroOf(b, loc, element));
      Value summed = ReduceSumOp::create(b, loc, chosen, b.getDenseI64ArrayAttr({rank - 1}),
                                         b.getBoolAttr(false));
      return TransposeOp::create(b, loc, summed, b.getDenseI64ArrayAttr(back));
    };
    SmallVector<int64_t> positions(n);
    for (int64_t i = 0; i < n; ++i)
      positions[i] = i;
    Value values = collect(xi);
    Value indices = collect(i64Constant(b, loc, {n, 1}, positions));
    return replaceTopK(b, op, values, indices);
  }

  static LogicalResult replaceTopK(PatternRewriter &b, TopKOp op, Value values, Value indices) {
    if (values.getType() != op.getValues().getType() ||
        indices.getType() != op.getIndices().getType())
      return op.emitOpError("expands to results of types ")
             << values.getType() << " and " << indices.getType() << ", not "
             << op.getValues().getType() << " and " << op.getIndices().getType();
    b.replaceOp(op, {values, indices});
    return success();
  }
};

struct ExpandCompositesPass : kiln::impl::ExpandCompositesBase<ExpandCompositesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateCompositeExpansions(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    SmallVector<Operation *> composites;
    getOperation()->walk([&](Operation *op) {
      if (isa<ConvTransposeOp, TopKOp>(op))
        composites.push_back(op);
    });
    if (composites.empty())
      return;
    if (failed(applyOpPatternsGreedily(composites, std::move(patterns), config)))
      return signalPassFailure();
    // A pattern that failed has said why on the op.
    WalkResult left = getOperation()->walk([](Operation *op) {
      return isa<ConvTransposeOp, TopKOp>(op) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void kiln::populateCompositeExpansions(RewritePatternSet &patterns) {
  patterns.add<ExpandConvTranspose, ExpandTopK>(patterns.getContext());
}

void kiln::populateTopKExpansion(RewritePatternSet &patterns) {
  patterns.add<ExpandTopK>(patterns.getContext());
}
