//===- Liveness.cpp - lifetimes of a block's buffers ----------------------===//

#include "compiler/Memory/Liveness.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
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

/// The buffer `value` is a view of (itself if it is not a view).
Value rootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isView(def) || def->getNumOperands() == 0)
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// Calls `visit` with the ancestor in `block` of every op that uses
/// `buffer` or a view of it (`skipDeallocs`: but deallocations of
/// `buffer`); false if it escapes (see lastUse).
bool forEachUse(Value buffer, Block &block, bool skipDeallocs,
                llvm::function_ref<void(Operation *)> visit) {
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (skipDeallocs && value == buffer && isa<memref::DeallocOp>(user))
        continue;
      if (user->hasTrait<OpTrait::ReturnLike>() || isa<RegionBranchTerminatorOpInterface>(user))
        return false; // returned or yielded out of a region
      if (isView(user)) {
        for (Value result : user->getResults())
          worklist.push_back(result);
      } else if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>) &&
                 !isa<memref::AllocOp>(user)) {
        return false; // an unknown op that may return an alias
      }
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor)
        return false;
      visit(ancestor);
    }
  }
  return true;
}

constexpr int kMaxBoundDepth = 64;

/// What the bound search knows: the batch limit, and the bounds found so
/// far (allocation sizes refer to dims of earlier buffers, so the same
/// values are asked for again and again).
struct Bounds {
  int64_t maxBatch = 0;
  llvm::DenseMap<Value, int64_t> known;
};

std::optional<int64_t> bound(Value value, Bounds &ctx, int depth);

/// An upper bound of dim `dim` of the memref `value`.
std::optional<int64_t> dimBound(Value value, int64_t dim, Bounds &ctx, int depth) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || dim < 0 || dim >= type.getRank())
    return std::nullopt;
  if (!type.isDynamicDim(dim))
    return type.getDimSize(dim);
  if (depth > kMaxBoundDepth)
    return std::nullopt;
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    // The model's inputs: only the batch dim has a bound.
    bool entry = isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
    if (entry && dim == 0 && ctx.maxBatch > 0)
      return ctx.maxBatch;
    return std::nullopt;
  }
  Operation *def = value.getDefiningOp();
  auto fromMixed = [&](OpFoldResult size) -> std::optional<int64_t> {
    if (auto attr = dyn_cast<Attribute>(size))
      return cast<IntegerAttr>(attr).getInt();
    return bound(cast<Value>(size), ctx, depth + 1);
  };
  if (auto alloc = dyn_cast<memref::AllocOp>(def))
    return bound(alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)], ctx, depth + 1);
  if (auto view = dyn_cast<memref::ViewOp>(def))
    return bound(view.getSizes()[type.getDynamicDimIndex(dim)], ctx, depth + 1);
  if (auto cast = dyn_cast<memref::CastOp>(def))
    return dimBound(cast.getSource(), dim, ctx, depth + 1);
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def)) {
    int64_t product = 1;
    // (The indices are returned by value: keep them alive for the loop.)
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    for (int64_t source : groups[dim]) {
      std::optional<int64_t> b = dimBound(collapse.getSrc(), source, ctx, depth + 1);
      if (!b)
        return std::nullopt;
      product *= *b;
    }
    return product;
  }
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
    return fromMixed(expand.getMixedOutputShape()[dim]);
  if (auto reinterpret = dyn_cast<memref::ReinterpretCastOp>(def))
    return fromMixed(reinterpret.getMixedSizes()[dim]);
  if (auto subview = dyn_cast<memref::SubViewOp>(def))
    if (subview.getSourceType().getRank() == type.getRank())
      return fromMixed(subview.getMixedSizes()[dim]);
  return std::nullopt;
}

std::optional<int64_t> computeBound(Value value, Bounds &ctx, int depth);

/// An upper bound of the non-negative index or integer `value`.
std::optional<int64_t> bound(Value value, Bounds &ctx, int depth) {
  if (auto it = ctx.known.find(value); it != ctx.known.end())
    return it->second;
  std::optional<int64_t> found = computeBound(value, ctx, depth);
  if (found)
    ctx.known[value] = *found;
  return found;
}

