//===- FuseReductions.cpp - reductions with prologue/epilogue -> kernel ---===//
//
// The third grouping of kiln-fuse (Fusion.h). A root reduces over its
// trailing dims [k, rank): softmax / log-softmax along the last dim, layer
// normalisation from its axis, or a keepdims reduction over exactly those
// dims. Every value the group computes or reads then splits into rows
// indexed by the first k dims, so the lowering can compute each row from
// start to end in one pass over it (kiln.outer_dims = k).
//
//===----------------------------------------------------------------------===//

#include "compiler/Fusion/Fusion.h"

using namespace mlir;

namespace kiln::fusion {

namespace {

/// Rows larger than this stay separate loop nests: a row's temporaries
/// live on the stack of the thread computing it.
constexpr int64_t kMaxRowElements = 16384;

/// Whether `value` splits into rows over the first `k` of `rank` dims
/// (numpy alignment from the trailing dim): its inner dims are static.
bool splitsIntoRows(Value value, int64_t rank, int64_t k) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() > rank)
    return false;
  int64_t offset = rank - type.getRank();
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i + offset >= k && type.isDynamicDim(i))
      return false;
  return true;
}

bool opSplitsIntoRows(Operation *op, int64_t rank, int64_t k) {
  return llvm::all_of(op->getOperands(), [&](Value v) { return splitsIntoRows(v, rank, k); }) &&
         llvm::all_of(op->getResults(), [&](Value v) { return splitsIntoRows(v, rank, k); });
}

} // namespace

std::optional<int64_t> firstReducedDim(Operation *op) {
  if (op->getNumOperands() == 0 || op->getNumResults() != 1)
    return std::nullopt;
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!input)
    return std::nullopt;
  int64_t rank = input.getRank();
  std::optional<int64_t> k;
  if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
    if (op->getAttrOfType<IntegerAttr>("axis").getInt() == rank - 1)
      k = rank - 1;
  } else if (auto norm = dyn_cast<LayerNormOp>(op)) {
    k = norm.getAxis();
  } else if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op)) {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
    auto keep = op->getAttrOfType<BoolAttr>("keepdims");
    bool trailing = !axes.empty() && axes.back() == rank - 1;
    for (size_t i = 1; i < axes.size(); ++i)
      trailing &= axes[i] == axes[i - 1] + 1;
    if (keep && keep.getValue() && trailing)
      k = axes.front();
  }
  if (!k || *k < 1 || *k >= rank)
    return std::nullopt;
  int64_t elements = 1;
  for (int64_t d = *k; d < rank; ++d) {
    if (input.isDynamicDim(d))
      return std::nullopt;
    elements *= input.getDimSize(d);
  }
  if (elements == 0 || elements > kMaxRowElements)
    return std::nullopt;
  return k;
}


int64_t formReductionKernels(func::FuncOp func, int64_t &fusedOps) {
  int64_t kernels = 0;
  for (Block &block : func.getBody()) {
    llvm::DenseSet<Operation *> grouped;
    SmallVector<Operation *> roots;
    for (Operation &op : block)
      roots.push_back(&op);
    for (Operation *root : roots) {
      // (A grouped op may have been erased: ask `grouped` first.)
      if (grouped.contains(root))
        continue;
      std::optional<int64_t> k = firstReducedDim(root);
      if (!k)
        continue;
      auto inputType = cast<RankedTensorType>(root->getOperand(0).getType());
      int64_t rank = inputType.getRank();
      if (!opSplitsIntoRows(root, rank, *k))
        continue;
      // Prologue: the elementwise tree computing the root's operands for
      // it alone, with the input's shape.
      SmallVector<Operation *> group = {root};
      growElementwiseTree(group, 0, inputType.getShape(), grouped);
      // Epilogue: single users, one after the other, that split the same way.
      Operation *last = root;
      while (last->getResult(0).hasOneUse()) {
        Operation *user = *last->getResult(0).getUsers().begin();
        if (user->getBlock() != &block || !isElementwise(user) || grouped.contains(user) ||
            !opSplitsIntoRows(user, rank, *k))
          break;
        group.push_back(user);
        last = user;
      }
      for (Operation *op : group)
        grouped.insert(op);
      fusedOps += static_cast<int64_t>(group.size());
      KernelOp kernel = groupIntoKernel(std::move(group), last, KernelKind::reduction);
      kernel->setAttr(KilnDialect::OuterDimsAttrHelper::getNameStr(), IntegerAttr::get(IntegerType::get(func.getContext(), 64), *k));
      ++kernels;
    }
  }
  return kernels;
}

} // namespace kiln::fusion
