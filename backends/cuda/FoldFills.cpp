//===- FoldFills.cpp - a reduction's initial fill inside its loop nest ----===//
//
// Implements kiln-gpu-fold-fills (Passes.td): a loop nest that fills a
// buffer with one value (a linalg.fill, as a parallel loop) followed by a
// loop nest over the same iterations each of which reads and writes only
// its own element of that buffer (a max pool's, whose window is a loop
// inside) becomes the second nest alone, each iteration storing the value
// first: one kernel instead of two, and one pass less of the buffer
// through memory.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Passes.h"
#include "backends/cuda/RowPlan.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_GPUFOLDFILLS
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {
namespace {

/// Whether `a` and `b` run the same iterations: the same bounds and
/// steps (the same values, or equal constants).
static bool sameIterations(scf::ParallelOp a, scf::ParallelOp b) {
  auto same = [](ValueRange x, ValueRange y) {
    if (x.size() != y.size())
      return false;
    for (auto [u, v] : llvm::zip(x, y)) {
      APInt cu, cv;
      if (u != v && !(matchPattern(u, m_ConstantInt(&cu)) &&
                      matchPattern(v, m_ConstantInt(&cv)) && cu == cv))
        return false;
    }
    return true;
  };
  return a.getNumResults() == 0 && b.getNumResults() == 0 &&
         same(a.getLowerBound(), b.getLowerBound()) &&
         same(a.getUpperBound(), b.getUpperBound()) && same(a.getStep(), b.getStep());
}

/// The value `p` (a fill) stores into `buffer`: its body one store of a
/// value defined outside it at exactly its induction variables; else null.
static Value fillValue(scf::ParallelOp p, Value &buffer) {
  Block *body = p.getBody();
  if (body->getOperations().size() != 2) // the store and scf.reduce
    return {};
  auto store = dyn_cast<memref::StoreOp>(body->front());
  if (!store || store.getIndices() != p.getInductionVars() ||
      store.getValue().getParentBlock() == body || p.getNumResults() != 0)
    return {};
  buffer = store.getMemRef();
  return store.getValue();
}

/// Whether every access of `p`'s body to memory that may be `buffer`'s is
/// a load or store of `buffer` itself at `p`'s induction variables (each
/// iteration its own element), and nothing else in it touches memory in
/// a way not seen here.
static bool ownsElements(scf::ParallelOp p, Value buffer) {
  bool owns = true;
  p.getBody()->walk([&](Operation *op) {
    Value memref;
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      memref = load.getMemRef();
      indices = load.getIndices();
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      memref = store.getMemRef();
      indices = store.getIndices();
    } else {
      if (!isMemoryEffectFree(op) && !isa<scf::ForOp, scf::IfOp, scf::YieldOp, scf::ReduceOp>(op))
        owns = false;
      return;
    }
    if (mayAlias(memref, buffer) &&
        (memref != buffer || indices != p.getInductionVars()))
      owns = false;
  });
  return owns;
}

/// Whether `op` is the call the compile driver puts before each kernel
/// for the artifact's profiler (`kiln_kernel_begin(k)`, Report.h).
static bool isProfilingMarker(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == "kiln_kernel_begin";
}

struct GpuFoldFillsPass : impl::GpuFoldFillsBase<GpuFoldFillsPass> {
  void runOnOperation() override {
    for (Block &block : getOperation().getBody()) {
      SmallVector<std::pair<scf::ParallelOp, scf::ParallelOp>> folds;
      for (Operation &op : block) {
        auto fill = dyn_cast<scf::ParallelOp>(op);
        Value buffer;
        if (!fill || !fillValue(fill, buffer))
          continue;
        // The next op that is not free of memory effects (nor a profiling
        // marker, which only notes the time: the fill's share of it goes
        // to the nest): the nest.
        Operation *next = fill->getNextNode();
        while (next && ((isMemoryEffectFree(next) && next->getNumRegions() == 0) ||
                        isProfilingMarker(next)))
          next = next->getNextNode();
        auto nest = dyn_cast_or_null<scf::ParallelOp>(next);
        if (nest && sameIterations(fill, nest) && ownsElements(nest, buffer))
          folds.push_back({fill, nest});
      }
      for (auto [fill, nest] : folds) {
        auto store = cast<memref::StoreOp>(fill.getBody()->front());
        OpBuilder b = OpBuilder::atBlockBegin(nest.getBody());
        memref::StoreOp::create(b, store.getLoc(), store.getValue(), store.getMemRef(),
                                nest.getInductionVars());
        fill.erase();
      }
    }
  }
};

} // namespace
} // namespace kiln::cuda
