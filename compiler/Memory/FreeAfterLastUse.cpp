//===- FreeAfterLastUse.cpp - free each buffer right after its last use ---===//
//
// Implements kiln-free-after-last-use. MLIR's ownership-based buffer
// deallocation frees a block's buffers at the end of the block, so every
// buffer the arena does not hold (those with a dynamic dim and no
// --max-batch) stayed allocated until the run returned: the runtime's pool
// held all of them at once. Each `memref.dealloc` of a buffer allocated in
// its own block moves to right after the last op of that block that uses
// the buffer or a view of it (the same uses the arena's lifetimes count),
// so the pool hands the memory to the buffers that follow.
//
//===----------------------------------------------------------------------===//

#include "compiler/Memory/Liveness.h"
#include "compiler/Passes.h"

#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_FREEAFTERLASTUSE
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct FreeAfterLastUse : kiln::impl::FreeAfterLastUseBase<FreeAfterLastUse> {
  void runOnOperation() override {
    llvm::MapVector<Block *, SmallVector<memref::DeallocOp>> byBlock;
    getOperation().walk(
        [&](memref::DeallocOp dealloc) { byBlock[dealloc->getBlock()].push_back(dealloc); });
    for (auto &[block, deallocs] : byBlock) {
      // Positions taken once (moving a deallocation moves no op that uses a
      // buffer), so a block of n ops costs O(n) and not O(n) per move.
      llvm::DenseMap<Operation *, int64_t> position;
      SmallVector<Operation *> ops;
      for (Operation &op : *block) {
        position[&op] = static_cast<int64_t>(ops.size());
        ops.push_back(&op);
      }
      for (memref::DeallocOp dealloc : deallocs) {
        Value buffer = dealloc.getMemref();
        auto alloc = buffer.getDefiningOp<memref::AllocOp>();
        if (!alloc || alloc->getBlock() != block)
          continue;
        std::optional<int64_t> last =
            kiln::memory::lastUse(buffer, *block, position, /*skipDeallocs=*/true);
        if (!last || *last + 1 >= position.lookup(dealloc.getOperation()))
          continue;
        dealloc->moveAfter(ops[*last]);
        ++numMoved;
      }
    }
  }
};

} // namespace
