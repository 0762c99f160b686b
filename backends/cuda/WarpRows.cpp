//===- WarpRows.cpp - a row kernel's row onto the 32 lanes of a warp ------===//
//
// Implements kiln-gpu-warp-rows (Passes.td): a row kernel (an scf.parallel
// over rows whose body is linalg ops on the row) gets a lane dim of 32, so
// that each row runs on one warp: elementwise ops stride their elements
// over the lanes, reductions sum a partial in each lane and combine the
// partials with a butterfly of shuffles, after which every lane holds the
// row's result. With `emulate`, the lanes are a loop in one thread and
// the butterfly reads an array of partials, in the same order, so that
// the CPU computes what the GPU would.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_GPUWARPROWS
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {
namespace {

constexpr int64_t kWarp = 32;

/// How a linalg op of a row runs on the warp's lanes.
enum class Mode {
  Whole,       // every lane runs all of it (one element: a scalar of the row)
  Strided,     // element e of its iteration space on lane e % 32
  LaneReduced, // its one reduction dim strided, partials combined by shuffles
};

/// Who holds a buffer written in the row: every lane all of it, or each
/// lane the elements its strided writer wrote (the writer's loop ranges
/// and its map onto the buffer).
struct Holder {
  bool whole = true;
  SmallVector<int64_t> ranges;
  AffineMap map;
};

/// The memref `v` is a view of (through subviews, casts, reshapes).
static Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// The op combining a reduction's output with its element (the one user
/// of the output's block argument, yielded), or null.
static Operation *combinerOf(linalg::LinalgOp op, unsigned output) {
  BlockArgument out = op.getRegionOutputArgs()[output];
  if (!out.hasOneUse())
    return nullptr;
  Operation *c = *out.getUsers().begin();
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  if (c->getNumOperands() != 2 || c->getNumResults() != 1 || !c->getResult(0).hasOneUse() ||
      yield.getOperand(output) != c->getResult(0) || !arith::getNeutralElement(c))
    return nullptr;
  Type t = c->getResult(0).getType();
  if (!t.isF32() && !t.isInteger(32)) // what one shuffle moves
    return nullptr;
  return c;
}

/// Whether `op`'s reduction dims all follow its parallel dims (static
/// `ranges`); `outputs` and `reduced` count the elements of each group.
static bool reductionsLast(linalg::LinalgOp op, ArrayRef<int64_t> ranges, int64_t &outputs,
                           int64_t &reduced) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  size_t first = ranges.size() - op.getNumReductionLoops();
  outputs = reduced = 1;
  for (size_t d = 0; d < ranges.size(); ++d) {
    if ((d >= first) != (iterators[d] == utils::IteratorType::reduction))
      return false;
    (d < first ? outputs : reduced) *= ranges[d];
  }
  return true;
}

/// The mode of each linalg op in `row`'s body, or failure if the row
/// cannot run on a warp as it is.
static FailureOr<DenseMap<Operation *, Mode>> planRow(scf::ParallelOp row) {
  DenseMap<Operation *, Mode> modes;
  DenseMap<Value, Holder> holders;
  llvm::DenseSet<Value> writtenRoots; // memory other than the row's allocas
  int64_t widest = 0;
  for (Operation &op : row.getBody()->without_terminator()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp) {
      if (op.getNumRegions() == 0 && isMemoryEffectFree(&op))
        continue; // views, constants, index arithmetic: every lane
      if (isa<memref::AllocaOp>(op))
        continue;
      return failure();
    }
    if (!isa<linalg::GenericOp, linalg::FillOp>(op) || !linalgOp.hasPureBufferSemantics())
      return failure();
    SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return failure();
    int64_t size = 1;
    for (int64_t r : ranges)
      size *= r;
    Mode mode = size < 2 ? Mode::Whole : Mode::Strided;
    if (linalgOp.getNumReductionLoops()) {
      // Reductions last, onto one output element.
      int64_t outputs, reduced;
      if (!reductionsLast(linalgOp, ranges, outputs, reduced) || outputs != 1 ||
          !isa<linalg::GenericOp>(op))
        return failure();
      if (size >= 2) {
        mode = Mode::LaneReduced;
        for (unsigned i = 0; i < linalgOp.getNumDpsInits(); ++i)
          if (!combinerOf(linalgOp, i) ||
              !linalgOp.getDpsInits()[i].getDefiningOp<memref::AllocaOp>())
            return failure();
      }
    }
    if (mode != Mode::Whole)
      widest = std::max(widest, size);
    // An op reading, at other elements, memory it writes itself would
    // read another lane's writes.
    if (mode == Mode::Strided)
      for (OpOperand *input : linalgOp.getDpsInputOperands())
        for (OpOperand &init : linalgOp.getDpsInitsMutable())
          if (isa<MemRefType>(input->get().getType()) &&
              rootOf(input->get()) == rootOf(init.get()) &&
              (input->get() != init.get() || linalgOp.getMatchingIndexingMap(input) !=
                                                 linalgOp.getMatchingIndexingMap(&init)))
            return failure();
    // What it reads must be held by the lane reading it.
    for (OpOperand &operand : op.getOpOperands()) {
      Value v = operand.get();
      if (!isa<MemRefType>(v.getType()))
        continue;
      bool isInit = linalgOp.isDpsInit(&operand);
      if (isInit && (mode == Mode::LaneReduced ||
                     linalgOp.getMatchingBlockArgument(&operand).use_empty()))
        continue; // not read (a reduction reads its own lane's copy)
      auto held = holders.find(v);
      if (held == holders.end()) {
        if (writtenRoots.contains(rootOf(v)))
          return failure(); // another view of memory written in the row
        continue;
      }
      if (held->second.whole)
        continue;
      if (mode == Mode::Whole || held->second.ranges != ranges ||
          held->second.map != linalgOp.getMatchingIndexingMap(&operand))
        return failure();
    }
    for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
      Holder h;
      h.whole = mode != Mode::Strided;
      h.ranges = ranges;
      h.map = linalgOp.getMatchingIndexingMap(&init);
      holders[init.get()] = h;
      if (!init.get().getDefiningOp<memref::AllocaOp>())
        writtenRoots.insert(rootOf(init.get()));
    }
    modes[&op] = mode;
  }
  if (widest < kWarp)
    return failure(); // a thread a row is as good
  return modes;
}

