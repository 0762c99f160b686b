//===- RowPlan.cpp - which rows and reductions run on lanes ---------------===//
//
// The analysis half of kiln-gpu-warp-rows (Passes.td; WarpRows.cpp
// rewrites what this plans): whether a row kernel's row can run on a
// warp, each of its linalg ops' modes and its lane-private temporaries;
// whether a reduction outside a row kernel can take a warp an output;
// and, for both, whether two buffers may share memory.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/RowPlan.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace kiln::cuda {

/// Who holds a buffer written in the row: every lane all of it, or each
/// lane the elements its strided writer wrote (the writer's loop ranges
/// and its map onto the buffer).
struct Holder {
  bool whole = true;
  SmallVector<int64_t> ranges;
  AffineMap map;
};

/// The memref `def`'s result views (a view-like op's source, or the one
/// memref operand of a pure op making a memref: a transpose), or null.
static Value sourceOf(Operation *def) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(def))
    return view.getViewSource();
  auto memrefs = llvm::make_filter_range(
      def->getOperands(), [](Value operand) { return isa<MemRefType>(operand.getType()); });
  if (!isMemoryEffectFree(def) || llvm::range_size(memrefs) != 1)
    return {};
  return *memrefs.begin();
}

/// The memref `v` is a view of (through subviews, casts, reshapes,
/// transposes).
static Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    Value source = sourceOf(def);
    if (!source)
      break;
    v = source;
  }
  return v;
}

/// The arena view (memref.view) `v` is a part of, through subviews,
/// casts and reshapes, or null.
static memref::ViewOp arenaViewOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def))
      return view;
    v = sourceOf(def);
    if (!v)
      break;
  }
  return {};
}

/// The bytes [first, last) of its source a memref.view covers, if its
/// shift is a constant and its shape static.
static std::optional<std::pair<int64_t, int64_t>> bytesOf(memref::ViewOp view) {
  APInt shift;
  MemRefType type = view.getType();
  if (!matchPattern(view.getByteShift(), m_ConstantInt(&shift)) || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bytes =
      type.getNumElements() * llvm::divideCeil(type.getElementTypeBitWidth(), int64_t{8});
  return std::make_pair(shift.getSExtValue(), shift.getSExtValue() + bytes);
}

/// Whether memrefs `a` and `b` may share memory: views of one buffer do,
/// unless both are parts of views of the arena at disjoint bytes (two
/// intermediates the memory plan placed apart).
bool mayAlias(Value a, Value b) {
  if (rootOf(a) != rootOf(b))
    return false;
  memref::ViewOp va = arenaViewOf(a), vb = arenaViewOf(b);
  if (!va || !vb || va == vb)
    return true;
  auto ra = bytesOf(va), rb = bytesOf(vb);
  return !ra || !rb || (ra->first < rb->second && rb->first < ra->second);
}

/// The op combining a reduction's output with its element (the one user
/// of the output's block argument, yielded), or null.
Operation *combinerOf(linalg::LinalgOp op, unsigned output) {
  BlockArgument out = op.getRegionOutputArgs()[output];
  if (!out.hasOneUse())
    return nullptr;
  Operation *c = *out.getUsers().begin();
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  if (c->getNumOperands() != 2 || c->getNumResults() != 1 || !c->getResult(0).hasOneUse() ||
      yield.getOperand(output) != c->getResult(0) || !arith::getNeutralElement(c))
    return nullptr;
  Type t = c->getResult(0).getType();
  if (!t.isF32() && !t.isInteger(32)) // what one shuffle moves
    return nullptr;
  return c;
}

/// Whether `op`'s reduction dims all follow its parallel dims (static
/// `ranges`); `outputs` and `reduced` count the elements of each group.
static bool reductionsLast(linalg::LinalgOp op, ArrayRef<int64_t> ranges, int64_t &outputs,
                           int64_t &reduced) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  size_t first = ranges.size() - op.getNumReductionLoops();
  outputs = reduced = 1;
  for (size_t d = 0; d < ranges.size(); ++d) {
    if ((d >= first) != (iterators[d] == utils::IteratorType::reduction))
      return false;
    (d < first ? outputs : reduced) *= ranges[d];
  }
  return true;
}

/// Whether every use of `alloca` is an operand of a strided op (or an
/// input of a lane-reduced one), all over the same loop ranges through
/// the same injective map: then lane l touches only the elements
/// e = l + 32k of those ranges, and needs ceil(size / 32) slots of its
/// own instead of the whole buffer.
static bool isLanePrivate(memref::AllocaOp alloca, const DenseMap<Operation *, Mode> &modes) {
  if (alloca->use_empty() || !alloca.getType().hasStaticShape())
    return false;
  SmallVector<int64_t> ranges;
  AffineMap map;
  for (OpOperand &use : alloca->getUses()) {
    auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
    auto mode = modes.find(use.getOwner());
    if (!op || mode == modes.end() || mode->second == Mode::Whole ||
        (mode->second == Mode::LaneReduced && op.isDpsInit(&use)))
      return false;
    SmallVector<int64_t> r = op.getStaticLoopRanges();
    AffineMap m = op.getMatchingIndexingMap(&use);
    if (!map) {
      ranges = r;
      map = m;
    } else if (r != ranges || m != map) {
      return false;
    }
  }
  // Injective: a dim or 0 each result, every dim that varies among them.
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
    return false;
  for (auto [d, r] : llvm::enumerate(ranges))
    if (r > 1 && !map.getResultPosition(getAffineDimExpr(d, alloca.getContext())))
      return false;
  return true;
}

