//===- ScopeLoopAllocas.cpp - a loop body's allocas freed per iteration ---===//
//
// See Passes.td (kiln-scope-loop-allocas).
//
//===----------------------------------------------------------------------===//

#include "backends/common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace kiln::host {

#define GEN_PASS_DEF_SCOPELOOPALLOCAS
#include "backends/common/Passes.h.inc"

namespace {

/// Whether `body` holds a memref.alloca that runs once per iteration: in
/// the body or in a region of its ops (an scf.if), but not in a nested
/// loop, which restores the stack itself.
bool holdsAlloca(Block &body) {
  for (Operation &op : body) {
    WalkResult found = op.walk<WalkOrder::PreOrder>([](Operation *inner) {
      if (isa<memref::AllocaOp>(inner))
        return WalkResult::interrupt();
      if (isa<scf::ForOp, scf::ParallelOp>(inner))
        return WalkResult::skip();
      return WalkResult::advance();
    });
    if (found.wasInterrupted())
      return true;
  }
  return false;
}

/// Saves the stack pointer at the start of `body` and restores it before
/// its terminator. (A memref.alloca_scope would do the same, but its
/// region must stay one block, which the lowering of the loops inside it
/// to branches breaks.)
void restoreStackEachIteration(Block &body) {
  OpBuilder b(&body, body.begin());
  Location loc = body.getParentOp()->getLoc();
  auto pointer = LLVM::LLVMPointerType::get(b.getContext());
  Value saved = LLVM::StackSaveOp::create(b, loc, pointer);
  b.setInsertionPoint(body.getTerminator());
  LLVM::StackRestoreOp::create(b, loc, saved);
}

struct ScopeLoopAllocas : impl::ScopeLoopAllocasBase<ScopeLoopAllocas> {
  void runOnOperation() override {
    SmallVector<Block *> bodies;
    getOperation().walk([&](Operation *op) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        if (holdsAlloca(*loop.getBody()))
          bodies.push_back(loop.getBody());
      } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        // A loop with reductions ends in scf.reduce regions that must stay
        // its terminator's; its allocas (if any) stay to the function.
        if (loop.getNumResults() == 0 && holdsAlloca(*loop.getBody()))
          bodies.push_back(loop.getBody());
      }
    });
    for (Block *body : bodies)
      restoreStackEachIteration(*body);
    numScopes += bodies.size();
  }
};

} // namespace

} // namespace kiln::host