/// Whether `op`, a reduction at the top of a function (no row kernel
/// around it), runs better with a warp an output element: its reduction
/// dims last, at least 32 elements each output, an input read along the
/// innermost reduction dim in its innermost dim (so that the lanes'
/// loads are coalesced; otherwise a thread an output element is).
static bool warpPerOutput(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t outputs, reduced;
  if (!op.getNumReductionLoops() || llvm::any_of(ranges, ShapedType::isDynamic) ||
      !reductionsLast(op, ranges, outputs, reduced) || reduced < kWarp)
    return false;
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
    if (!combinerOf(op, i))
      return false;
  AffineExpr innermost = getAffineDimExpr(ranges.size() - 1, op.getContext());
  bool along = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    for (Value init : op.getDpsInits())
      if (isa<MemRefType>(input->get().getType()) && rootOf(input->get()) == rootOf(init))
        return false; // it reads what lane 0 writes
    AffineMap map = op.getMatchingIndexingMap(input);
    for (auto [k, expr] : llvm::enumerate(map.getResults()))
      if (expr.isFunctionOfDim(ranges.size() - 1)) {
        if (k + 1 != map.getNumResults() || expr != innermost)
          return false;
        along = true;
      }
  }
  return along;
}

struct GpuWarpRowsPass : impl::GpuWarpRowsBase<GpuWarpRowsPass> {
  using GpuWarpRowsBase::GpuWarpRowsBase;

