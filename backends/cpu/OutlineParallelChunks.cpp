//===- OutlineParallelChunks.cpp - scf.parallel -> chunk functions --------===//
//
// Implements kiln-outline-parallel-chunks: the first half of running
// generated loop nests on the runtime's threads (docs/Architecture.md,
// "One thread pool"). A chunk function runs a contiguous range of the
// linearised leading dims of one parallel loop; the call over the whole
// range stays a valid sequential program until kiln-pack-chunk-calls
// hands it to the runtime.
//
//===----------------------------------------------------------------------===//

#include "backends/cpu/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln::cpu {
#define GEN_PASS_DEF_OUTLINEPARALLELCHUNKS
#include "backends/cpu/Passes.h.inc"
} // namespace kiln::cpu

using namespace mlir;
using kiln::cpu::kChunkPrefix;

namespace {

constexpr int64_t kUnknownTripCount = 256;
constexpr int64_t kWorkCap = int64_t(1) << 40;

int64_t saturatingMul(int64_t a, int64_t b) {
  return (b != 0 && a > kWorkCap / b) ? kWorkCap : a * b;
}

int64_t tripCount(Value lb, Value ub, Value step) {
  auto l = getConstantIntValue(lb), u = getConstantIntValue(ub), s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return kUnknownTripCount;
  return *u <= *l ? 0 : (*u - *l + *s - 1) / *s;
}

int64_t blockWork(Block &block);

/// Iterations of the innermost bodies of `op`'s loop nest (the largest
/// nest where there are several).
int64_t opWork(Operation &op) {
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return saturatingMul(tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()),
                         blockWork(*loop.getBody()));
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    int64_t trips = 1;
    for (auto [l, u, s] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      trips = saturatingMul(trips, tripCount(l, u, s));
    return saturatingMul(trips, blockWork(*loop.getBody()));
  }
  int64_t work = 1;
  for (Region &region : op.getRegions())
    for (Block &block : region)
      work = std::max(work, blockWork(block));
  return work;
}

int64_t blockWork(Block &block) {
  int64_t work = 1;
  for (Operation &op : block)
    work = std::max(work, opWork(op));
  return work;
}