std::optional<int64_t> computeBound(Value value, Bounds &ctx, int depth) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.isNegative() ? std::nullopt : std::optional<int64_t>(constant.getSExtValue());
  Operation *def = value.getDefiningOp();
  if (!def || depth > kMaxBoundDepth)
    return std::nullopt;
  auto both = [&](Value a, Value b) -> std::optional<std::pair<int64_t, int64_t>> {
    auto x = bound(a, ctx, depth + 1);
    auto y = x ? bound(b, ctx, depth + 1) : std::nullopt;
    if (!x || !y)
      return std::nullopt;
    return std::make_pair(*x, *y);
  };
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return bound(def->getOperand(0), ctx, depth + 1);
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    return index ? dimBound(dim.getSource(), *index, ctx, depth + 1) : std::nullopt;
  }
  if (isa<arith::MaxUIOp, arith::MaxSIOp, arith::SelectOp>(def)) {
    unsigned first = isa<arith::SelectOp>(def) ? 1 : 0;
    auto b = both(def->getOperand(first), def->getOperand(first + 1));
    return b ? std::optional<int64_t>(std::max(b->first, b->second)) : std::nullopt;
  }
  if (isa<arith::MinUIOp, arith::MinSIOp>(def)) {
    auto x = bound(def->getOperand(0), ctx, depth + 1);
    auto y = bound(def->getOperand(1), ctx, depth + 1);
    if (x && y)
      return std::min(*x, *y);
    return x ? x : y;
  }
  if (isa<arith::AddIOp, arith::MulIOp>(def)) {
    auto b = both(def->getOperand(0), def->getOperand(1));
    if (!b)
      return std::nullopt;
    return isa<arith::AddIOp>(def) ? b->first + b->second : b->first * b->second;
  }
  if (isa<arith::DivUIOp, arith::DivSIOp, arith::CeilDivUIOp, arith::CeilDivSIOp>(def)) {
    APInt divisor;
    if (!matchPattern(def->getOperand(1), m_ConstantInt(&divisor)) || !divisor.isStrictlyPositive())
      return std::nullopt;
    auto x = bound(def->getOperand(0), ctx, depth + 1);
    int64_t d = divisor.getSExtValue();
    if (!x)
      return std::nullopt;
    return isa<arith::DivUIOp, arith::DivSIOp>(def) ? *x / d : (*x + d - 1) / d;
  }
  return std::nullopt;
}

int64_t elementBytes(memref::AllocOp alloc) {
  Type element = alloc.getType().getElementType();
  return static_cast<int64_t>(DataLayout::closest(alloc).getTypeSize(element).getFixedValue());
}

/// The largest size in bytes `alloc` can have, or nullopt.
std::optional<int64_t> sizeBound(memref::AllocOp alloc, Bounds &ctx) {
  MemRefType type = alloc.getType();
  int64_t bytes = elementBytes(alloc);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::optional<int64_t> size = type.isDynamicDim(d)
                                      ? bound(alloc.getDynamicSizes()[type.getDynamicDimIndex(d)],
                                              ctx, 0)
                                      : std::optional<int64_t>(type.getDimSize(d));
    if (!size)
      return std::nullopt;
    bytes *= *size;
  }
  return bytes;
}

/// The elementwise generic that first touches `alloc` and writes all of
/// it, or null.
linalg::GenericOp elementwiseWriter(memref::AllocOp alloc, Block &block,
                                    const llvm::DenseMap<Operation *, int64_t> &position) {
  Operation *first = nullptr;
  for (Operation *user : alloc->getUsers()) {
    Operation *ancestor = block.findAncestorOpInBlock(*user);
    if (!ancestor)
      return nullptr;
    if (!first || position.lookup(ancestor) < position.lookup(first))
      first = ancestor;
  }
  auto generic = dyn_cast_or_null<linalg::GenericOp>(first);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getDpsInitOperand(0)->get() != alloc.getResult() ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return nullptr;
  OpOperand *init = generic.getDpsInitOperand(0);
  // It writes every element without reading the old ones.
  if (!generic.getMatchingIndexingMap(init).isPermutation() ||
      !generic.getMatchingBlockArgument(init).use_empty())
    return nullptr;
  return generic;
}

} // namespace