  /// The loop indices of linear element `e` of `ranges` (innermost fastest).
  static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value e,
                                        ArrayRef<int64_t> ranges) {
    SmallVector<Value> ivs(ranges.size());
    Value rest = e;
    for (size_t d = ranges.size(); d-- > 0;) {
      if (ranges[d] == 1) {
        ivs[d] = arith::ConstantIndexOp::create(b, loc, 0);
        continue;
      }
      Value r = arith::ConstantIndexOp::create(b, loc, ranges[d]);
      ivs[d] = d == 0 ? rest : b.createOrFold<arith::RemUIOp>(loc, rest, r);
      if (d > 0)
        rest = b.createOrFold<arith::DivUIOp>(loc, rest, r);
    }
    return ivs;
  }

  static SmallVector<Value> indices(OpBuilder &b, Location loc, AffineMap map,
                                    ArrayRef<Value> ivs) {
    SmallVector<OpFoldResult> dims(ivs.begin(), ivs.end());
    SmallVector<Value> result;
    for (AffineExpr expr : map.getResults()) {
      AffineMap one = AffineMap::get(map.getNumDims(), 0, expr);
      result.push_back(getValueOrCreateConstantIndexOp(
          b, loc, affine::makeComposedFoldedAffineApply(b, loc, one, dims)));
    }
    return result;
  }

  /// `op`'s payload at loop indices `ivs`: its operands loaded (those not
  /// already in `m`), its body cloned into `m`; the yielded values.
  static SmallVector<Value> payload(OpBuilder &b, Location loc, linalg::LinalgOp op,
                                    ArrayRef<Value> ivs, IRMapping &m) {
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (arg.use_empty() || m.contains(arg))
        continue;
      Value v = m.lookupOrDefault(operand.get());
      if (!isa<MemRefType>(v.getType())) {
        m.map(arg, v);
        continue;
      }
      m.map(arg, memref::LoadOp::create(
                     b, loc, v, indices(b, loc, op.getMatchingIndexingMap(&operand), ivs)));
    }
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        m.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, m);
    }
    SmallVector<Value> yielded;
    for (Value v : op.getBlock()->getTerminator()->getOperands())
      yielded.push_back(m.lookupOrDefault(v));
    return yielded;
  }

  static void store(OpBuilder &b, Location loc, linalg::LinalgOp op, ArrayRef<Value> values,
                    ArrayRef<Value> ivs, IRMapping &outer) {
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, values[i], outer.lookupOrDefault(init.get()),
                              indices(b, loc, op.getMatchingIndexingMap(&init), ivs));
  }

  /// Lane `lane`'s elements of a strided op.
  static void strided(OpBuilder &b, Location loc, linalg::LinalgOp op, Value lane,
                      IRMapping &outer) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t size = 1;
    for (int64_t r : ranges)
      size *= r;
    Value end = arith::ConstantIndexOp::create(b, loc, size);
    Value step = arith::ConstantIndexOp::create(b, loc, kWarp);
    scf::ForOp::create(b, loc, lane, end, step, ValueRange{},
                       [&](OpBuilder &fb, Location l, Value e, ValueRange) {
                         SmallVector<Value> ivs = delinearize(fb, l, e, ranges);
                         IRMapping m = outer;
                         SmallVector<Value> values = payload(fb, l, op, ivs, m);
                         store(fb, l, op, values, ivs, outer);
                         scf::YieldOp::create(fb, l);
                       });
  }

  /// Zeros for the loop indices of a row's reduction before its
  /// reduction dims (it reduces onto one element).
  static SmallVector<Value> zeroIvs(OpBuilder &b, Location loc, linalg::LinalgOp op) {
    SmallVector<Value> ivs(op.getNumLoops() - op.getNumReductionLoops());
    for (Value &iv : ivs)
      iv = arith::ConstantIndexOp::create(b, loc, 0);
    return ivs;
  }

  /// Lane `lane`'s partial of each output of a lane-reduced op at loop
  /// indices `outerIvs` before its reduction dims (its elements e = lane,
  /// lane + 32, ... of the linearised reduction dims).
  static SmallVector<Value> partials(OpBuilder &b, Location loc, linalg::LinalgOp op,
                                     Value lane, IRMapping &outer, ArrayRef<Value> outerIvs) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<Value> identities;
    for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
      Operation *c = combinerOf(op, i);
      identities.push_back(
          arith::ConstantOp::create(b, loc, *arith::getNeutralElement(c)).getResult());
    }
    size_t first = ranges.size() - op.getNumReductionLoops();
    ArrayRef<int64_t> reduced = ArrayRef<int64_t>(ranges).drop_front(first);
    int64_t count = 1;
    for (int64_t r : reduced)
      count *= r;
    Value end = arith::ConstantIndexOp::create(b, loc, count);
    Value step = arith::ConstantIndexOp::create(b, loc, kWarp);
    auto loop = scf::ForOp::create(
        b, loc, lane, end, step, identities,
        [&](OpBuilder &fb, Location l, Value e, ValueRange acc) {
          SmallVector<Value> ivs(outerIvs);
          llvm::append_range(ivs, delinearize(fb, l, e, reduced));
          IRMapping m = outer;
          for (auto [arg, a] : llvm::zip(op.getRegionOutputArgs(), acc))
            m.map(arg, a);
          scf::YieldOp::create(fb, l, payload(fb, l, op, ivs, m));
        });
    return loop.getResults();
  }

  /// `c` (a combiner of output block argument `out`) applied to `mine`
  /// (in `out`'s place) and `other`.
  static Value combine(OpBuilder &b, Operation *c, Value out, Value mine, Value other) {
    IRMapping m;
    for (Value operand : c->getOperands())
      m.map(operand, operand == out ? mine : other);
    return b.clone(*c, m)->getResult(0);
  }

  /// Each output's `total` combined into the output element (a row's: the
  /// lane's own copy).
  static void finish(OpBuilder &b, Location loc, linalg::LinalgOp op, ArrayRef<Value> totals,
                     IRMapping &outer, ArrayRef<Value> outerIvs) {
    SmallVector<Value> ivs(outerIvs);
    while (ivs.size() < op.getNumLoops())
      ivs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> results;
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      Value buffer = outer.lookupOrDefault(init.get());
      Value old = memref::LoadOp::create(b, loc, buffer,
                                         indices(b, loc, op.getMatchingIndexingMap(&init), ivs));
      results.push_back(combine(b, combinerOf(op, i), op.getRegionOutputArgs()[i], old, totals[i]));
    }
    store(b, loc, op, results, ivs, outer);
  }

  /// On the GPU: lane `lane`'s partials, then a butterfly of shuffles;
  /// into an output `shared` by the lanes lane 0 alone writes.
  static void laneReducedOnGpu(OpBuilder &b, Location loc, linalg::LinalgOp op, Value lane,
                               IRMapping &outer, ArrayRef<Value> outerIvs, bool shared) {
    SmallVector<Value> values = partials(b, loc, op, lane, outer, outerIvs);
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2)
      for (auto [i, v] : llvm::enumerate(values)) {
        auto shuffle = gpu::ShuffleOp::create(b, loc, v, offset, kWarp, gpu::ShuffleMode::XOR);
        v = combine(b, combinerOf(op, i), op.getRegionOutputArgs()[i], v,
                    shuffle.getShuffleResult());
      }
    if (!shared) {
      finish(b, loc, op, values, outer, outerIvs);
      return;
    }
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, c0);
    scf::IfOp::create(b, loc, first, [&](OpBuilder &ib, Location l) {
      finish(ib, l, op, values, outer, outerIvs);
      scf::YieldOp::create(ib, l);
    });
  }

  /// Emulated: the lanes' partials in an array, the butterfly over it
  /// (lane l combines its value with lane l ^ offset's, as the shuffle).
  static void laneReducedEmulated(OpBuilder &b, Location loc, linalg::LinalgOp op,
                                  IRMapping &outer, ArrayRef<Value> outerIvs) {
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value lanes = arith::ConstantIndexOp::create(b, loc, kWarp);
    unsigned n = op.getNumDpsInits();
    SmallVector<Value> now, next;
    for (unsigned i = 0; i < n; ++i) {
      auto type = MemRefType::get({kWarp}, combinerOf(op, i)->getResult(0).getType());
      now.push_back(memref::AllocaOp::create(b, loc, type));
      next.push_back(memref::AllocaOp::create(b, loc, type));
    }
    scf::ForOp::create(b, loc, c0, lanes, c1, ValueRange{},
                       [&](OpBuilder &fb, Location l, Value lane, ValueRange) {
                         for (auto [i, v] :
                              llvm::enumerate(partials(fb, l, op, lane, outer, outerIvs)))
                           memref::StoreOp::create(fb, l, v, now[i], lane);
                         scf::YieldOp::create(fb, l);
                       });
    for (int64_t offset = kWarp / 2; offset > 0; offset /= 2) {
      Value off = arith::ConstantIndexOp::create(b, loc, offset);
      scf::ForOp::create(b, loc, c0, lanes, c1, ValueRange{},
                         [&](OpBuilder &fb, Location l, Value lane, ValueRange) {
                           Value partner = arith::XOrIOp::create(fb, l, lane, off);
                           for (unsigned i = 0; i < n; ++i) {
                             Value mine = memref::LoadOp::create(fb, l, now[i], lane);
                             Value theirs = memref::LoadOp::create(fb, l, now[i], partner);
                             memref::StoreOp::create(
                                 fb, l,
                                 combine(fb, combinerOf(op, i), op.getRegionOutputArgs()[i],
                                         mine, theirs),
                                 next[i], lane);
                           }
                           scf::YieldOp::create(fb, l);
                         });
      std::swap(now, next);
    }
    SmallVector<Value> totals;
    for (Value partial : now)
      totals.push_back(memref::LoadOp::create(b, loc, partial, c0));
    finish(b, loc, op, totals, outer, outerIvs);
  }

  /// The row's ops, with `lane` the lane (null: emulated, lanes a loop).
  void emitRow(OpBuilder &b, Location loc, scf::ParallelOp row,
               const DenseMap<Operation *, Mode> &modes, Value lane, IRMapping &outer) {
    for (Operation &op : row.getBody()->without_terminator()) {
      auto mode = modes.find(&op);
      if (mode == modes.end() || mode->second == Mode::Whole) {
        b.clone(op, outer);
        continue;
      }
      auto linalgOp = cast<linalg::LinalgOp>(op);
      if (mode->second == Mode::LaneReduced) {
        SmallVector<Value> zeros = zeroIvs(b, loc, linalgOp);
        if (lane)
          laneReducedOnGpu(b, loc, linalgOp, lane, outer, zeros, /*shared=*/false);
        else
          laneReducedEmulated(b, loc, linalgOp, outer, zeros);
        continue;
      }
      if (lane) {
        strided(b, loc, linalgOp, lane, outer);
        continue;
      }
      Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
      Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
      Value lanes = arith::ConstantIndexOp::create(b, loc, kWarp);
      scf::ForOp::create(b, loc, c0, lanes, c1, ValueRange{},
                         [&](OpBuilder &fb, Location l, Value emulatedLane, ValueRange) {
                           strided(fb, l, linalgOp, emulatedLane, outer);
                           scf::YieldOp::create(fb, l);
                         });
    }
  }

  void rewriteRow(scf::ParallelOp row, const DenseMap<Operation *, Mode> &modes) {
    OpBuilder b(row);
    Location loc = row.getLoc();
    IRMapping outer;
    if (emulate) {
      scf::ParallelOp::create(b, loc, row.getLowerBound(), row.getUpperBound(), row.getStep(),
                              [&](OpBuilder &nb, Location l, ValueRange ivs) {
                                for (auto [from, to] : llvm::zip(row.getInductionVars(), ivs))
                                  outer.map(from, to);
                                emitRow(nb, l, row, modes, Value(), outer);
                              });
    } else {
      SmallVector<Value> lbs(row.getLowerBound()), ubs(row.getUpperBound()),
          steps(row.getStep());
      lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, kWarp));
      steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
      scf::ParallelOp::create(b, loc, lbs, ubs, steps,
                              [&](OpBuilder &nb, Location l, ValueRange ivs) {
                                for (auto [from, to] : llvm::zip(row.getInductionVars(), ivs))
                                  outer.map(from, to);
                                emitRow(nb, l, row, modes, ivs.back(), outer);
                              });
    }
    row.erase();
  }

  /// A top-level reduction as a loop over its output elements, each on
  /// a warp (lane 0 writes), or on one thread playing the lanes.
  void rewriteReduction(linalg::GenericOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    size_t first = ranges.size() - op.getNumReductionLoops();
    SmallVector<Value> lbs, ubs, steps;
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    for (size_t d = 0; d < first; ++d) {
      lbs.push_back(c0);
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, ranges[d]));
      steps.push_back(c1);
    }
    if (!emulate) {
      lbs.push_back(c0);
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, kWarp));
      steps.push_back(c1);
    }
    if (lbs.empty()) { // a reduction onto one element, emulated
      lbs.push_back(c0);
      ubs.push_back(c1);
      steps.push_back(c1);
    }
    IRMapping outer;
    scf::ParallelOp::create(b, loc, lbs, ubs, steps,
                            [&](OpBuilder &nb, Location l, ValueRange ivs) {
                              SmallVector<Value> at(ivs.take_front(first));
                              if (emulate)
                                laneReducedEmulated(nb, l, op, outer, at);
                              else
                                laneReducedOnGpu(nb, l, op, ivs.back(), outer, at,
                                                 /*shared=*/true);
                            });
    op.erase();
  }

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> rows;
    for (Block &block : getOperation().getBody())
      for (Operation &op : block)
        if (auto row = dyn_cast<scf::ParallelOp>(op); row && row.getNumResults() == 0)
          rows.push_back(row);
    for (scf::ParallelOp row : rows) {
      auto modes = planRow(row);
      if (succeeded(modes))
        rewriteRow(row, *modes);
    }
    SmallVector<linalg::GenericOp> reductions;
    for (Block &block : getOperation().getBody())
      for (auto op : block.getOps<linalg::GenericOp>())
        if (warpPerOutput(op))
          reductions.push_back(op);
    for (linalg::GenericOp op : reductions)
      rewriteReduction(op);
  }
};

} // namespace
} // namespace kiln::cuda
