//===- MapLoops.cpp - host loop nests onto GPU blocks and threads ---------===//
//
// Implements kiln-gpu-map-loops (Passes.td): every loop nest at the top of
// a function becomes a 2-D scf.parallel (blocks, threads) with the GPU
// mapping attribute, linearised with the innermost dim fastest so that
// neighbouring threads touch neighbouring elements. Where every access
// along the innermost dim is provably 16-byte aligned, a thread takes 16
// bytes' worth of the narrowest element accessed (4 f32, 2 i64, 8 f16, 16
// i8) with one vector load or store of each buffer (ld.global.v4.b32,
// ld.global.v2.b64; wider elements of the same loop take several).
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Passes.h"

#include "backends/common/StringCalls.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_GPUMAPLOOPS
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {
namespace {

/// Whether `op` (or an op nested in it) reads or writes memory: what
/// must run on the device once buffers live there.
static bool touchesMemory(Operation *op) {
  bool touches = false;
  op->walk([&](Operation *inner) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp>(inner) ||
        inner->getName().getDialectNamespace() == "vector")
      touches = true;
  });
  return touches;
}

/// Bytes of the narrowest element accessed along the innermost dim that
/// a thread takes at once: one 16-byte access.
constexpr int64_t kVectorBytes = 16;

/// Bytes of an element a vector access may take (8, 16, 32 or 64 bits:
/// not i1, which LLVM packs into bits in a vector), or 0.
static int64_t elementBytes(Type element) {
  if (!element.isIntOrFloat())
    return 0;
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits == 8 || bits == 16 || bits == 32 || bits == 64 ? bits / 8 : 0;
}

/// Whether memref `v`'s aligned pointer is 16-byte aligned: an argument
/// of the function or an allocation (the runtime's: 64-byte aligned), a
/// global or stack buffer declared so, or a view of one at a multiple of
/// 16 bytes, through subviews, casts and reshapes (whose offsets the type
/// carries).
static bool alignedBase(Value v) {
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!def) {
      Block *owner = cast<BlockArgument>(v).getOwner();
      return owner->isEntryBlock() && isa<func::FuncOp>(owner->getParentOp());
    }
    if (isa<memref::AllocOp>(def))
      return true;
    if (auto alloca = dyn_cast<memref::AllocaOp>(def))
      return alloca.getAlignment().value_or(0) >= 16;
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(def, get.getNameAttr());
      return global && global.getAlignment().value_or(0) >= 16;
    }
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      APInt shift;
      if (!matchPattern(view.getByteShift(), m_ConstantInt(&shift)) || shift.getSExtValue() % 16)
        return false;
      v = view.getSource();
      continue;
    }
    if (!isa<memref::SubViewOp, memref::CastOp, memref::ReinterpretCastOp,
             memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
}

/// Whether memref `v` is host memory, through views: a global (the
/// artifact's constants; a kernel gets a device copy, the host reads its
/// own) or a stack buffer of the host code.
static bool hostMemory(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<memref::GetGlobalOp, memref::AllocaOp>(def))
      return true;
    if (!isa<memref::SubViewOp, memref::CastOp, memref::ReinterpretCastOp,
             memref::ExpandShapeOp, memref::CollapseShapeOp, memref::ViewOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// Whether an access of `element`s to `memref` at `indices`, the last
/// `inner` (the loop's innermost index, a multiple of `width`) and none of
/// the others varying with it (not in `varying`), can be one access of
/// `width` elements at a 16-byte aligned address (`width` elements are
/// 16 bytes or a multiple of them): innermost stride 1, the other strides
/// and the offset multiples of `width`, a 16-byte aligned base.
static bool vectorAccess(Value memref, ValueRange indices, Type element, Value inner,
                         const llvm::DenseSet<Value> &varying, int64_t width) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 0 || indices.back() != inner || varying.contains(memref) ||
      !elementBytes(element))
    return false;
  for (Value index : indices.drop_back())
    if (index == inner || varying.contains(index))
      return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1 ||
      ShapedType::isDynamic(offset) || offset % width)
    return false;
  for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
    if (ShapedType::isDynamic(stride) || stride % width)
      return false;
  return alignedBase(memref);
}

