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

namespace kiln {
#define GEN_PASS_DEF_FREEAFTERLASTUSE
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct FreeAfterLastUse : kiln::impl::FreeAfterLastUseBase<FreeAfterLastUse> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk([&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs) {
      Value buffer = dealloc.getMemref();
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      Block *block = dealloc->getBlock();
      if (!alloc || alloc->getBlock() != block)
        continue;
      Operation *last = kiln::memory::lastUser(buffer, *block);
      if (!last || !last->isBeforeInBlock(dealloc) || last->getNextNode() == dealloc)
        continue;
      dealloc->moveAfter(last);
      ++numMoved;
    }
  }
};

} // namespace
