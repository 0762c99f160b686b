//===- TopKToLoops.cpp - kiln.topk -> one scan of every row ---------------===//
//
// `kiln.topk` becomes an `scf.forall` over every position of the dims
// other than the axis; each iteration scans its row once, in index order,
// keeping the best entries so far sorted, as an insertion sort that stops
// at k:
//
//   - the first k entries are each inserted among those kept;
//   - a later entry is inserted only when it beats the k-th best so far,
//     which then drops out.
//
// An entry goes after every kept entry it does not beat, so equal values
// stay in index order (a stable sort when k is the axis' length). NaN
// orders above every number, as PyTorch's topk and sort: first for the
// largest, last for the smallest, NaNs among themselves by index.
//
// The row goes by chunks of 8 entries, each compared with the k-th best
// at the chunk's start without a branch (LLVM makes them vector compares);
// only a chunk with an admitted entry goes entry by entry. For a k of at
// most 16 known when compiling, the kept entries are scalars the loop
// carries (registers) and an entry is placed by selects, no branch and no
// memory; otherwise they are kept in the row's slices of the results and
// an entry is placed by a count of those it does not beat and a shift of
// those it beats. O(n + kept * k) a row, where kept is about
// k (1 + ln(n / k)) for entries in random order, n at worst (entries from
// worst to best). No n x n comparisons: any axis' length, any k.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

/// Entries a row's scan compares with the k-th best at once.
constexpr int64_t kChunk = 8;
/// The largest k whose kept entries the scan carries as scalars.
constexpr int64_t kMaxKeptInRegisters = 16;

/// Whether `x` beats `y`: greater (or smaller with !largest) by `element`'s
/// order, NaN above every number: for the largest, x > y or unordered,
/// unless y is NaN (nothing beats a NaN kept before); for the smallest,
/// x < y or unordered, unless x is NaN.
Value beats(OpBuilder &b, Location loc, Type element, bool largest, Value x, Value y) {
  if (!isa<FloatType>(element)) {
    bool u = element.isUnsignedInteger();
    auto p = largest ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                     : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  auto order = largest ? arith::CmpFPredicate::UGT : arith::CmpFPredicate::ULT;
  Value wins = arith::CmpFOp::create(b, loc, order, x, y);
  Value number = largest ? y : x;
  Value notNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, number, number);
  return arith::AndIOp::create(b, loc, wins, notNaN);
}

/// The kept rows (`values`, `indices`: 1-D, sorted best first) with the
/// entry (`x`, its index `i`) inserted among their first `length` entries:
/// after each one it does not beat, those it beats shifted one on (the
/// entry at `length`, if any, is overwritten).
std::pair<Value, Value> insertEntry(OpBuilder &b, Location loc, Type element, bool largest,
                                    Value values, Value indices, Value length, Value x,
                                    Value i) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Its place: the number of kept entries it does not beat (sorted: they
  // come first).
  auto count = scf::ForOp::create(
      b, loc, zero, length, one, ValueRange{zero},
      [&](OpBuilder &nb, Location l, Value j, ValueRange args) {
        Value kept = tensor::ExtractOp::create(nb, l, values, ValueRange{j});
        Value wins = beats(nb, l, element, largest, x, kept);
        Value after = arith::SelectOp::create(nb, l, wins, args[0],
                                              arith::AddIOp::create(nb, l, args[0], one));
        scf::YieldOp::create(nb, l, after);
      });
  Value place = count.getResult(0);
  // Those it beats move one on, the last first: entry length - t for t in
  // [0, length - place).
  Value moves = arith::SubIOp::create(b, loc, length, place);
  auto shift = scf::ForOp::create(
      b, loc, zero, moves, one, ValueRange{values, indices},
      [&](OpBuilder &nb, Location l, Value t, ValueRange rows) {
        Value to = arith::SubIOp::create(nb, l, length, t);
        Value from = arith::SubIOp::create(nb, l, to, one);
        Value v = tensor::ExtractOp::create(nb, l, rows[0], ValueRange{from});
        Value w = tensor::ExtractOp::create(nb, l, rows[1], ValueRange{from});
        Value movedValues = tensor::InsertOp::create(nb, l, v, rows[0], ValueRange{to});
        Value movedIndices = tensor::InsertOp::create(nb, l, w, rows[1], ValueRange{to});
        scf::YieldOp::create(nb, l, ValueRange{movedValues, movedIndices});
      });
  Value index = arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
  Value placedValues =
      tensor::InsertOp::create(b, loc, x, shift.getResult(0), ValueRange{place});
  Value placedIndices =
      tensor::InsertOp::create(b, loc, index, shift.getResult(1), ValueRange{place});
  return {placedValues, placedIndices};
}

