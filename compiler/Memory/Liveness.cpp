//===- Liveness.cpp - lifetimes of a block's buffers ----------------------===//

#include "compiler/Memory/Liveness.h"

#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

namespace kiln::memory {

namespace {

/// Ops whose memref result is a view of their memref operand: following
/// them finds every use of a buffer.
bool isView(Operation *op) {
  return isa<ViewLikeOpInterface, memref::CastOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::ReinterpretCastOp, memref::TransposeOp>(op);
}

/// The last position in `block` at which `buffer` or a view of it is used,
/// or nullopt if it escapes.
std::optional<int64_t> lastUse(Value buffer, Block &block,
                               const llvm::DenseMap<Operation *, int64_t> &position) {
  int64_t last = position.lookup(buffer.getDefiningOp());
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user->hasTrait<OpTrait::ReturnLike>() || isa<RegionBranchTerminatorOpInterface>(user))
        return std::nullopt; // returned or yielded out of a region
      if (isView(user)) {
        for (Value result : user->getResults())
          worklist.push_back(result);
      } else if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>) &&
                 !isa<memref::AllocOp>(user)) {
        return std::nullopt; // an unknown op that may return an alias
      }
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor)
        return std::nullopt;
      last = std::max(last, position.lookup(ancestor));
    }
  }
  return last;
}

} // namespace

BlockLiveness computeBlockLiveness(Block &block) {
  BlockLiveness liveness;
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t index = 0;
  for (Operation &op : block)
    position[&op] = index++;
  for (Operation &op : block) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      continue;
    MemRefType type = alloc.getType();
    Type element = type.getElementType();
    std::optional<int64_t> last;
    if (type.hasStaticShape() && type.getLayout().isIdentity() &&
        (element.isIntOrIndexOrFloat()) && !type.getMemorySpace())
      last = lastUse(alloc.getResult(), block, position);
    if (!last) {
      ++liveness.unplanned;
      continue;
    }
    int64_t elementBytes =
        static_cast<int64_t>(DataLayout::closest(alloc).getTypeSize(element).getFixedValue());
    BufferLifetime lifetime;
    lifetime.size = type.getNumElements() * elementBytes;
    lifetime.first = position[alloc];
    lifetime.last = *last;
    liveness.allocs.push_back(alloc);
    liveness.lifetimes.push_back(lifetime);
  }
  return liveness;
}

} // namespace kiln::memory