/// The elements a thread of `p` takes along its innermost dim: 16 bytes
/// of the narrowest element its loads and stores along it access, when
/// the dim starts at 0, steps by 1, counts a multiple of them, and its
/// index is used only as the last index of loads and stores
/// `vectorAccess` allows (the body flat: no nested regions); else 1.
static int64_t vectorWidth(scf::ParallelOp p) {
  size_t last = p.getNumLoops() - 1;
  Value inner = p.getInductionVars()[last];
  int64_t narrowest = 0;
  for (Operation &op : p.getBody()->without_terminator()) {
    Type element;
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && llvm::is_contained(load.getIndices(), inner))
      element = load.getType();
    else if (auto store = dyn_cast<memref::StoreOp>(op);
             store && llvm::is_contained(store.getIndices(), inner))
      element = store.getValue().getType();
    else
      continue;
    int64_t bytes = elementBytes(element);
    if (!bytes)
      return 1;
    narrowest = narrowest ? std::min(narrowest, bytes) : bytes;
  }
  if (!narrowest)
    return 1;
  int64_t width = kVectorBytes / narrowest;
  APInt count;
  if (!matchPattern(p.getLowerBound()[last], m_Zero()) ||
      !matchPattern(p.getStep()[last], m_One()) ||
      !matchPattern(p.getUpperBound()[last], m_ConstantInt(&count)) ||
      count.getSExtValue() % width)
    return 1;
  llvm::DenseSet<Value> varying; // what differs between the 4 elements
  bool any = false;
  for (Operation &op : p.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return 1;
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && llvm::is_contained(load.getIndices(), inner)) {
      if (!vectorAccess(load.getMemRef(), load.getIndices(), load.getType(), inner, varying,
                        width))
        return 1;
      varying.insert(load.getResult());
      any = true;
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op);
        store && llvm::is_contained(store.getIndices(), inner)) {
      if (store.getValue() == inner ||
          !vectorAccess(store.getMemRef(), store.getIndices(), store.getValue().getType(), inner,
                        varying, width))
        return 1;
      any = true;
      continue;
    }
    if (llvm::is_contained(op.getOperands(), inner))
      return 1;
    if (llvm::any_of(op.getOperands(), [&](Value v) { return varying.contains(v); }))
      for (Value r : op.getResults())
        varying.insert(r);
  }
  return any ? width : 1;
}

/// `p`'s body for the `width` elements from innermost index `base`
/// (`map` holds the other indices): each access along the innermost dim
/// one vector load or store, every other op once for each element, in the
/// body's order (the elements are independent iterations). On the device
/// an access is 16-byte aligned; `emulate`d, the host's buffers (a
/// caller's, on the CPU) only to their element.
static void cloneVectorised(OpBuilder &b, Location loc, scf::ParallelOp p, IRMapping &map,
                            Value base, int64_t width, bool emulate) {
  Value inner = p.getInductionVars().back();
  auto alignOf = [&](Type element) {
    return llvm::MaybeAlign(emulate ? elementBytes(element) : kVectorBytes);
  };
  SmallVector<IRMapping> elements(width, map);
  auto indicesAt = [&](ValueRange indices) {
    SmallVector<Value> result;
    for (Value index : indices)
      result.push_back(index == inner ? base : elements[0].lookupOrDefault(index));
    return result;
  };
  for (Operation &op : p.getBody()->without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && llvm::is_contained(load.getIndices(), inner)) {
      Value vector = vector::LoadOp::create(
          b, loc, VectorType::get({width}, load.getType()),
          elements[0].lookupOrDefault(load.getMemRef()), indicesAt(load.getIndices()),
          /*nontemporal=*/false, alignOf(load.getType()));
      for (auto [j, element] : llvm::enumerate(elements))
        element.map(load.getResult(), vector::ExtractOp::create(b, loc, vector, int64_t(j)));
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op);
        store && llvm::is_contained(store.getIndices(), inner)) {
      SmallVector<Value> values;
      for (IRMapping &element : elements)
        values.push_back(element.lookupOrDefault(store.getValue()));
      Value vector = vector::FromElementsOp::create(
          b, loc, VectorType::get({width}, store.getValue().getType()), values);
      vector::StoreOp::create(b, loc, vector, elements[0].lookupOrDefault(store.getMemRef()),
                              indicesAt(store.getIndices()), /*nontemporal=*/false,
                              alignOf(store.getValue().getType()));
      continue;
    }
    for (IRMapping &element : elements)
      b.clone(op, element);
  }
}

