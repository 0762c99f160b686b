//===- PlanMemory.cpp - intermediates -> views of one arena ---------------===//
//
// Implements kiln-plan-memory: liveness (Liveness.cpp), packing
// (Packing.cpp), then the rewrite of each planned allocation into a view
// at its offset.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Backward.h"
#include "compiler/Memory/Liveness.h"
#include "compiler/Memory/Packing.h"
#include "compiler/Passes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "dialects/kiln/IR/KilnDialect.h"

namespace kiln {
#define GEN_PASS_DEF_PLANMEMORY
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln::memory;

namespace {

constexpr int64_t kArenaAlignment = 64;

struct PlanMemory : kiln::impl::PlanMemoryBase<PlanMemory> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    std::unique_ptr<PackingStrategy> chosen;
    if (strategy == "greedy-by-size")
      chosen = createGreedyBySize();
    else if (strategy == "best-fit-by-time")
      chosen = createBestFitByTime();
    else if (strategy != "best") {
      getOperation().emitError() << "kiln-plan-memory: unknown strategy '" << strategy
                                 << "' (greedy-by-size, best-fit-by-time, best)";
      return signalPassFailure();
    }
    getOperation().walk([&](func::FuncOp func) {
      if (!func.isExternal())
        plan(func, chosen.get());
    });
  }

  void plan(func::FuncOp func, const PackingStrategy *strategy) {
    Block &block = func.getBody().front();
    LivenessOptions options;
    options.maxBatch = maxBatch;
    BlockLiveness liveness = computeBlockLiveness(block, options);
    int64_t positions = static_cast<int64_t>(block.getOperations().size());
    // A training step's backward pass starts at its first marked op that
    // computes (constants and views are hoisted; allocations are not
    // work): the buffers live across that position are the activations
    // saved for it.
    int64_t backwardFrom = -1, position = 0;
    for (Operation &op : block) {
      if (kiln::autodiff::isBackward(op.getLoc()) && !isMemoryEffectFree(&op) &&
          !isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op)) {
        backwardFrom = position;
        break;
      }
      ++position;
    }
    ArenaPlan arena = strategy ? planArena(liveness.lifetimes, kArenaAlignment, *strategy)
                               : planArenaBest(liveness.lifetimes, kArenaAlignment);
    OpBuilder b(func.getContext());
    if (!liveness.allocs.empty()) {
      b.setInsertionPointToStart(&block);
      auto arenaType = MemRefType::get({arena.arenaBytes}, b.getI8Type());
      auto base = memref::AllocOp::create(b, func.getLoc(), arenaType,
                                          b.getI64IntegerAttr(kArenaAlignment));
      base->setAttr(kiln::KilnDialect::ArenaAttrHelper::getNameStr(), b.getUnitAttr());
      for (auto [alloc, slot] : llvm::zip(liveness.allocs, liveness.slotOf)) {
        b.setInsertionPoint(alloc);
        Value at = arith::ConstantIndexOp::create(b, alloc.getLoc(), arena.offsets[slot]);
        // Dynamic dims keep their run-time sizes; the slot holds the largest.
        Value view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(), base, at,
                                            alloc.getDynamicSizes());
        for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        alloc.replaceAllUsesWith(view);
        alloc.erase();
      }
    }
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    // The naive sum counts every buffer, including those written in place.
    int64_t naive = 0;
    for (int64_t bytes : liveness.bytes)
      naive += llvm::alignTo(bytes, kArenaAlignment);
    // Every slot as (offset, size, first, last), for reports.
    SmallVector<int64_t> buffers;
    for (auto [lifetime, offset] : llvm::zip(liveness.lifetimes, arena.offsets))
      buffers.append({offset, lifetime.size, lifetime.first, lifetime.last});
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("arena_bytes", i64(arena.arenaBytes)),
        b.getNamedAttr("lower_bound", i64(arena.lowerBound)),
        b.getNamedAttr("naive_bytes", i64(naive)),
        b.getNamedAttr("planned", i64(liveness.allocs.size())),
        b.getNamedAttr("in_place", i64(liveness.inPlace)),
        b.getNamedAttr("bounded", i64(liveness.bounded)),
        b.getNamedAttr("max_batch", i64(maxBatch)),
        b.getNamedAttr("unplanned", i64(liveness.unplanned)),
        b.getNamedAttr("positions", i64(positions)),
        b.getNamedAttr("buffers", b.getDenseI64ArrayAttr(buffers))};
    if (backwardFrom >= 0)
      fields.push_back(b.getNamedAttr("backward_from", i64(backwardFrom)));
    func->setAttr(kiln::KilnDialect::MemoryPlanAttrHelper::getNameStr(),
                  b.getDictionaryAttr(fields));
  }
};

} // namespace