/// Chunks run on worker threads, which have no allocator or library-call
/// context: a body that allocates or calls stays sequential.
bool isOutlinable(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return false;
  WalkResult walk = loop.getBody()->walk([](Operation *op) {
    if (isa<CallOpInterface, memref::AllocOp, memref::DeallocOp, memref::ReallocOp>(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// A value the chunk re-creates rather than receives: a constant or a
/// global's address.
bool isClonable(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 && isPure(def);
}

/// ceil((ub - lb) / step), for the non-negative ranges linalg's loops have.
Value buildTripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
  if (isConstantIntValue(step, 1))
    return span;
  Value one = b.createOrFold<arith::ConstantIndexOp>(loc, 1);
  Value rounded = b.createOrFold<arith::AddIOp>(
      loc, span, b.createOrFold<arith::SubIOp>(loc, step, one));
  return b.createOrFold<arith::DivUIOp>(loc, rounded, step);
}

/// Outlines `loop` into a new function of `module` and replaces it with a
/// call over the whole range.
void outline(scf::ParallelOp loop, SymbolTable &symbols, int64_t &counter) {
  Location loc = loop.getLoc();
  size_t rank = loop.getNumLoops();

  SetVector<Value> used;
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  for (Value v : llvm::concat<Value>(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
    used.insert(v);
  SmallVector<Value> captures;
  SmallVector<Operation *> clones;
  for (Value v : used) {
    if (isClonable(v)) {
      if (!llvm::is_contained(clones, v.getDefiningOp()))
        clones.push_back(v.getDefiningOp());
    } else {
      captures.push_back(v);
    }
  }

  // The chunk function.
  OpBuilder b(loop->getParentOfType<ModuleOp>().getBodyRegion());
  b.setInsertionPointToEnd(loop->getParentOfType<ModuleOp>().getBody());
  SmallVector<Type> argTypes = llvm::map_to_vector(captures, [](Value v) { return v.getType(); });
  argTypes.append({b.getIndexType(), b.getIndexType()});
  auto chunk = func::FuncOp::create(b, loc, (kChunkPrefix + Twine(counter++)).str(),
                                    b.getFunctionType(argTypes, {}));
  chunk.setPrivate();
  symbols.insert(chunk);
  Block *entry = chunk.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping map;
  for (Operation *op : clones)
    b.clone(*op, map);
  for (auto [i, v] : llvm::enumerate(captures))
    map.map(v, entry->getArgument(i));
  Value begin = entry->getArgument(captures.size());
  Value end = entry->getArgument(captures.size() + 1);
  auto mapped = [&](ValueRange values) {
    return llvm::map_to_vector(values, [&](Value v) { return map.lookup(v); });
  };
  SmallVector<Value> lbs = mapped(loop.getLowerBound()), ubs = mapped(loop.getUpperBound()),
                     steps = mapped(loop.getStep());
  size_t linear = rank == 1 ? 1 : rank - 1; // dims spread over threads
  SmallVector<Value> counts;
  for (size_t d = 0; d < linear; ++d)
    counts.push_back(buildTripCount(b, loc, lbs[d], ubs[d], steps[d]));

  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto cloneBody = [&](OpBuilder &inner) {
    for (Operation &op : loop.getBody()->without_terminator())
      inner.clone(op, map);
  };
  scf::ForOp::create(b, loc, begin, end, one, ValueRange{},
                     [&](OpBuilder &ob, Location l, Value index, ValueRange) {
    // Delinearise `index` over the leading dims, innermost fastest.
    Value rest = index;
    for (size_t d = linear; d-- > 0;) {
      Value position = rest;
      if (d > 0) {
        position = ob.createOrFold<arith::RemUIOp>(l, rest, counts[d]);
        rest = ob.createOrFold<arith::DivUIOp>(l, rest, counts[d]);
      }
      Value iv = ob.createOrFold<arith::AddIOp>(
          l, lbs[d], ob.createOrFold<arith::MulIOp>(l, position, steps[d]));
      map.map(loop.getInductionVars()[d], iv);
    }
    if (rank == 1) {
      cloneBody(ob);
    } else {
      scf::ForOp::create(ob, l, lbs[rank - 1], ubs[rank - 1], steps[rank - 1], ValueRange{},
                         [&](OpBuilder &ib, Location, Value iv, ValueRange) {
        map.map(loop.getInductionVars()[rank - 1], iv);
        cloneBody(ib);
        scf::YieldOp::create(ib, l);
      });
    }
    scf::YieldOp::create(ob, l);
  });
  func::ReturnOp::create(b, loc);

  // The call over the whole range, where the loop was.
  b.setInsertionPoint(loop);
  Value total = b.createOrFold<arith::ConstantIndexOp>(loc, 1);
  for (size_t d = 0; d < linear; ++d)
    total = b.createOrFold<arith::MulIOp>(
        loc, total,
        buildTripCount(b, loc, loop.getLowerBound()[d], loop.getUpperBound()[d], loop.getStep()[d]));
  SmallVector<Value> operands(captures.begin(), captures.end());
  operands.push_back(b.createOrFold<arith::ConstantIndexOp>(loc, 0));
  operands.push_back(total);
  func::CallOp::create(b, loc, chunk, operands);
  loop.erase();
}

struct OutlineParallelChunks
    : kiln::cpu::impl::OutlineParallelChunksBase<OutlineParallelChunks> {
  using OutlineParallelChunksBase::OutlineParallelChunksBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() && isOutlinable(loop) &&
          opWork(*loop) >= minWork)
        loops.push_back(loop);
    });
    SymbolTable symbols(module);
    int64_t counter = 0;
    for (scf::ParallelOp loop : loops)
      outline(loop, symbols, counter);
  }
};

} // namespace