/// The mapping attribute of a (block, thread) loop.
static void setBlockThreadMapping(scf::ParallelOp loop) {
  MLIRContext *ctx = loop.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping = {
      gpu::ParallelLoopDimMappingAttr::get(ctx, gpu::Processor::BlockX, id, id),
      gpu::ParallelLoopDimMappingAttr::get(ctx, gpu::Processor::ThreadX, id, id)};
  (void)gpu::setMappingAttr(loop, mapping);
}

/// Parallel loops inside a kernel run sequentially in their thread.
static LogicalResult serializeNestedParallel(scf::ParallelOp outer) {
  SmallVector<scf::ParallelOp> nested;
  outer.getBody()->walk([&](scf::ParallelOp p) { nested.push_back(p); });
  // Innermost first, so that each conversion sees a body without others.
  for (scf::ParallelOp p : llvm::reverse(nested)) {
    if (p.getNumResults() != 0)
      return p.emitError("the CUDA backend cannot run a parallel loop with reductions "
                         "inside a kernel");
    OpBuilder b(p);
    IRMapping map;
    scf::buildLoopNest(b, p.getLoc(), p.getLowerBound(), p.getUpperBound(), p.getStep(),
                       [&](OpBuilder &nb, Location, ValueRange ivs) {
                         for (auto [from, to] : llvm::zip(p.getInductionVars(), ivs))
                           map.map(from, to);
                         for (Operation &op : p.getBody()->without_terminator())
                           nb.clone(op, map);
                       });
    p.erase();
  }
  return success();
}

