//===- FuseChains.cpp - elementwise trees -> kiln.kernel ------------------===//
//
// The second grouping of kiln-fuse (Fusion.h). A tree is grown from a root
// (the last elementwise op of the block not yet grouped) towards its
// operands; the kernel takes every value the tree reads from outside and
// sits where the root was.
//
//===----------------------------------------------------------------------===//

#include "compiler/Fusion/Fusion.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln::fusion {

namespace {

bool isElementwise(Operation *op) {
  return isa<NegOp, AbsOp, SignOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, ReluOp,
             SigmoidOp, TanhOp, ErfOp, SinOp, AtanOp, CosOp, FloorOp, CeilOp, RoundOp, NotOp,
             GeluOp, ClipOp, AddOp, SubOp, MulOp, DivOp, RemOp, PowOp, MaxOp, MinOp, AndOp, OrOp,
             XorOp, ShiftLeftOp, ShiftRightOp, CompareOp, SelectOp, CastOp>(op) &&
         op->getNumResults() == 1;
}

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

} // namespace

int64_t formElementwiseKernels(func::FuncOp func, int64_t &fusedOps) {
  int64_t kernels = 0;
  for (Block &block : func.getBody()) {
    llvm::DenseSet<Operation *> grouped;
    SmallVector<Operation *> roots;
    for (Operation &op : llvm::reverse(block))
      roots.push_back(&op);
    for (Operation *root : roots) {
      if (grouped.contains(root) || !isElementwise(root))
        continue;
      // Grow the tree: operands computed by elementwise ops of this block
      // used only here and of the root's shape.
      SmallVector<Operation *> tree = {root};
      for (size_t i = 0; i < tree.size(); ++i) {
        for (Value operand : tree[i]->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (!producer || producer->getBlock() != &block || !isElementwise(producer) ||
              grouped.contains(producer) || !operand.hasOneUse() ||
              shapeOf(operand) != shapeOf(root->getResult(0)) ||
              llvm::is_contained(tree, producer))
            continue;
          tree.push_back(producer);
        }
      }
      for (Operation *op : tree)
        grouped.insert(op);
      if (tree.size() < 2)
        continue;
      // Block order, and what the tree reads from outside, once each.
      llvm::sort(tree, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      llvm::SetVector<Value> inputs;
      for (Operation *op : tree)
        for (Value operand : op->getOperands())
          if (!llvm::is_contained(tree, operand.getDefiningOp()))
            inputs.insert(operand);
      SmallVector<Location> locs;
      for (Operation *op : tree)
        locs.push_back(op->getLoc());
      OpBuilder b(root);
      auto kernel = KernelOp::create(b, b.getFusedLoc(locs), root->getResultTypes(),
                                     b.getStringAttr("elementwise"), inputs.getArrayRef());
      Block *body = b.createBlock(&kernel.getBody());
      IRMapping map;
      for (Value in : inputs)
        map.map(in, body->addArgument(in.getType(), in.getLoc()));
      b.setInsertionPointToStart(body);
      for (Operation *op : tree)
        b.clone(*op, map);
      YieldOp::create(b, root->getLoc(), map.lookup(root->getResult(0)));
      root->getResult(0).replaceAllUsesWith(kernel.getResult(0));
      for (Operation *op : llvm::reverse(tree))
        op->erase();
      ++kernels;
      fusedOps += static_cast<int64_t>(tree.size());
    }
  }
  return kernels;
}

} // namespace kiln::fusion