/// One row's scan: its entries (`x` at the forall's indices `ivs`, `axis`
/// along the row), `k` kept of the first `end` (n, or 0 for a run-time k
/// of 0), in index order.
///
/// One loop over the row (a row's loops stay one loop nest: a scalar
/// passed from one loop to the next would be a value the host reads when
/// the loops run on a GPU). Each of the first k entries is inserted among
/// those before it; a later one only when it beats the k-th best so far,
/// among the first k - 1 (the k-th drops out). The k-th best so far
/// travels with the loop (a register, not a load an entry).
///
/// The row goes by chunks of kChunk entries: all of a chunk's entries
/// compared with the k-th best at its start (no branch between them: LLVM
/// makes them vector compares), and only a chunk with an admitted entry in
/// it goes over its entries one by one (the k-th best only gets harder to
/// beat within it). Past the row's end (n not a multiple of kChunk) an
/// entry is masked out (and reads the row's last entry).
struct RowScan {
  Value x;
  ValueRange ivs;
  int64_t axis;
  Type element;
  bool largest;
  Value k, end;
  Value zero, one, chunk, lastEntry;
  bool whole; // every chunk within the row: nothing masked

  RowScan(OpBuilder &b, Location loc, Value x, ValueRange ivs, int64_t axis, bool largest,
          Value k, Value end)
      : x(x), ivs(ivs), axis(axis),
        element(cast<RankedTensorType>(x.getType()).getElementType()), largest(largest), k(k),
        end(end) {
    zero = arith::ConstantIndexOp::create(b, loc, 0);
    one = arith::ConstantIndexOp::create(b, loc, 1);
    chunk = arith::ConstantIndexOp::create(b, loc, kChunk);
    lastEntry = arith::SubIOp::create(b, loc, end, one);
    std::optional<int64_t> endKnown = getConstantIntValue(end);
    whole = endKnown && *endKnown % kChunk == 0;
  }

