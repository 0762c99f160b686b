//===- StackRowBuffers.cpp - a parallel loop's temporaries on the stack ---===//
//
// Implements kiln-stack-row-buffers. Buffers allocated inside an
// scf.forall body (the rows of a reduction kernel) would otherwise come from
// the runtime's pool once per iteration, on whichever thread runs it; small
// static ones become allocas in a scope that ends with the iteration.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_STACKROWBUFFERS
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Stack bytes one iteration may take.
constexpr int64_t kMaxStackBytes = 64 * 1024;

struct StackRowBuffers : kiln::impl::StackRowBuffersBase<StackRowBuffers> {
  void runOnOperation() override {
    getOperation().walk([&](scf::ForallOp loop) {
      Block *body = loop.getBody();
      SmallVector<memref::AllocOp> allocs;
      int64_t bytes = 0;
      for (Operation &op : *body) {
        auto alloc = dyn_cast<memref::AllocOp>(op);
        if (!alloc || !alloc.getType().hasStaticShape() ||
            !alloc.getType().getElementType().isIntOrIndexOrFloat())
          continue;
        int64_t size = alloc.getType().getNumElements() *
                       static_cast<int64_t>(DataLayout::closest(alloc)
                                                .getTypeSize(alloc.getType().getElementType())
                                                .getFixedValue());
        if (bytes + size > kMaxStackBytes)
          continue;
        bytes += size;
        allocs.push_back(alloc);
      }
      if (allocs.empty())
        return;
      OpBuilder b(loop.getContext());
      for (memref::AllocOp alloc : allocs) {
        b.setInsertionPoint(alloc);
        auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                               alloc.getAlignmentAttr());
        for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        alloc.replaceAllUsesWith(alloca.getResult());
        alloc.erase();
      }
      // The body (but its terminator) in a scope that frees them each time.
      Operation *terminator = body->getTerminator();
      b.setInsertionPoint(terminator);
      auto scope = memref::AllocaScopeOp::create(b, loop.getLoc(), TypeRange{});
      Block *inner = new Block();
      scope.getBodyRegion().push_back(inner);
      inner->getOperations().splice(inner->end(), body->getOperations(), body->begin(),
                                    scope->getIterator());
      b.setInsertionPointToEnd(inner);
      memref::AllocaScopeReturnOp::create(b, loop.getLoc(), ValueRange{});
      ++numBuffers;
    });
  }
};

} // namespace