/// How `row`'s body runs on a warp, or failure if the row cannot as it is.
FailureOr<RowPlan> planRow(scf::ParallelOp row) {
  DenseMap<Operation *, Mode> modes;
  DenseMap<Value, Holder> holders;
  SmallVector<Value> written; // memory other than the row's allocas
  // Memory each lane holds only its own elements of (a thread's copy of
  // an alloca on the GPU): read through another view, a lane would read
  // elements it never wrote.
  SmallVector<Value> writtenStrided;
  auto writtenAlias = [](ArrayRef<Value> values, Value v) {
    return llvm::any_of(values, [&](Value w) { return mayAlias(v, w); });
  };
  int64_t widest = 0;
  for (Operation &op : row.getBody()->without_terminator()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp) {
      if (op.getNumRegions() == 0 && isMemoryEffectFree(&op))
        continue; // views, constants, index arithmetic: every lane
      if (isa<memref::AllocaOp>(op))
        continue;
      return failure();
    }
    if (!isa<linalg::GenericOp, linalg::FillOp>(op) || !linalgOp.hasPureBufferSemantics())
      return failure();
    SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return failure();
    int64_t size = 1;
    for (int64_t r : ranges)
      size *= r;
    Mode mode = size < 2 ? Mode::Whole : Mode::Strided;
    if (linalgOp.getNumReductionLoops()) {
      // Reductions last, onto one output element.
      int64_t outputs, reduced;
      if (!reductionsLast(linalgOp, ranges, outputs, reduced) || outputs != 1 ||
          !isa<linalg::GenericOp>(op))
        return failure();
      if (size >= 2) {
        mode = Mode::LaneReduced;
        for (unsigned i = 0; i < linalgOp.getNumDpsInits(); ++i)
          if (!combinerOf(linalgOp, i) ||
              !linalgOp.getDpsInits()[i].getDefiningOp<memref::AllocaOp>())
            return failure();
      }
    }
    if (mode != Mode::Whole)
      widest = std::max(widest, size);
    // An op reading, at other elements, memory it writes itself would
    // read another lane's writes.
    if (mode == Mode::Strided)
      for (OpOperand *input : linalgOp.getDpsInputOperands())
        for (OpOperand &init : linalgOp.getDpsInitsMutable())
          if (isa<MemRefType>(input->get().getType()) &&
              mayAlias(input->get(), init.get()) &&
              (input->get() != init.get() || linalgOp.getMatchingIndexingMap(input) !=
                                                 linalgOp.getMatchingIndexingMap(&init)))
            return failure();
    // What it reads must be held by the lane reading it.
    for (OpOperand &operand : op.getOpOperands()) {
      Value v = operand.get();
      if (!isa<MemRefType>(v.getType()))
        continue;
      bool isInit = linalgOp.isDpsInit(&operand);
      if (isInit && (mode == Mode::LaneReduced ||
                     linalgOp.getMatchingBlockArgument(&operand).use_empty()))
        continue; // not read (a reduction reads its own lane's copy)
      auto held = holders.find(v);
      if (held == holders.end()) {
        if (writtenAlias(written, v) || writtenAlias(writtenStrided, v))
          return failure(); // another view of memory written in the row
        continue;
      }
      if (held->second.whole)
        continue;
      if (mode == Mode::Whole || held->second.ranges != ranges ||
          held->second.map != linalgOp.getMatchingIndexingMap(&operand))
        return failure();
    }
    for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
      Holder h;
      h.whole = mode != Mode::Strided;
      h.ranges = ranges;
      h.map = linalgOp.getMatchingIndexingMap(&init);
      holders[init.get()] = h;
      if (!init.get().getDefiningOp<memref::AllocaOp>())
        written.push_back(init.get());
      if (mode == Mode::Strided)
        writtenStrided.push_back(init.get());
    }
    modes[&op] = mode;
  }
  if (widest < kWarp)
    return failure(); // a thread a row is as good
  RowPlan plan;
  plan.modes = std::move(modes);
  plan.widest = widest;
  for (auto alloca : row.getBody()->getOps<memref::AllocaOp>())
    if (isLanePrivate(alloca, plan.modes))
      plan.lanePrivate.insert(alloca);
  return plan;
}

/// Whether `op`, a reduction at the top of a function (no row kernel
/// around it), runs better with a warp an output element: its reduction
/// dims last, at least 32 elements each output, an input read along the
/// innermost reduction dim in its innermost dim (so that the lanes'
/// loads are coalesced; otherwise a thread an output element is).
bool warpPerOutput(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t outputs, reduced;
  if (!op.getNumReductionLoops() || llvm::any_of(ranges, ShapedType::isDynamic) ||
      !reductionsLast(op, ranges, outputs, reduced) || reduced < kWarp)
    return false;
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
    if (!combinerOf(op, i))
      return false;
  AffineExpr innermost = getAffineDimExpr(ranges.size() - 1, op.getContext());
  bool along = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    for (Value init : op.getDpsInits())
      if (isa<MemRefType>(input->get().getType()) && mayAlias(input->get(), init))
        return false; // it reads what lane 0 writes
    AffineMap map = op.getMatchingIndexingMap(input);
    for (auto [k, expr] : llvm::enumerate(map.getResults()))
      if (expr.isFunctionOfDim(ranges.size() - 1)) {
        if (k + 1 != map.getNumResults() || expr != innermost)
          return false;
        along = true;
      }
  }
  return along;
}

} // namespace kiln::cuda
