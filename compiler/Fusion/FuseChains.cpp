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

bool isElementwise(Operation *op) {
  return isa<NegOp, AbsOp, SignOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, ReluOp,
             SigmoidOp, TanhOp, ErfOp, SinOp, AtanOp, CosOp, FloorOp, CeilOp, RoundOp, NotOp,
             GeluOp, ClipOp, AddOp, SubOp, MulOp, DivOp, RemOp, PowOp, MaxOp, MinOp, AndOp, OrOp,
             XorOp, ShiftLeftOp, ShiftRightOp, CompareOp, SelectOp, CastOp, BitcastOp>(op) &&
         op->getNumResults() == 1;
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

void growElementwiseTree(SmallVector<Operation *> &tree, size_t from,
                         ArrayRef<int64_t> shape, const llvm::DenseSet<Operation *> &grouped) {
  Block *block = tree[from]->getBlock();
  for (size_t i = from; i < tree.size(); ++i) {
    for (Value operand : tree[i]->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || producer->getBlock() != block || !isElementwise(producer) ||
          grouped.contains(producer) || !operand.hasOneUse() || shapeOf(operand) != shape ||
          llvm::is_contained(tree, producer))
        continue;
      tree.push_back(producer);
    }
  }
}

KernelOp groupIntoKernel(SmallVector<Operation *> ops, Operation *last, KernelKind kind) {
  // Block order, and what the group reads from outside, once each.
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::SetVector<Value> inputs;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (!llvm::is_contained(ops, operand.getDefiningOp()))
        inputs.insert(operand);
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  OpBuilder b(last);
  auto kernel = KernelOp::create(b, b.getFusedLoc(locs), last->getResultTypes(),
                                 kind, inputs.getArrayRef());
  Block *body = b.createBlock(&kernel.getBody());
  IRMapping map;
  for (Value in : inputs)
    map.map(in, body->addArgument(in.getType(), in.getLoc()));
  b.setInsertionPointToStart(body);
  for (Operation *op : ops)
    b.clone(*op, map);
  YieldOp::create(b, last->getLoc(), map.lookup(last->getResult(0)));
  last->getResult(0).replaceAllUsesWith(kernel.getResult(0));
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return kernel;
}

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
      growElementwiseTree(tree, 0, shapeOf(root->getResult(0)), grouped);
      for (Operation *op : tree)
        grouped.insert(op);
      if (tree.size() < 2)
        continue;
      fusedOps += static_cast<int64_t>(tree.size());
      groupIntoKernel(std::move(tree), root, KernelKind::elementwise);
      ++kernels;
    }
  }
  return kernels;
}

} // namespace kiln::fusion