  /// Whether entry `i` is in the row (null: every entry is).
  Value inRow(OpBuilder &b, Location loc, Value i) const {
    return whole ? Value() : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, end);
  }
  /// `admitted` and entry `i` in the row.
  Value masked(OpBuilder &b, Location loc, Value i, Value admitted) const {
    Value in = inRow(b, loc, i);
    return in ? arith::AndIOp::create(b, loc, admitted, in).getResult() : admitted;
  }
  /// Entry `i` (past the row's end: its last).
  Value entry(OpBuilder &b, Location loc, Value i) const {
    Value at = whole ? i : arith::MinUIOp::create(b, loc, i, lastEntry).getResult();
    auto rank = cast<RankedTensorType>(x.getType()).getRank();
    SmallVector<Value> indices;
    for (int64_t d = 0, o = 0; d < rank; ++d)
      indices.push_back(d == axis ? at : ivs[o++]);
    return tensor::ExtractOp::create(b, loc, x, indices);
  }

  /// Whether entry `i` (of value `entry`) is admitted against `state`.
  using Admitted = function_ref<Value(OpBuilder &, Location, Value, Value, ValueRange)>;
  /// `state` after entry `i` (of value `entry`).
  using Step =
      function_ref<SmallVector<Value>(OpBuilder &, Location, Value, Value, ValueRange)>;

  /// The loop over the chunks carrying `state`: a chunk goes entry by
  /// entry (`step`) only when `admitted` holds for one of its entries
  /// against the state at its start.
  scf::ForOp chunks(OpBuilder &b, Location loc, ValueRange state, Admitted admitted,
                    Step step) const {
    Value count = arith::CeilDivUIOp::create(b, loc, end, chunk);
    return scf::ForOp::create(
        b, loc, zero, count, one, state,
        [&](OpBuilder &nb, Location l, Value t, ValueRange carried) {
          Value base = arith::MulIOp::create(nb, l, t, chunk);
          Value any;
          for (int64_t j = 0; j < kChunk; ++j) {
            Value i = arith::AddIOp::create(nb, l, base, arith::ConstantIndexOp::create(nb, l, j));
            Value in = admitted(nb, l, i, entry(nb, l, i), carried);
            any = any ? arith::OrIOp::create(nb, l, any, in).getResult() : in;
          }
          auto checked = scf::IfOp::create(
              nb, l, any,
              [&](OpBuilder &cb, Location cl) {
                Value stop = arith::AddIOp::create(cb, cl, base, chunk);
                auto entries = scf::ForOp::create(
                    cb, cl, base, stop, one, carried,
                    [&](OpBuilder &eb, Location el, Value i, ValueRange now) {
                      scf::YieldOp::create(eb, el, step(eb, el, i, entry(eb, el, i), now));
                    });
                scf::YieldOp::create(cb, cl, entries.getResults());
              },
              [&](OpBuilder &sb, Location sl) { scf::YieldOp::create(sb, sl, carried); });
          scf::YieldOp::create(nb, l, checked.getResults());
        });
  }

  /// A small k (`kept`, known when compiling): the kept entries are
  /// scalars the loop carries (registers), after m, the number kept so
  /// far. An entry goes in place without a branch: with b_j = (j >= m or it
  /// beats kept entry j), false then true along the sorted row, slot j
  /// becomes kept j where !b_j, the entry where b_j first holds, kept j - 1
  /// after; m grows to k. An entry not admitted leaves every b_j false.
  /// The kept entries are written to the rows each entry a chunk goes over
  /// (in the loop: after it, the host would read the scalars when the
  /// loops run on a GPU, and a row of one chunk has no loop over chunks
  /// left). Returns the rows.
  std::pair<Value, Value> inRegisters(OpBuilder &b, Location loc, Value valuesRow,
                                      Value indicesRow, int64_t kept) const {
    Value none = arith::ConstantOp::create(b, loc, element, b.getZeroAttr(element));
    SmallVector<Value> init = {valuesRow, indicesRow, zero};
    init.append(kept, none);
    init.append(kept, arith::ConstantIntOp::create(b, loc, 0, 64).getResult());
    auto admitted = [&](OpBuilder &nb, Location l, Value i, Value x, ValueRange now) -> Value {
      Value filling = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, now[2], k);
      Value wins = beats(nb, l, element, largest, x, now[2 + kept]);
      return masked(nb, l, i, arith::OrIOp::create(nb, l, filling, wins));
    };
    auto step = [&](OpBuilder &nb, Location l, Value i, Value x, ValueRange now) {
      Value m = now[2];
      ValueRange values = now.slice(3, kept), indices = now.slice(3 + kept, kept);
      Value index = arith::IndexCastOp::create(nb, l, nb.getI64Type(), i);
      SmallVector<Value> placed(kept);
      for (int64_t j = 0; j < kept; ++j) {
        Value slot = arith::ConstantIndexOp::create(nb, l, j);
        Value empty = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::uge, slot, m);
        Value wins = beats(nb, l, element, largest, x, values[j]);
        placed[j] = masked(nb, l, i, arith::OrIOp::create(nb, l, empty, wins));
      }
      SmallVector<Value> newValues(kept), newIndices(kept);
      for (int64_t j = 0; j < kept; ++j) {
        Value v = arith::SelectOp::create(nb, l, placed[j], x, values[j]);
        Value w = arith::SelectOp::create(nb, l, placed[j], index, indices[j]);
        if (j > 0) { // the slot before moves here where it is placed too
          Value moved = arith::AndIOp::create(nb, l, placed[j], placed[j - 1]);
          v = arith::SelectOp::create(nb, l, moved, values[j - 1], v);
          w = arith::SelectOp::create(nb, l, moved, indices[j - 1], w);
        }
        newValues[j] = v;
        newIndices[j] = w;
      }
      Value grown = arith::MinUIOp::create(nb, l, arith::AddIOp::create(nb, l, m, one), k);
      Value in = inRow(nb, l, i);
      SmallVector<Value> next = {
          now[0], now[1], in ? arith::SelectOp::create(nb, l, in, grown, m).getResult() : grown};
      for (int64_t j = 0; j < kept; ++j) {
        Value slot = arith::ConstantIndexOp::create(nb, l, j);
        next[0] = tensor::InsertOp::create(nb, l, newValues[j], next[0], ValueRange{slot});
        next[1] = tensor::InsertOp::create(nb, l, newIndices[j], next[1], ValueRange{slot});
      }
      next.append(newValues);
      next.append(newIndices);
      return next;
    };
    scf::ForOp scan = chunks(b, loc, init, admitted, step);
    return {scan.getResult(0), scan.getResult(1)};
  }

  /// Any k: the kept entries in the rows (the results' slices), sorted,
  /// each admitted entry inserted (insertEntry); the k-th best carried
  /// (after an insertion, the kept row's last entry). Returns the rows.
  std::pair<Value, Value> inRows(OpBuilder &b, Location loc, Value valuesRow,
                                 Value indicesRow) const {
    Value last = arith::SubIOp::create(b, loc, k, one);
    Value none = arith::ConstantOp::create(b, loc, element, b.getZeroAttr(element));
    auto admitted = [&](OpBuilder &nb, Location l, Value i, Value x, ValueRange now) -> Value {
      Value filling = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, i, k);
      Value wins = beats(nb, l, element, largest, x, now[2]);
      return masked(nb, l, i, arith::OrIOp::create(nb, l, filling, wins));
    };
    auto step = [&](OpBuilder &nb, Location l, Value i, Value x, ValueRange now) {
      Value filling = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, i, k);
      Value wins = beats(nb, l, element, largest, x, now[2]);
      Value in = masked(nb, l, i, arith::OrIOp::create(nb, l, filling, wins));
      auto kept = scf::IfOp::create(
          nb, l, in,
          [&](OpBuilder &tb, Location tl) {
            Value length = arith::SelectOp::create(tb, tl, filling, i, last);
            auto [v, w] = insertEntry(tb, tl, element, largest, now[0], now[1], length, x, i);
            Value kth = tensor::ExtractOp::create(tb, tl, v, ValueRange{length});
            scf::YieldOp::create(tb, tl, ValueRange{v, w, kth});
          },
          [&](OpBuilder &fb, Location fl) { scf::YieldOp::create(fb, fl, now); });
      return SmallVector<Value>(kept.getResults());
    };
    scf::ForOp scan = chunks(b, loc, ValueRange{valuesRow, indicesRow, none}, admitted, step);
    return {scan.getResult(0), scan.getResult(1)};
  }
};

