//===- Rematerialize.cpp - recompute cheap forward values in the backward -===//
//
// kiln-rematerialize: a forward value the backward pass reads (an
// activation saved for it: it lives in memory from the forward into the
// backward) is recomputed instead when it is an elementwise op's result
// whose operands the backward pass has anyway (arguments, constants,
// values it reads itself, or values recomputed the same way). Each
// backward use gets its own copy right before it, so fusion folds the
// copy into the kernel that reads it, and the saved value goes. What it
// saves is the recomputed values' bytes (`--remat` reports them); the
// operands stay saved, so it never saves more. Backward ops are those
// kiln-differentiate marked (Backward.h). It runs right before kiln-fuse
// (after the graph phase's CSE, which would merge a copy back into its
// original), and only copies into elementwise readers of the same shape,
// which fusion folds the copy into.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Backward.h"
#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Fusion/Fusion.h"
#include "compiler/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_REMATERIALIZE
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln::autodiff {

static bool readByBackward(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *user) { return isBackward(user->getLoc()); });
}

static int64_t bytesOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return 0;
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

/// Whether every backward op reading `v` is elementwise with `v`'s shape:
/// a copy made right before it joins its fused kernel (kiln-fuse grows a
/// kernel through such operands), so it is never a buffer, and never an
/// op that CSE would merge back into the forward one.
static bool fusesIntoReaders(Value v) {
  for (Operation *user : v.getUsers())
    if (isBackward(user->getLoc()) &&
        (!fusion::isElementwise(user) || user->getResult(0).getType() != v.getType()))
      return false;
  return true;
}

RematSummary rematerialize(func::FuncOp f) {
  RematSummary summary;
  Block &body = f.getBody().front();
  llvm::SetVector<Operation *> chosen;
  for (Operation &op : body.without_terminator()) {
    if (isBackward(op.getLoc()) || !fusion::isElementwise(&op) || op.getNumRegions() != 0 ||
        !readByBackward(op.getResult(0)) || !fusesIntoReaders(op.getResult(0)))
      continue;
    // Operands the backward pass reads anyway (they stay saved).
    bool available = llvm::all_of(op.getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return !def || isa<ConstantOp>(def) || (readByBackward(operand) && !chosen.contains(def));
    });
    if (available)
      chosen.insert(&op);
  }
  for (Operation *op : chosen) {
    Value saved = op->getResult(0);
    for (OpOperand &use : llvm::make_early_inc_range(saved.getUses())) {
      Operation *user = use.getOwner();
      if (!isBackward(user->getLoc()))
        continue;
      OpBuilder b(user);
      Operation *copy = b.clone(*op);
      copy->setLoc(markBackward(op->getLoc()));
      use.set(copy->getResult(0));
    }
    ++summary.values;
    summary.bytes += bytesOf(saved);
  }
  // Originals nothing reads any more (all their readers were backward).
  for (Operation *op : llvm::reverse(chosen))
    if (op->use_empty())
      op->erase();
  return summary;
}

namespace {
struct RematerializePass : kiln::impl::RematerializeBase<RematerializePass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    RematSummary summary = rematerialize(f);
    numValues += summary.values;
    numBytes += summary.bytes;
    // For the compile's report (kiln compile --remat).
    f->setAttr(kRematAttr, DenseI64ArrayAttr::get(f.getContext(), {summary.values,
                                                                   summary.bytes}));
  }
};
} // namespace

} // namespace kiln::autodiff
