//===- WarpRows.cpp - a row kernel's row onto the 32 lanes of a warp ------===//
//
// Implements kiln-gpu-warp-rows (Passes.td): a row kernel (an scf.parallel
// over rows whose body is linalg ops on the row) gets a lane dim of 32, so
// that each row runs on one warp: elementwise ops stride their elements
// over the lanes, reductions sum a partial in each lane and combine the
// partials with a butterfly of shuffles, after which every lane holds the
// row's result. With `emulate`, the lanes are a loop in one thread and
// the butterfly reads an array of partials, in the same order, so that
// the CPU computes what the GPU would. A row's temporary that only strided
// ops touch is lane-private: each lane keeps its own elements (the k-th in
// slot k), 1/32 of the row, and the lane loops have a constant trip count
// so that the slots can live in registers. A long row (16 elements a
// thread of a block) runs on a whole block the same way, the warps'
// totals of each reduction meeting in shared memory after a barrier.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Passes.h"
#include "backends/cuda/RowPlan.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_GPUWARPROWS
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {
namespace {

/// Elements a thread at least, for a reduction's output to take a block.
constexpr int64_t kBlockReduceMinPerThread = 16;
/// Marks a lane loop until the unrolling.
constexpr llvm::StringLiteral kLaneLoop = "kiln.lane_loop";

struct GpuWarpRowsPass : impl::GpuWarpRowsBase<GpuWarpRowsPass> {
  using GpuWarpRowsBase::GpuWarpRowsBase;

  /// Where a lane-private element e = lane + 32k lives: slot k of the
  /// lane's buffer (emulated: row `lane` of the lanes' buffer).
  struct Slot {
    Value lane;
    Value k;
  };

  /// The row being rewritten's lane-private allocas (as in the input).
  llvm::DenseSet<Value> lanePrivate;
  /// The threads a row of the row kernel being rewritten runs on: a
  /// warp's 32, or a block's (`blockSize`) for a long row.
  int64_t rowThreads = kWarp;

  /// Whether `elements` a row or an output are enough for a block of
  /// `blockSize` threads (at least 16 each) and the block size is one a
  /// block reduction takes (a multiple of 32 from 64 to 1024).
  bool blockTakes(int64_t elements) const {
    return blockSize >= 2 * kWarp && blockSize <= 1024 && blockSize % kWarp == 0 &&
           elements >= kBlockReduceMinPerThread * blockSize;
  }

  /// The loop indices of linear element `e` (< the product of `ranges`)
  /// of `ranges`, innermost fastest.
  static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value e,
                                        ArrayRef<int64_t> ranges) {
    SmallVector<Value> ivs(ranges.size());
    size_t outermost = 0; // of the dims that vary: what is left of e
    while (outermost + 1 < ranges.size() && ranges[outermost] == 1)
      ++outermost;
    Value rest = e;
    for (size_t d = ranges.size(); d-- > 0;) {
      if (d == outermost) {
        ivs[d] = rest;
      } else if (d < outermost || ranges[d] == 1) {
        ivs[d] = arith::ConstantIndexOp::create(b, loc, 0);
      } else {
        Value r = arith::ConstantIndexOp::create(b, loc, ranges[d]);
        ivs[d] = b.createOrFold<arith::RemUIOp>(loc, rest, r);
        rest = b.createOrFold<arith::DivUIOp>(loc, rest, r);
      }
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

  /// The indices `op` reads or writes `operand` at, at loop indices `ivs`
  /// (lane-private: its slot).
  SmallVector<Value> access(OpBuilder &b, Location loc, linalg::LinalgOp op, OpOperand &operand,
                            ArrayRef<Value> ivs, Slot slot) {
    if (!lanePrivate.contains(operand.get()))
      return indices(b, loc, op.getMatchingIndexingMap(&operand), ivs);
    assert(slot.k && "a lane-private buffer outside a lane loop");
    if (emulate)
      return {slot.lane, slot.k};
    return {slot.k};
  }

  /// `op`'s payload at loop indices `ivs`: its operands loaded (those not
  /// already in `m`), its body cloned into `m`; the yielded values.
  SmallVector<Value> payload(OpBuilder &b, Location loc, linalg::LinalgOp op,
                             ArrayRef<Value> ivs, Slot slot, IRMapping &m) {
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (arg.use_empty() || m.contains(arg))
        continue;
      Value v = m.lookupOrDefault(operand.get());
      if (!isa<MemRefType>(v.getType())) {
        m.map(arg, v);
        continue;
      }
      m.map(arg, memref::LoadOp::create(b, loc, v, access(b, loc, op, operand, ivs, slot)));
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

  void store(OpBuilder &b, Location loc, linalg::LinalgOp op, ArrayRef<Value> values,
             ArrayRef<Value> ivs, Slot slot, IRMapping &outer) {
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, values[i], outer.lookupOrDefault(init.get()),
                              access(b, loc, op, init, ivs, slot));
  }

  /// Lane `lane`'s elements e = lane + `stride` k of `count` (the stride:
  /// the lanes, 32, or a block's threads), k from 0 to ceil(count /
  /// stride): a loop of a constant trip count (it unrolls, and the
  /// lane-private slots it indexes become registers), the last step
  /// masked where the stride does not divide `count`. `body(b, loc, e, k,
  /// acc)` returns the next values of the loop's `inits`; the last ones.
  static SmallVector<Value>
  laneLoop(OpBuilder &b, Location loc, Value lane, int64_t count, int64_t stride,
           ValueRange inits,
           function_ref<SmallVector<Value>(OpBuilder &, Location, Value, Value, ValueRange)>
               body) {
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value steps = arith::ConstantIndexOp::create(b, loc, llvm::divideCeil(count, stride));
    Value step = arith::ConstantIndexOp::create(b, loc, stride);
    Value end = arith::ConstantIndexOp::create(b, loc, count);
    auto loop = scf::ForOp::create(
        b, loc, c0, steps, c1, inits, [&](OpBuilder &fb, Location l, Value k, ValueRange acc) {
          Value e = arith::AddIOp::create(fb, l, lane, arith::MulIOp::create(fb, l, k, step));
          if (count % stride == 0) {
            scf::YieldOp::create(fb, l, body(fb, l, e, k, acc));
            return;
          }
          Value inside = arith::CmpIOp::create(fb, l, arith::CmpIPredicate::ult, e, end);
          auto masked = scf::IfOp::create(
              fb, l, inside,
              [&](OpBuilder &ib, Location il) {
                scf::YieldOp::create(ib, il, body(ib, il, e, k, acc));
              },
              [&](OpBuilder &ib, Location il) { scf::YieldOp::create(ib, il, acc); });
          scf::YieldOp::create(fb, l, masked.getResults());
        });
    loop->setAttr(kLaneLoop, b.getUnitAttr());
    return loop.getResults();
  }

  /// Lane `lane`'s elements of a strided op.
  void strided(OpBuilder &b, Location loc, linalg::LinalgOp op, Value lane, IRMapping &outer) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t size = 1;
    for (int64_t r : ranges)
      size *= r;
    laneLoop(b, loc, lane, size, rowThreads, ValueRange{},
             [&](OpBuilder &fb, Location l, Value e, Value k, ValueRange) {
               SmallVector<Value> ivs = delinearize(fb, l, e, ranges);
               IRMapping m = outer;
               SmallVector<Value> values = payload(fb, l, op, ivs, Slot{lane, k}, m);
               store(fb, l, op, values, ivs, Slot{lane, k}, outer);
               return SmallVector<Value>{};
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

  /// The combiner of each output of a lane-reduced op.
  static SmallVector<Operation *> combinersOf(linalg::LinalgOp op) {
    SmallVector<Operation *> combiners;
    for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
      combiners.push_back(combinerOf(op, i));
    return combiners;
  }

  /// Lane `lane`'s partial of each output of a lane-reduced op at loop
  /// indices `outerIvs` before its reduction dims (its elements e = lane,
  /// lane + `threads`, ... of the linearised reduction dims; `threads`:
  /// 32, a warp, or a block's).
  SmallVector<Value> partials(OpBuilder &b, Location loc, linalg::LinalgOp op,
                              ArrayRef<Operation *> combiners, Value lane, IRMapping &outer,
                              ArrayRef<Value> outerIvs, int64_t threads) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<Value> identities;
    for (Operation *c : combiners)
      identities.push_back(
          arith::ConstantOp::create(b, loc, *arith::getNeutralElement(c)).getResult());
    size_t first = ranges.size() - op.getNumReductionLoops();
    ArrayRef<int64_t> reduced = ArrayRef<int64_t>(ranges).drop_front(first);
    int64_t count = 1;
    for (int64_t r : reduced)
      count *= r;
    return laneLoop(b, loc, lane, count, threads, identities,
                    [&](OpBuilder &fb, Location l, Value e, Value k, ValueRange acc) {
                      SmallVector<Value> ivs(outerIvs);
                      llvm::append_range(ivs, delinearize(fb, l, e, reduced));
                      IRMapping m = outer;
                      for (auto [arg, a] : llvm::zip(op.getRegionOutputArgs(), acc))
                        m.map(arg, a);
                      return payload(fb, l, op, ivs, Slot{lane, k}, m);
                    });
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
  void finish(OpBuilder &b, Location loc, linalg::LinalgOp op, ArrayRef<Operation *> combiners,
              ArrayRef<Value> totals, IRMapping &outer, ArrayRef<Value> outerIvs) {
    SmallVector<Value> ivs(outerIvs);
    while (ivs.size() < op.getNumLoops())
      ivs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> results;
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      Value buffer = outer.lookupOrDefault(init.get());
      Value old = memref::LoadOp::create(b, loc, buffer, access(b, loc, op, init, ivs, Slot{}));
      results.push_back(combine(b, combiners[i], op.getRegionOutputArgs()[i], old, totals[i]));
    }
    store(b, loc, op, results, ivs, Slot{}, outer);
  }

  /// On the GPU: lane `lane`'s partials, then a butterfly of shuffles;
  /// into an output `shared` by the lanes lane 0 alone writes. With
  /// `threads` > 32 (a block; `lane` the thread), each warp's lane 0
  /// writes its total to a workgroup buffer, and after a barrier thread 0
  /// (a shared output) or every thread (its own copy: a long row's
  /// reduction, whose total the row's later ops read in every thread)
  /// combines the warps' totals in order into the output.
  void laneReducedOnGpu(OpBuilder &b, Location loc, linalg::LinalgOp op, Value lane,
                        IRMapping &outer, ArrayRef<Value> outerIvs, bool shared,
                        int64_t threads = kWarp) {
    SmallVector<Operation *> combiners = combinersOf(op);
    SmallVector<Value> values = partials(b, loc, op, combiners, lane, outer, outerIvs, threads);
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2)
      for (auto [i, v] : llvm::enumerate(values)) {
        auto shuffle = gpu::ShuffleOp::create(b, loc, v, offset, kWarp, gpu::ShuffleMode::XOR);
        v = combine(b, combiners[i], op.getRegionOutputArgs()[i], v, shuffle.getShuffleResult());
      }
    // `finish` with `totals`: by thread 0 alone where the output is shared.
    using Totals = function_ref<SmallVector<Value>(OpBuilder &, Location)>;
    auto finishBy = [&](OpBuilder &fb, Location l, Totals totals) {
      if (!shared) {
        finish(fb, l, op, combiners, totals(fb, l), outer, outerIvs);
        return;
      }
      Value c0 = arith::ConstantIndexOp::create(fb, l, 0);
      Value first = arith::CmpIOp::create(fb, l, arith::CmpIPredicate::eq, lane, c0);
      scf::IfOp::create(fb, l, first, [&](OpBuilder &ib, Location il) {
        finish(ib, il, op, combiners, totals(ib, il), outer, outerIvs);
        scf::YieldOp::create(ib, il);
      });
    };
    if (threads <= kWarp) {
      finishBy(b, loc, [&](OpBuilder &, Location) { return values; });
      return;
    }
    int64_t warps = threads / kWarp;
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value warpSize = arith::ConstantIndexOp::create(b, loc, kWarp);
    Value warp = arith::DivUIOp::create(b, loc, lane, warpSize);
    Value inWarp = arith::RemUIOp::create(b, loc, lane, warpSize);
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    SmallVector<Value> buffers;
    for (Operation *c : combiners)
      buffers.push_back(memref::AllocaOp::create(
          b, loc,
          MemRefType::get({warps}, c->getResult(0).getType(), MemRefLayoutAttrInterface{},
                          workgroup)));
    Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, inWarp, c0);
    scf::IfOp::create(b, loc, leader, [&](OpBuilder &ib, Location l) {
      for (auto [v, buffer] : llvm::zip(values, buffers))
        memref::StoreOp::create(ib, l, v, buffer, warp);
      scf::YieldOp::create(ib, l);
    });
    gpu::BarrierOp::create(b, loc);
    finishBy(b, loc, [&](OpBuilder &fb, Location l) {
      Value zero = arith::ConstantIndexOp::create(fb, l, 0);
      SmallVector<Value> sums;
      for (auto [i, buffer] : llvm::enumerate(buffers)) {
        Value sum = memref::LoadOp::create(fb, l, buffer, zero);
        for (int64_t w = 1; w < warps; ++w) {
          Value at = arith::ConstantIndexOp::create(fb, l, w);
          sum = combine(fb, combiners[i], op.getRegionOutputArgs()[i], sum,
                        memref::LoadOp::create(fb, l, buffer, at));
        }
        sums.push_back(sum);
      }
      return sums;
    });
  }

  /// Emulated: the lanes' partials in an array, the butterfly over it
  /// (lane l combines its value with lane l ^ offset's, as the shuffle);
  /// with `threads` > 32 (a block), the warps' totals then combined in
  /// order, as thread 0 does on the GPU.
  void laneReducedEmulated(OpBuilder &b, Location loc, linalg::LinalgOp op, IRMapping &outer,
                           ArrayRef<Value> outerIvs, int64_t threads = kWarp) {
    SmallVector<Operation *> combiners = combinersOf(op);
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value lanes = arith::ConstantIndexOp::create(b, loc, threads);
    SmallVector<Value> now, next;
    for (Operation *c : combiners) {
      auto type = MemRefType::get({threads}, c->getResult(0).getType());
      now.push_back(memref::AllocaOp::create(b, loc, type));
      next.push_back(memref::AllocaOp::create(b, loc, type));
    }
    scf::ForOp::create(
        b, loc, c0, lanes, c1, ValueRange{},
        [&](OpBuilder &fb, Location l, Value lane, ValueRange) {
          for (auto [i, v] :
               llvm::enumerate(partials(fb, l, op, combiners, lane, outer, outerIvs, threads)))
            memref::StoreOp::create(fb, l, v, now[i], lane);
          scf::YieldOp::create(fb, l);
        });
    for (int64_t offset = kWarp / 2; offset > 0; offset /= 2) {
      Value off = arith::ConstantIndexOp::create(b, loc, offset);
      scf::ForOp::create(b, loc, c0, lanes, c1, ValueRange{},
                         [&](OpBuilder &fb, Location l, Value lane, ValueRange) {
                           Value partner = arith::XOrIOp::create(fb, l, lane, off);
                           for (auto [i, c] : llvm::enumerate(combiners)) {
                             Value mine = memref::LoadOp::create(fb, l, now[i], lane);
                             Value theirs = memref::LoadOp::create(fb, l, now[i], partner);
                             memref::StoreOp::create(
                                 fb, l,
                                 combine(fb, c, op.getRegionOutputArgs()[i], mine, theirs),
                                 next[i], lane);
                           }
                           scf::YieldOp::create(fb, l);
                         });
      std::swap(now, next);
    }
    SmallVector<Value> totals;
    for (auto [i, partial] : llvm::enumerate(now)) {
      Value total = memref::LoadOp::create(b, loc, partial, c0);
      for (int64_t w = 1; w < threads / kWarp; ++w) {
        Value at = arith::ConstantIndexOp::create(b, loc, w * kWarp);
        total = combine(b, combiners[i], op.getRegionOutputArgs()[i], total,
                        memref::LoadOp::create(b, loc, partial, at));
      }
      totals.push_back(total);
    }
    finish(b, loc, op, combiners, totals, outer, outerIvs);
  }

  /// Emulated, the host runs the rows (or outputs) of `loop` one after
  /// another: the stack buffers of its body (a row's temporaries, the
  /// lanes' partials: static, and written by each row before it reads
  /// them) are allocated once before it, not once a row. The host
  /// lowering's kiln-scope-loop-allocas would free them each row anyway
  /// (what keeps rows left on one thread within the stack); hoisting
  /// spares the emulation a stack save and restore a row.
  static void hoistStackBuffers(scf::ParallelOp loop) {
    SmallVector<memref::AllocaOp> allocas(loop.getBody()->getOps<memref::AllocaOp>());
    for (memref::AllocaOp alloca : allocas)
      if (alloca->getNumOperands() == 0)
        alloca->moveBefore(loop);
  }

  /// The row's ops, with `lane` the lane (null: emulated, lanes a loop).
  void emitRow(OpBuilder &b, Location loc, scf::ParallelOp row,
               const DenseMap<Operation *, Mode> &modes, Value lane, IRMapping &outer) {
    for (Operation &op : row.getBody()->without_terminator()) {
      if (auto alloca = dyn_cast<memref::AllocaOp>(op);
          alloca && lanePrivate.contains(alloca.getResult())) {
        // Slots for a lane's elements (emulated: for each lane's).
        MemRefType type = alloca.getType();
        int64_t slots = llvm::divideCeil(type.getNumElements(), rowThreads);
        SmallVector<int64_t> shape;
        if (!lane)
          shape.push_back(rowThreads);
        shape.push_back(slots);
        Value own = memref::AllocaOp::create(
            b, alloca.getLoc(), MemRefType::get(shape, type.getElementType()));
        outer.map(alloca.getResult(), own);
        continue;
      }
      auto mode = modes.find(&op);
      if (mode == modes.end() || mode->second == Mode::Whole) {
        b.clone(op, outer);
        continue;
      }
      auto linalgOp = cast<linalg::LinalgOp>(op);
      if (mode->second == Mode::LaneReduced) {
        SmallVector<Value> zeros = zeroIvs(b, loc, linalgOp);
        if (lane)
          laneReducedOnGpu(b, loc, linalgOp, lane, outer, zeros, /*shared=*/false, rowThreads);
        else
          laneReducedEmulated(b, loc, linalgOp, outer, zeros, rowThreads);
        continue;
      }
      if (lane) {
        strided(b, loc, linalgOp, lane, outer);
        continue;
      }
      Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
      Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
      Value lanes = arith::ConstantIndexOp::create(b, loc, rowThreads);
      scf::ForOp::create(b, loc, c0, lanes, c1, ValueRange{},
                         [&](OpBuilder &fb, Location l, Value emulatedLane, ValueRange) {
                           strided(fb, l, linalgOp, emulatedLane, outer);
                           scf::YieldOp::create(fb, l);
                         });
    }
  }

  void rewriteRow(scf::ParallelOp row, const RowPlan &plan) {
    const DenseMap<Operation *, Mode> &modes = plan.modes;
    lanePrivate = plan.lanePrivate;
    rowThreads = blockTakes(plan.widest) ? blockSize : kWarp;
    OpBuilder b(row);
    Location loc = row.getLoc();
    IRMapping outer;
    if (emulate) {
      auto emulated = scf::ParallelOp::create(
          b, loc, row.getLowerBound(), row.getUpperBound(), row.getStep(),
          [&](OpBuilder &nb, Location l, ValueRange ivs) {
            for (auto [from, to] : llvm::zip(row.getInductionVars(), ivs))
              outer.map(from, to);
            emitRow(nb, l, row, modes, Value(), outer);
          });
      hoistStackBuffers(emulated);
    } else {
      SmallVector<Value> lbs(row.getLowerBound()), ubs(row.getUpperBound()),
          steps(row.getStep());
      lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, rowThreads));
      steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
      scf::ParallelOp::create(b, loc, lbs, ubs, steps,
                              [&](OpBuilder &nb, Location l, ValueRange ivs) {
                                for (auto [from, to] : llvm::zip(row.getInductionVars(), ivs))
                                  outer.map(from, to);
                                emitRow(nb, l, row, modes, ivs.back(), outer);
                              });
    }
    row.erase();
    lanePrivate.clear();
    rowThreads = kWarp;
  }

  /// The threads an output element of top-level reduction `op` takes: a
  /// block's if each of them has enough elements to reduce, else a warp.
  int64_t threadsPerOutput(linalg::GenericOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t reduced = 1;
    for (int64_t r : ArrayRef<int64_t>(ranges).take_back(op.getNumReductionLoops()))
      reduced *= r;
    return blockTakes(reduced) ? blockSize : kWarp;
  }

  /// A top-level reduction as a loop over its output elements, each on
  /// a warp or a block (thread 0 writes), or on one thread playing them.
  void rewriteReduction(linalg::GenericOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    size_t first = ranges.size() - op.getNumReductionLoops();
    int64_t threads = threadsPerOutput(op);
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
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, threads));
      steps.push_back(c1);
    }
    if (lbs.empty()) { // a reduction onto one element, emulated
      lbs.push_back(c0);
      ubs.push_back(c1);
      steps.push_back(c1);
    }
    IRMapping outer;
    auto outputs = scf::ParallelOp::create(
        b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location l, ValueRange ivs) {
          SmallVector<Value> at(ivs.take_front(first));
          if (emulate)
            laneReducedEmulated(nb, l, op, outer, at, threads);
          else
            laneReducedOnGpu(nb, l, op, ivs.back(), outer, at, /*shared=*/true, threads);
        });
    if (emulate)
      hoistStackBuffers(outputs);
    op.erase();
  }

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> rows;
    for (Block &block : getOperation().getBody())
      for (Operation &op : block)
        if (auto row = dyn_cast<scf::ParallelOp>(op); row && row.getNumResults() == 0)
          rows.push_back(row);
    for (scf::ParallelOp row : rows) {
      FailureOr<RowPlan> plan = planRow(row);
      if (succeeded(plan))
        rewriteRow(row, *plan);
    }
    SmallVector<linalg::GenericOp> reductions;
    for (Block &block : getOperation().getBody())
      for (auto op : block.getOps<linalg::GenericOp>())
        if (warpPerOutput(op))
          reductions.push_back(op);
    for (linalg::GenericOp op : reductions)
      rewriteReduction(op);
    // Short lane loops unrolled: each slot index a constant (registers).
    SmallVector<scf::ForOp> laneLoops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kLaneLoop))
        laneLoops.push_back(loop);
    });
    for (scf::ForOp loop : laneLoops) {
      loop->removeAttr(kLaneLoop);
      std::optional<APInt> steps = loop.getStaticTripCount();
      if (steps && steps->getZExtValue() <= static_cast<uint64_t>(unrollSteps) &&
          failed(loopUnrollFull(loop)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace kiln::cuda