struct TopKToRowScan : OpRewritePattern<TopKOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TopKOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    Type element = type.getElementType();
    bool largest = op.getLargest();
    int64_t rank = type.getRank(), axis = static_cast<int64_t>(op.getAxis());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value n = lowering::dimOf(b, loc, x, axis);
    // k known when compiling: the attribute, or a count that is a constant
    // in [0, n] (its rows then have a static length: no casts between
    // static and dynamic rows in the loops, which buffer deallocation
    // cannot see through).
    std::optional<int64_t> known;
    Value k, count;
    if (std::optional<uint64_t> given = op.getK()) {
      known = static_cast<int64_t>(*given);
    } else {
      count = lowering::extractIndex(b, loc, op.getCount(), 0);
      std::optional<int64_t> constant = getConstantIntValue(count);
      if (constant && *constant >= 0 && *constant <= type.getDimSize(axis))
        known = *constant;
    }
    if (known) {
      k = arith::ConstantIndexOp::create(b, loc, *known);
      // Along an axis known only at run time, a k past it stops the run
      // (one that goes on keeps fewer than k entries).
      if (type.isDynamicDim(axis))
        lowering::checkAtRunTime(
            b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, k, n),
            lowering::kTopKCount);
    } else {
      // A run-time k outside [0, n] stops the run (a run that goes on
      // after the call, as one without a place to return to does, scans
      // nothing).
      Value notNegative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, count, zero);
      Value notPast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, count, n);
      Value fits = arith::AndIOp::create(b, loc, notNegative, notPast);
      lowering::checkAtRunTime(b, loc, fits, lowering::kTopKCount);
      k = arith::SelectOp::create(b, loc, fits, count, zero);
    }
    // The results: the input's dims, k along the axis.
    SmallVector<int64_t> shape(op.getValues().getType().getShape());
    if (known)
      shape[axis] = *known;
    auto valuesType = RankedTensorType::get(shape, element);
    auto indicesType = RankedTensorType::get(shape, b.getI64Type());
    SmallVector<Value> dims(rank), sizes; // the input's dynamic dims, once
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        dims[d] = lowering::dimOf(b, loc, x, d);
    for (int64_t d = 0; d < rank; ++d)
      if (valuesType.isDynamicDim(d))
        sizes.push_back(d == axis ? k : dims[d]);
    Value valuesInit = tensor::EmptyOp::create(b, loc, valuesType, sizes);
    Value indicesInit = tensor::EmptyOp::create(b, loc, indicesType, sizes);
    auto replaceBy = [&](Value values, Value indices) {
      SmallVector<Value> results;
      for (auto [result, want] : llvm::zip(ValueRange{values, indices}, op.getResultTypes()))
        results.push_back(result.getType() == want
                              ? result
                              : Value(tensor::CastOp::create(b, loc, want, result)));
      b.replaceOp(op, results);
      return success();
    };
    if (known && *known == 0) // nothing to keep (the checks above still hold)
      return replaceBy(valuesInit, indicesInit);
    // One iteration a row: every dim but the axis (one row of a 1-D input).
    SmallVector<OpFoldResult> bounds;
    SmallVector<int64_t> outer;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis) {
        outer.push_back(d);
        bounds.push_back(type.isDynamicDim(d) ? OpFoldResult(dims[d])
                                              : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
      }
    if (bounds.empty())
      bounds.push_back(b.getIndexAttr(1));
    auto forall = scf::ForallOp::create(b, loc, bounds, ValueRange{valuesInit, indicesInit},
                                        std::nullopt);
    SmallVector<Value> ivs = forall.getInductionVars();
    b.setInsertionPoint(forall.getTerminator());
    // The row's place in each result: the loop's indices, 0 along the axis.
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), rowSizes(rank, b.getIndexAttr(1)),
        strides(rank, b.getIndexAttr(1));
    for (auto [d, iv] : llvm::zip(outer, ivs))
      offsets[d] = iv;
    rowSizes[axis] = valuesType.isDynamicDim(axis) ? OpFoldResult(k)
                                                   : OpFoldResult(b.getIndexAttr(
                                                         valuesType.getDimSize(axis)));
    auto rowOf = [&](Value whole, RankedTensorType wholeType) -> Value {
      auto rowType = RankedTensorType::get({wholeType.getDimSize(axis)},
                                           wholeType.getElementType());
      return tensor::ExtractSliceOp::create(b, loc, rowType, whole, offsets, rowSizes, strides);
    };
    Value valuesRow = rowOf(forall.getRegionIterArgs()[0], valuesType);
    Value indicesRow = rowOf(forall.getRegionIterArgs()[1], indicesType);
    // (A run-time k of 0 scans nothing: no k-th best to compare with.)
    Value end = n;
    if (!known)
      end = arith::SelectOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k, zero), zero, n);
    RowScan scan(b, loc, x, ivs, axis, largest, k, end);
    auto [valuesKept, indicesKept] =
        known && *known <= kMaxKeptInRegisters
            ? scan.inRegisters(b, loc, valuesRow, indicesRow, *known)
            : scan.inRows(b, loc, valuesRow, indicesRow);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    Value kept[] = {valuesKept, indicesKept};
    for (int r = 0; r < 2; ++r)
      tensor::ParallelInsertSliceOp::create(b, loc, kept[r], forall.getRegionIterArgs()[r],
                                            offsets, rowSizes, strides);
    b.setInsertionPointAfter(forall);
    return replaceBy(forall.getResult(0), forall.getResult(1));
  }
};

} // namespace

void populateTopKToLoopsPatterns(RewritePatternSet &patterns) {
  patterns.add<TopKToRowScan>(patterns.getContext());
}

} // namespace kiln