BlockLiveness computeBlockLiveness(Block &block, const LivenessOptions &options) {
  BlockLiveness liveness;
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t index = 0;
  for (Operation &op : block)
    position[&op] = index++;
  llvm::DenseMap<Operation *, size_t> planned; // alloc -> index in allocs
  Bounds bounds;
  bounds.maxBatch = options.maxBatch;
  for (Operation &op : block) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      continue;
    MemRefType type = alloc.getType();
    std::optional<int64_t> last, size;
    if (type.getLayout().isIdentity() && type.getElementType().isIntOrIndexOrFloat() &&
        !type.getMemorySpace())
      size = sizeBound(alloc, bounds);
    if (size)
      last = lastUse(alloc.getResult(), block, position);
    if (!last) {
      ++liveness.unplanned;
      continue;
    }
    if (!type.hasStaticShape())
      ++liveness.bounded;
    BufferLifetime lifetime;
    lifetime.size = *size;
    lifetime.first = position[alloc];
    lifetime.last = *last;
    planned[alloc] = liveness.allocs.size();
    liveness.slotOf.push_back(liveness.lifetimes.size());
    liveness.bytes.push_back(*size);
    liveness.allocs.push_back(alloc);
    liveness.lifetimes.push_back(lifetime);
  }

  // In place: an elementwise generic's result takes the slot of an input
  // that dies there, read through the same indexing map (so each element
  // is read before the same element is written), when nothing else the op
  // reads lives in that slot.
  std::vector<bool> slotUsed(liveness.lifetimes.size(), true);
  for (auto [i, alloc] : llvm::enumerate(liveness.allocs)) {
    linalg::GenericOp generic = elementwiseWriter(alloc, block, position);
    if (!generic)
      continue;
    OpOperand *init = generic.getDpsInitOperand(0);
    AffineMap map = generic.getMatchingIndexingMap(init);
    int64_t at = position.lookup(generic);
    for (OpOperand *input : generic.getDpsInputOperands()) {
      auto source = input->get().getDefiningOp<memref::AllocOp>();
      if (!source || !planned.count(source) || source == alloc ||
          generic.getMatchingIndexingMap(input) != map ||
          source.getType().getShape() != alloc.getType().getShape() ||
          elementBytes(source) != elementBytes(alloc))
        continue;
      size_t slot = liveness.slotOf[planned[source]];
      if (liveness.lifetimes[slot].last != at)
        continue;
      bool clash = llvm::any_of(generic->getOpOperands(), [&](OpOperand &other) {
        if (&other == init || (other.get() == input->get() &&
                               generic.getMatchingIndexingMap(&other) == map))
          return false;
        auto root = rootBuffer(other.get()).getDefiningOp<memref::AllocOp>();
        return root && planned.count(root) && liveness.slotOf[planned[root]] == slot;
      });
      if (clash)
        continue;
      size_t own = liveness.slotOf[i];
      BufferLifetime &shared = liveness.lifetimes[slot];
      shared.last = std::max(shared.last, liveness.lifetimes[own].last);
      shared.size = std::max(shared.size, liveness.lifetimes[own].size);
      slotUsed[own] = false;
      liveness.slotOf[i] = slot;
      ++liveness.inPlace;
      break;
    }
  }
  // Slots renumbered without the ones given up.
  std::vector<size_t> renumber(liveness.lifetimes.size());
  std::vector<BufferLifetime> kept;
  for (size_t s = 0; s < liveness.lifetimes.size(); ++s) {
    renumber[s] = kept.size();
    if (slotUsed[s])
      kept.push_back(liveness.lifetimes[s]);
  }
  for (size_t &slot : liveness.slotOf)
    slot = renumber[slot];
  liveness.lifetimes = std::move(kept);
  return liveness;
}

std::optional<int64_t> lastUse(Value buffer, Block &block,
                               const llvm::DenseMap<Operation *, int64_t> &position,
                               bool skipDeallocs) {
  int64_t last = position.lookup(buffer.getDefiningOp());
  if (!forEachUse(buffer, block, skipDeallocs,
                  [&](Operation *op) { last = std::max(last, position.lookup(op)); }))
    return std::nullopt;
  return last;
}

} // namespace kiln::memory