/// A kernel's body may not allocate (the runtime's allocator is on the
/// host) nor call; the memory of constants is passed in, not looked up.
static LogicalResult checkKernelBody(Operation *root) {
  WalkResult result = root->walk([&](Operation *op) {
    if (isa<memref::AllocOp, memref::DeallocOp, memref::ReallocOp>(op)) {
      op->emitError("the CUDA backend cannot allocate inside a kernel (a buffer whose "
                    "size is only known inside a loop)");
      return WalkResult::interrupt();
    }
    if (isa<func::CallOp, func::CallIndirectOp>(op)) {
      op->emitError("the CUDA backend cannot call a function inside a kernel");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Moves the body's memref.get_global ops (pure, no operands) before
/// `loop`, so that outlining passes their memrefs in.
static void hoistGlobals(scf::ParallelOp loop) {
  SmallVector<memref::GetGlobalOp> globals;
  loop.getBody()->walk([&](memref::GetGlobalOp g) { globals.push_back(g); });
  for (memref::GetGlobalOp g : globals)
    g->moveBefore(loop);
}

struct GpuMapLoopsPass : impl::GpuMapLoopsBase<GpuMapLoopsPass> {
  using GpuMapLoopsBase::GpuMapLoopsBase;

  /// `(blocks, threads)` over `total` iterations; `body(b, linear)` fills
  /// the masked body.
  scf::ParallelOp buildMapped(OpBuilder &b, Location loc, Value total, int64_t threadCount,
                              function_ref<void(OpBuilder &, Location, Value)> body) {
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value threads = arith::ConstantIndexOp::create(b, loc, threadCount);
    Value blocks = b.createOrFold<arith::CeilDivUIOp>(loc, total, threads);
    auto mapped = scf::ParallelOp::create(
        b, loc, ValueRange{c0, c0}, ValueRange{blocks, threads}, ValueRange{c1, c1},
        [&](OpBuilder &nb, Location l, ValueRange ivs) {
          Value base = arith::MulIOp::create(nb, l, ivs[0], threads);
          Value linear = arith::AddIOp::create(nb, l, base, ivs[1]);
          Value inside =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, linear, total);
          scf::IfOp::create(nb, l, inside, [&](OpBuilder &ib, Location il) {
            body(ib, il, linear);
            scf::YieldOp::create(ib, il);
          });
        });
    setBlockThreadMapping(mapped);
    return mapped;
  }

  /// Replaces the parallel loop `p` by its mapped form.
  LogicalResult mapParallel(scf::ParallelOp p) {
    if (p.getNumResults() != 0)
      return p.emitError("the CUDA backend cannot map a parallel loop with reductions");
    if (failed(checkKernelBody(p)))
      return failure();
    OpBuilder b(p);
    Location loc = p.getLoc();
    size_t rank = p.getNumLoops();
    int64_t width = vectorWidth(p);
    SmallVector<Value> counts;
    Value total = arith::ConstantIndexOp::create(b, loc, 1);
    for (size_t d = 0; d < rank; ++d) {
      Value extent = b.createOrFold<arith::SubIOp>(loc, p.getUpperBound()[d],
                                                   p.getLowerBound()[d]);
      Value count = matchPattern(p.getStep()[d], m_One())
                        ? extent
                        : b.createOrFold<arith::CeilDivSIOp>(loc, extent, p.getStep()[d]);
      if (d + 1 == rank && width > 1) // groups of `width` (it divides the count)
        count = b.createOrFold<arith::DivUIOp>(
            loc, count, arith::ConstantIndexOp::create(b, loc, width));
      counts.push_back(count);
      total = b.createOrFold<arith::MulIOp>(loc, total, count);
    }
    scf::ParallelOp mapped = buildMapped(b, loc, total, blockSize, [&](OpBuilder &ib,
                                                                       Location il,
                                                                       Value linear) {
      // Innermost dim fastest: consecutive threads, consecutive elements.
      SmallVector<Value> ivs(rank);
      Value rest = linear;
      for (size_t d = rank; d-- > 0;) {
        Value index = d == 0 ? rest : ib.createOrFold<arith::RemUIOp>(il, rest, counts[d]);
        if (d > 0)
          rest = ib.createOrFold<arith::DivUIOp>(il, rest, counts[d]);
        Value scaled = matchPattern(p.getStep()[d], m_One())
                           ? index
                           : ib.createOrFold<arith::MulIOp>(il, index, p.getStep()[d]);
        if (d + 1 == rank && width > 1)
          scaled = ib.createOrFold<arith::MulIOp>(
              il, index, arith::ConstantIndexOp::create(ib, il, width));
        ivs[d] = ib.createOrFold<arith::AddIOp>(il, p.getLowerBound()[d], scaled);
      }
      IRMapping map;
      for (size_t d = 0; d < rank; ++d)
        map.map(p.getInductionVars()[d], ivs[d]);
      if (width > 1) {
        cloneVectorised(ib, il, p, map, ivs.back(), width, emulate);
        return;
      }
      for (Operation &op : p.getBody()->without_terminator())
        ib.clone(op, map);
    });
    p.erase();
    hoistGlobals(mapped);
    return serializeNestedParallel(mapped);
  }

  /// Runs `op` on one thread (a block of one): an op whose results the
  /// host uses cannot (a loop may carry a scalar no one reads after it,
  /// as a topk row's k-th best).
  LogicalResult mapSequential(Operation *op) {
    if (!op->use_empty())
      return op->emitError("the CUDA backend cannot run this on the host: it reads device "
                           "memory into a value the host uses");
    if (failed(checkKernelBody(op)))
      return failure();
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    scf::ParallelOp mapped = buildMapped(b, loc, one, 1, [&](OpBuilder &ib, Location, Value) {
      ib.clone(*op);
    });
    op->erase();
    hoistGlobals(mapped);
    return serializeNestedParallel(mapped);
  }

  /// memref.copy as a parallel loop over the target, then mapped.
  LogicalResult mapCopy(memref::CopyOp copy) {
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    auto type = cast<MemRefType>(copy.getTarget().getType());
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    if (type.getRank() == 0) {
      auto region = scf::ExecuteRegionOp::create(b, loc, TypeRange{});
      b.createBlock(&region.getRegion());
      Value v = memref::LoadOp::create(b, loc, copy.getSource());
      memref::StoreOp::create(b, loc, v, copy.getTarget());
      scf::YieldOp::create(b, loc);
      copy.erase();
      return mapSequential(region);
    }
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      lbs.push_back(c0);
      steps.push_back(c1);
      ubs.push_back(b.createOrFold<memref::DimOp>(loc, copy.getTarget(), d));
    }
    auto loop = scf::ParallelOp::create(
        b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location l, ValueRange ivs) {
          Value v = memref::LoadOp::create(nb, l, copy.getSource(), ivs);
          memref::StoreOp::create(nb, l, v, copy.getTarget(), ivs);
        });
    copy.erase();
    return mapParallel(loop);
  }

  /// `load`, at the top of a function and its value used by the host (a
  /// count that sizes an allocation, a branch), as a read of device memory
  /// by the host: a call of a C-interface function the artifact defines
  /// (kiln_runtime_services.read_device: the work before it finishes
  /// first), recorded in the module's kDeviceReadsAttr. Emulated too (a
  /// copy on the CPU), so that the emulated suites check the reads. A load
  /// of host memory (a constant) stays a load.
  LogicalResult readOnHost(memref::LoadOp load) {
    if (hostMemory(load.getMemRef()))
      return success(); // a constant of the artifact: the host reads its own
    auto type = load.getMemRefType();
    Type element = type.getElementType();
    if (!element.isIndex() && !isa<IntegerType>(element) && !element.isF32() &&
        !element.isF64())
      return load.emitError("the CUDA backend cannot read a ")
             << element << " from device memory on the host";
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    SmallVector<Attribute> reads;
    if (auto known = module->getAttrOfType<ArrayAttr>(kDeviceReadsAttr))
      llvm::append_range(reads, known);
    std::string callee = (kDeviceReadPrefix + llvm::Twine(reads.size())).str();
    reads.push_back(TypeAttr::get(type));
    module->setAttr(kDeviceReadsAttr, ArrayAttr::get(ctx, reads));
    // An i1 is a byte in memory: read as i8, then truncated.
    bool bit = element.isInteger(1);
    Type result = bit ? IntegerType::get(ctx, 8) : element;
    SmallVector<Type> args = {type};
    for (size_t d = 0; d < load.getIndices().size(); ++d)
      args.push_back(IndexType::get(ctx));
    OpBuilder top(ctx);
    top.setInsertionPointToEnd(module.getBody());
    auto decl = func::FuncOp::create(top, load.getLoc(), callee,
                                     top.getFunctionType(args, {result}));
    decl.setPrivate();
    decl->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    OpBuilder b(load);
    SmallVector<Value> operands = {load.getMemRef()};
    llvm::append_range(operands, load.getIndices());
    Value value = func::CallOp::create(b, load.getLoc(), callee, TypeRange{result}, operands)
                      .getResult(0);
    if (bit)
      value = arith::TruncIOp::create(b, load.getLoc(), element, value);
    load.getResult().replaceAllUsesWith(value);
    load.erase();
    return success();
  }

  /// A call of a host function (strings::kFunctionPrefix: a string operation)
  /// on 1-D buffers, whose last operand it writes, as a call of a
  /// C-interface function the artifact defines (kHostCallPrefix + n):
  /// operands in device memory copied to the host (read_device), the
  /// function called on the copies, the last copied back (write_device);
  /// recorded in the module's kHostCallsAttr. Emulated too (copies on the
  /// CPU).
  LogicalResult callOnHost(func::CallOp call) {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    if (call.getNumResults() != 0 || call.getNumOperands() == 0)
      return call.emitError("the CUDA backend runs host function ")
             << call.getCallee() << " only on buffers, writing the last";
    SmallVector<Attribute> args, staged;
    for (Value operand : call.getOperands()) {
      auto type = dyn_cast<MemRefType>(operand.getType());
      if (!type || type.getRank() != 1 || !type.getElementType().isIntOrFloat())
        return call.emitError("the CUDA backend cannot pass ")
               << operand.getType() << " to host function " << call.getCallee()
               << " (1-D buffers of integers or floats only)";
      args.push_back(TypeAttr::get(type));
      staged.push_back(BoolAttr::get(ctx, !hostMemory(operand)));
    }
    SmallVector<Attribute> calls;
    if (auto known = module->getAttrOfType<ArrayAttr>(kHostCallsAttr))
      llvm::append_range(calls, known);
    std::string callee = (kHostCallPrefix + llvm::Twine(calls.size())).str();
    NamedAttribute fields[] = {
        NamedAttribute(StringAttr::get(ctx, "callee"), call.getCalleeAttr().getAttr()),
        NamedAttribute(StringAttr::get(ctx, "args"), ArrayAttr::get(ctx, args)),
        NamedAttribute(StringAttr::get(ctx, "staged"), ArrayAttr::get(ctx, staged))};
    calls.push_back(DictionaryAttr::get(ctx, fields));
    module->setAttr(kHostCallsAttr, ArrayAttr::get(ctx, calls));
    OpBuilder top(ctx);
    top.setInsertionPointToEnd(module.getBody());
    auto decl = func::FuncOp::create(top, call.getLoc(), callee,
                                     top.getFunctionType(call.getOperandTypes(), {}));
    decl.setPrivate();
    decl->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    call.setCallee(callee);
    return success();
  }

  /// A run of scalar code whose values the host uses: its loads become
  /// reads of device memory by the host; the rest stays on the host.
  LogicalResult readOnHost(SmallVectorImpl<Operation *> &group, llvm::DenseSet<Value> &tainted) {
    for (Operation *member : group)
      if (auto load = dyn_cast<memref::LoadOp>(member))
        if (failed(readOnHost(load)))
          return failure();
    group.clear();
    tainted.clear();
    return success();
  }

  /// Scalar code at the top of a block (a 0-d generic lowers to loads,
  /// arithmetic and a store with no loop): each run of loads and what
  /// computes on them up to the store that ends it becomes one region,
  /// which then runs on one thread. A run whose values the host uses (a
  /// count or size the model computes, a branch), or that another loop
  /// nest or call interrupts, reads its loads from device memory on the
  /// host instead (its store then runs on a thread of its own).
  LogicalResult groupScalarCode(Block &block) {
    SmallVector<Operation *> group;
    llvm::DenseSet<Value> tainted;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      bool load = isa<memref::LoadOp>(op);
      bool usesGroup =
          llvm::any_of(op.getOperands(), [&](Value v) { return tainted.contains(v); });
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        if (group.empty())
          continue; // a store of a host value: mapped on its own
        group.push_back(&op);
        llvm::DenseSet<Operation *> members(group.begin(), group.end());
        bool escapes = llvm::any_of(group, [&](Operation *member) {
          return llvm::any_of(member->getUsers(),
                              [&](Operation *user) { return !members.contains(user); });
        });
        if (escapes) {
          group.pop_back();
          if (failed(readOnHost(group, tainted)))
            return failure();
          continue;
        }
        OpBuilder b(&op);
        auto region = scf::ExecuteRegionOp::create(b, op.getLoc(), TypeRange{});
        Block *body = b.createBlock(&region.getRegion());
        for (Operation *member : group)
          member->moveBefore(body, body->end());
        b.setInsertionPointToEnd(body);
        scf::YieldOp::create(b, op.getLoc());
        group.clear();
        tainted.clear();
        continue;
      }
      if ((load || usesGroup) && op.getNumRegions() == 0 && !isa<func::CallOp>(op) &&
          (load || isMemoryEffectFree(&op))) {
        group.push_back(&op);
        for (Value r : op.getResults())
          tainted.insert(r);
        continue;
      }
      if (!group.empty() && (usesGroup || op.getNumRegions() > 0 || isa<func::CallOp>(op)))
        if (failed(readOnHost(group, tainted)))
          return failure();
    }
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (Block &block : func.getBody())
        if (failed(groupScalarCode(block)))
          return signalPassFailure();
      for (Block &block : func.getBody()) {
        for (Operation &op : llvm::make_early_inc_range(block)) {
          LogicalResult done = success();
          if (auto p = dyn_cast<scf::ParallelOp>(op))
            done = mapParallel(p);
          else if (auto copy = dyn_cast<memref::CopyOp>(op))
            done = mapCopy(copy);
          else if (op.getNumRegions() > 0 && touchesMemory(&op))
            done = mapSequential(&op);
          else if (isa<memref::StoreOp>(op))
            done = mapSequential(&op);
          else if (auto load = dyn_cast<memref::LoadOp>(op); load && !load.use_empty())
            done = readOnHost(load);
          else if (auto call = dyn_cast<func::CallOp>(op);
                   call && call.getCallee().starts_with(strings::kFunctionPrefix))
            done = callOnHost(call);
          if (failed(done))
            return signalPassFailure();
        }
      }
    }
  }
};

} // namespace
} // namespace kiln::cuda
