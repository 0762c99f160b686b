//===- LibraryClaims.cpp - what every backend's library calls share -------===//
//
// Marking an op as a library call, describing a kernel's epilogue, and the
// bufferisation of `kiln.library_call` into a call of the runtime, for
// every backend that hands ops to a vendor library (CPU: oneDNN; CUDA:
// cuBLASLt).
//
//===----------------------------------------------------------------------===//

#include "backends/common/LibraryClaims.h"

#include "compiler/Lowering/KilnToLinalg.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/Matchers.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln::library {

std::vector<int64_t> dimsOf(Type type) {
  std::vector<int64_t> dims;
  for (int64_t d : cast<RankedTensorType>(type).getShape())
    dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return dims;
}

/// Vendor libraries reject (or divide by) zero-size dims; generated code
/// handles them.
bool hasZeroDim(ArrayRef<Type> types) {
  return llvm::any_of(types, [](Type t) {
    return llvm::is_contained(cast<RankedTensorType>(t).getShape(), 0);
  });
}

/// The operand a call's output starts as, if any.
std::optional<unsigned> residualOperand(Operation *op) {
  if (auto index = op->getAttrOfType<IntegerAttr>(kResidualAttr))
    return static_cast<unsigned>(index.getInt());
  return std::nullopt;
}

/// The library call an op was marked as, if any.
std::optional<unsigned> callIndex(Operation *op) {
  if (!op)
    return std::nullopt;
  if (auto id = op->getAttrOfType<IntegerAttr>(kCallAttr))
    return static_cast<unsigned>(id.getInt());
  return std::nullopt;
}

/// The sigmoid of an epilogue's SiLU when `op` is its mul, x * sigmoid(x)
/// (kiln-fuse puts the sigmoid right before it); null otherwise.
static SigmoidOp siluSigmoid(Operation *op) {
  auto sigmoid = isa_and_nonnull<MulOp>(op) ? dyn_cast_or_null<SigmoidOp>(op->getPrevNode())
                                            : nullptr;
  if (!sigmoid || !llvm::is_contained(op->getOperands(), sigmoid.getResult()) ||
      !llvm::is_contained(op->getOperands(), sigmoid.getInput()))
    return nullptr;
  return sigmoid;
}

/// The hard sigmoid or HardSwish that ends an epilogue kernel's body and
/// starts with `op`, its mul by alpha; nullopt otherwise.
static std::optional<HardActivation> hardActivationAt(Operation *op) {
  if (!isa<MulOp>(op) || !op->hasOneUse())
    return std::nullopt;
  Operation *last = op;
  for (int step = 0; step < 3 && last->hasOneUse() && !isa<YieldOp>(*last->getUsers().begin());
       ++step)
    last = *last->getUsers().begin();
  std::optional<HardActivation> hard = matchHardSwish(dyn_cast<MulOp>(last));
  if (!hard)
    hard = matchHardSigmoid(dyn_cast<ClipOp>(last));
  if (!hard || hard->ops.front() != op || !hard->ops.back()->hasOneUse() ||
      !isa<YieldOp>(*hard->ops.back()->getUsers().begin()))
    return std::nullopt;
  return hard;
}

/// Adds an epilogue kernel's bias, residual and activation to `call`;
/// fails on an op no library epilogue covers (each backend then checks
/// what its library takes). The kernel's body is the
/// root, then the epilogue in kiln-fuse's order; the kernel's operands are
/// the root's two, then what the epilogue reads, in order.
LogicalResult describeEpilogue(KernelOp kernel, LibraryCall &call) {
  auto ops = llvm::to_vector(llvm::map_range(kernel.bodyOps(), [](Operation &op) { return &op; }));
  // The ops of a hard sigmoid or HardSwish, taken as one activation.
  SmallPtrSet<Operation *, 4> taken;
  for (Operation *op : llvm::drop_begin(ops)) {
    if (taken.contains(op) || (isa<ConstantOp>(op) && splatValue(op->getResult(0))))
      continue;
    if (std::optional<HardActivation> hard = hardActivationAt(op)) {
      call.epilogue.activation = hard->ops.size() == 4 ? LibraryActivation::HardSwish
                                                       : LibraryActivation::HardSigmoid;
      call.epilogue.alpha = static_cast<float>(hard->alpha);
      call.epilogue.beta = static_cast<float>(hard->beta);
      taken.insert(hard->ops.begin(), hard->ops.end());
    } else if (auto add = dyn_cast<AddOp>(op)) {
      // One operand is the chain so far, the other a kernel operand.
      auto other = dyn_cast<BlockArgument>(add.getLhs().getDefiningOp() ? add.getRhs()
                                                                        : add.getLhs());
      if (!other || other.getArgNumber() < 2)
        return failure();
      bool isBias = other.getType() != op->getResult(0).getType();
      LibraryEpilogue &epilogue = call.epilogue;
      if (isBias && !epilogue.bias && !epilogue.residual) {
        epilogue.bias = true;
        epilogue.biasRank = cast<RankedTensorType>(other.getType()).getRank();
      }
      else if (!isBias && !epilogue.residual) {
        epilogue.residual = true;
        // The output buffer starts as the residual (oneDNN's sum post-op).
        kernel->setAttr(kResidualAttr, IntegerAttr::get(IntegerType::get(kernel.getContext(), 64),
                                                        other.getArgNumber()));
      }
      else
        return failure();
    } else if (isa<ReluOp>(op)) {
      call.epilogue.activation = LibraryActivation::Relu;
    } else if (auto clip = dyn_cast<ClipOp>(op)) {
      call.epilogue.activation = LibraryActivation::Clip;
      call.epilogue.alpha = static_cast<float>(clip.getMin().convertToDouble());
      call.epilogue.beta = static_cast<float>(clip.getMax().convertToDouble());
    } else if (isa<SigmoidOp>(op)) {
      call.epilogue.activation = LibraryActivation::Sigmoid;
    } else if (isa<MulOp>(op)) {
      if (!siluSigmoid(op) || call.epilogue.activation != LibraryActivation::Sigmoid)
        return failure();
      call.epilogue.activation = LibraryActivation::Silu;
      call.epilogue.alpha = 1.0f; // oneDNN's swish: x * sigmoid(alpha * x)
    } else if (isa<TanhOp>(op)) {
      call.epilogue.activation = LibraryActivation::Tanh;
    } else if (auto gelu = dyn_cast<GeluOp>(op)) {
      call.epilogue.activation = gelu.getApproximation() == GeluApproximation::tanh
                                     ? LibraryActivation::GeluTanh
                                     : LibraryActivation::GeluErf;
    } else {
      return failure();
    }
  }
  // Operands beyond the root's must be exactly the bias and residual.
  size_t extra = kernel.getInputs().size() - 2;
  if (extra != static_cast<size_t>(call.epilogue.bias) + static_cast<size_t>(call.epilogue.residual))
    return failure();
  return success();
}

void moveLocations(Operation *from, Operation *to, ArrayRef<Location> locations) {
  auto parts = [](Operation *op) {
    if (auto fused = dyn_cast<FusedLoc>(op->getLoc()))
      return SmallVector<Location>(fused.getLocations());
    return SmallVector<Location>{op->getLoc()};
  };
  SmallVector<Location> kept, grown;
  if (to)
    grown = parts(to);
  for (Location loc : parts(from))
    (llvm::is_contained(locations, loc) ? grown : kept).push_back(loc);
  from->setLoc(FusedLoc::get(from->getContext(), kept));
  if (to)
    to->setLoc(FusedLoc::get(to->getContext(), grown));
}

bool peelActivation(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  Operation *last = yield ? yield->getOperand(0).getDefiningOp() : nullptr;
  if (kernel->getNumResults() != 1 || !last || !last->hasOneUse())
    return false;
  // The activation's ops in body order, and x, what they read.
  SmallVector<Operation *, 4> ops;
  Value x;
  if (SigmoidOp sigmoid = siluSigmoid(last); sigmoid && sigmoid->hasOneUse()) {
    ops = {sigmoid, last};
    x = sigmoid.getInput();
  } else if (std::optional<HardActivation> hard = matchHardSwish(dyn_cast<MulOp>(last))) {
    ops = hard->ops;
    x = hard->input;
  } else if (std::optional<HardActivation> hard = matchHardSigmoid(dyn_cast<ClipOp>(last))) {
    ops = hard->ops;
    x = hard->input;
  } else {
    return false;
  }
  if (!llvm::all_of(ArrayRef(ops).drop_back(), [](Operation *op) { return op->hasOneUse(); }))
    return false;
  // Inside, the kernel yields x; after it, the activation of x (with copies
  // of the splat constants it reads).
  yield->setOperand(0, x);
  Value result = kernel->getResult(0);
  OpBuilder b(kernel->getContext());
  b.setInsertionPointAfter(kernel);
  IRMapping map;
  map.map(x, result);
  SmallPtrSet<Operation *, 8> outside;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      if (auto constant = operand.getDefiningOp<ConstantOp>(); constant && !map.contains(operand))
        outside.insert(b.clone(*constant, map));
    outside.insert(b.clone(*op, map));
  }
  result.replaceAllUsesExcept(map.lookup(last->getResult(0)), outside);
  // The call's location no longer names them (kiln inspect --kernels).
  moveLocations(kernel, nullptr,
                llvm::to_vector(llvm::map_range(ops, [](Operation *op) { return op->getLoc(); })));
  llvm::SetVector<Operation *> constants;
  for (Operation *op : llvm::reverse(ops)) {
    for (Value operand : op->getOperands())
      if (auto constant = operand.getDefiningOp<ConstantOp>())
        constants.insert(constant);
    op->erase();
  }
  for (Operation *constant : constants)
    if (constant->use_empty())
      constant->erase();
  return true;
}

/// A convolution's or pool's window over the spatial dims of `call`, the
/// claim of `op`: [extent..., stride..., low padding..., high padding...,
/// ceil mode]; empty for another kind or when every output dim is static.
static SmallVector<int64_t> outputWindow(Operation *op, const LibraryCall &call) {
  if ((call.kind != LibraryKind::Convolution && call.kind != LibraryKind::Pool) ||
      call.output.size() < 3 || !llvm::is_contained(llvm::drop_begin(call.output, 2), -1))
    return {};
  size_t spatial = call.output.size() - 2;
  std::vector<int64_t> strides = call.param("strides"), pads = call.param("pads");
  std::vector<int64_t> kernel = call.param("kernel"), dilations = call.param("dilations");
  SmallVector<int64_t> extents, window;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = call.kind == LibraryKind::Pool ? kernel[i] : call.weight[2 + i];
    int64_t dilation = dilations.empty() ? 1 : dilations[i];
    window.push_back((size - 1) * dilation + 1);
  }
  window.append(strides.begin(), strides.end());
  window.append(pads.begin(), pads.end());
  // A claimed kernel's root, the pool, is its first op.
  if (auto kernel = dyn_cast<KernelOp>(op); kernel && !kernel.getBody().front().empty())
    op = &*kernel.bodyOps().begin();
  bool ceil = false;
  if (auto pool = dyn_cast<MaxPoolOp>(op))
    ceil = pool.getCeilMode();
  if (auto pool = dyn_cast<AvgPoolOp>(op))
    ceil = pool.getCeilMode();
  window.push_back(ceil);
  return window;
}

void markLibraryCall(Operation *op, LibraryCall call, std::vector<LibraryCall> &calls) {
  op->setAttr(kCallAttr, IntegerAttr::get(IntegerType::get(op->getContext(), 32), calls.size()));
  // The inputs and the weight the code passes before the output.
  size_t inputs = call.operands().size() - 1;
  op->setAttr(kInputsAttr, IntegerAttr::get(IntegerType::get(op->getContext(), 64), inputs));
  SmallVector<int64_t> window = outputWindow(op, call);
  if (!window.empty())
    op->setAttr(kOutputWindowAttr, DenseI64ArrayAttr::get(op->getContext(), window));
  calls.push_back(std::move(call));
}

void absorbMatmulTransposes(ModuleOp module, std::vector<LibraryCall> &calls,
                            llvm::function_ref<bool(const LibraryCall &, int)> accepts) {
  SmallVector<Operation *> claimed;
  module.walk([&](Operation *op) {
    if (op->hasAttr(kCallAttr))
      claimed.push_back(op);
  });
  for (Operation *op : claimed) {
    std::optional<unsigned> id = callIndex(op);
    LibraryCall &call = calls[*id];
    if (call.kind != LibraryKind::Matmul || op->getNumOperands() < 2 || op->getNumResults() != 1)
      continue;
    SmallVector<Value> operands(op->getOperands());
    std::vector<int64_t> transposes = {0, 0};
    for (int k = 0; k < 2; ++k) {
      auto transpose = operands[k].getDefiningOp<TransposeOp>();
      if (!transpose || transpose.getInput().getDefiningOp<ConstantOp>() || !accepts(call, k))
        continue;
      // p = q o (the last two swapped), q the permutation with its last two
      // entries swapped. When q keeps the last dim (p moves it to the
      // second last: a sequence-first attention's K^T, [1, 2, 0]), the
      // matmul reads transpose(x, q) transposed: q moves whole rows, which
      // costs a fraction of p (and nothing when q is the identity).
      SmallVector<int64_t> q(transpose.getPermutation());
      int64_t rank = static_cast<int64_t>(q.size());
      if (rank < 2 || q[rank - 2] != rank - 1)
        continue;
      std::swap(q[rank - 2], q[rank - 1]);
      Value read = transpose.getInput();
      if (!isIdentityPermutation(q)) {
        auto type = cast<RankedTensorType>(transpose.getType());
        SmallVector<int64_t> shape(type.getShape());
        std::swap(shape[rank - 2], shape[rank - 1]);
        OpBuilder b(transpose);
        read = TransposeOp::create(b, transpose.getLoc(),
                                   RankedTensorType::get(shape, type.getElementType()),
                                   transpose.getInput(), b.getDenseI64ArrayAttr(q));
      }
      operands[k] = read;
      transposes[k] = 1;
      (k == 0 ? call.input : call.weight) = dimsOf(read.getType());
    }
    if (!transposes[0] && !transposes[1])
      continue;
    call.params.push_back({"transposes", transposes});
    OpBuilder b(op);
    auto library = LibraryCallOp::create(b, op->getLoc(), op->getResult(0).getType(),
                                         b.getI32IntegerAttr(static_cast<int32_t>(*id)), operands);
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (attr.getName() != kCallAttr)
        library->setAttr(attr.getName(), attr.getValue());
    op->getResult(0).replaceAllUsesWith(library.getResult());
    op->erase();
  }
}

void callExternal(RewriterBase &rewriter, Operation *op, llvm::StringRef name, ValueRange args) {
  // One private declaration per name, typed like the first call's operands.
  auto module = op->getParentOfType<ModuleOp>();
  Location loc = op->getLoc();
  if (!module.lookupSymbol<func::FuncOp>(name)) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    auto decl = func::FuncOp::create(rewriter, loc, name,
                                     rewriter.getFunctionType(args.getTypes(), {}));
    decl.setPrivate();
    decl->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
  }
  func::CallOp::create(rewriter, loc, name, TypeRange{}, args);
}

namespace {

/// A contiguous buffer of `value` (copied when its layout is strided).
FailureOr<Value> contiguousBuffer(RewriterBase &rewriter, Location loc, Value tensor,
                                  const bufferization::BufferizationOptions &options,
                                  bufferization::BufferizationState &state) {
  FailureOr<Value> buffer = bufferization::getBuffer(rewriter, tensor, options, state);
  if (failed(buffer))
    return failure();
  auto type = cast<MemRefType>(buffer->getType());
  if (type.getLayout().isIdentity())
    return buffer;
  auto contiguous = MemRefType::get(type.getShape(), type.getElementType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(memref::DimOp::create(rewriter, loc, *buffer, d));
  Value copy = memref::AllocOp::create(rewriter, loc, contiguous, sizes);
  memref::CopyOp::create(rewriter, loc, *buffer, copy);
  return copy;
}


/// Bufferises `kiln.library_call N (input, weight, extras...)` into `call
/// @kiln_library_call_N(input, weight, output, bias?)` (the runtime's
/// operand order). The output is a new buffer, or, for a call with a
/// residual, the residual's buffer, written in place (one-shot
/// bufferisation copies it first when the residual is still needed); a
/// dynamic output dim takes its size from the same dim of the input.
///
/// A call marked `kiln.output_into = c` (writeCallsIntoConcats) has the
/// concatenation's tensor as its last operand and result: its output is
/// the view of channels [c, c + O) of that buffer (O: the weight's dim 0),
/// strided over the batch (the call's `output_batch_stride`); the rest of
/// the buffer is kept (read, as an insertion's destination is).
struct LibraryCallModel
    : bufferization::BufferizableOpInterface::ExternalModel<LibraryCallModel, LibraryCallOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &, const bufferization::AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const bufferization::AnalysisState &) const {
    return writtenOperand(op) == operand.getOperandNumber();
  }
  bufferization::AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                                     const bufferization::AnalysisState &) const {
    if (writtenOperand(op) != operand.getOperandNumber())
      return {};
    return {{op->getResult(0), bufferization::BufferRelation::Equivalent}};
  }
  /// The operand whose buffer the call writes: the residual's, or the
  /// concatenation's it writes into.
  static std::optional<unsigned> writtenOperand(Operation *op) {
    if (op->hasAttr(KilnDialect::OutputIntoAttrHelper::getNameStr()))
      return op->getNumOperands() - 1;
    return residualOperand(op);
  }
  /// The view of `into`'s channels that a call marked `kiln.output_into`
  /// writes: the weight's output channels (dim 0), all of every other dim.
  static FailureOr<Value> intoView(RewriterBase &rewriter, LibraryCallOp call, Value into) {
    Location loc = call.getLoc();
    int64_t channel =
        call->getAttrOfType<IntegerAttr>(KilnDialect::OutputIntoAttrHelper::getNameStr()).getInt();
    auto type = cast<MemRefType>(into.getType());
    auto weight = call.getOperands().size() > 2
                      ? dyn_cast<RankedTensorType>(call.getOperands()[1].getType())
                      : RankedTensorType();
    if (!weight || weight.isDynamicDim(0) || type.getRank() < 2 || type.isDynamicDim(1) ||
        channel + weight.getDimSize(0) > type.getDimSize(1) ||
        call.getType() != call.getOperands().back().getType())
      return call.emitOpError("writes into channel ")
             << channel << " of a buffer its output does not fit";
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0)), sizes,
        strides(type.getRank(), rewriter.getIndexAttr(1));
    offsets[1] = rewriter.getIndexAttr(channel);
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(d == 1 ? OpFoldResult(rewriter.getIndexAttr(weight.getDimSize(0)))
                             : memref::getMixedSize(rewriter, loc, into, d));
    return memref::SubViewOp::create(rewriter, loc, into, offsets, sizes, strides).getResult();
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto call = cast<LibraryCallOp>(op);
    Location loc = op->getLoc();
    std::optional<unsigned> residual = residualOperand(op);
    bool into = op->hasAttr(KilnDialect::OutputIntoAttrHelper::getNameStr());
    auto inputs = op->getAttrOfType<IntegerAttr>(kInputsAttr);
    if (!inputs)
      return op->emitOpError("needs '") << kInputsAttr << "' (set when a backend claims it)";
    SmallVector<Value> buffers;
    Value output, whole;
    for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
      if (into && i + 1 == call.getOperands().size()) {
        FailureOr<Value> buffer = bufferization::getBuffer(rewriter, operand, options, state);
        if (failed(buffer))
          return failure();
        FailureOr<Value> view = intoView(rewriter, call, *buffer);
        if (failed(view))
          return failure();
        whole = *buffer;
        output = *view;
        continue;
      }
      FailureOr<Value> buffer = contiguousBuffer(rewriter, loc, operand, options, state);
      if (failed(buffer))
        return failure();
      if (residual == i)
        output = *buffer;
      else
        buffers.push_back(*buffer);
    }
    size_t leading = static_cast<size_t>(inputs.getInt());
    if (buffers.empty() || leading > buffers.size())
      return op->emitOpError("needs its ") << leading << " inputs";
    auto resultType = cast<RankedTensorType>(call.getType());
    auto outType = MemRefType::get(resultType.getShape(), resultType.getElementType());
    if (!output) {
      // A dynamic dim is the input's (a batch, a matmul's rows), or a
      // convolution's or pool's spatial dim: the windows that fit in it.
      auto window = op->getAttrOfType<DenseI64ArrayAttr>(kOutputWindowAttr);
      int64_t spatial = resultType.getRank() - 2;
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < resultType.getRank(); ++d) {
        if (!resultType.isDynamicDim(d))
          continue;
        Value size = memref::DimOp::create(rewriter, loc, buffers[0], d);
        if (window && d >= 2)
          size = lowering::windowCount(rewriter, loc, size, window[2 * spatial + d - 2],
                                       window[3 * spatial + d - 2], window[d - 2],
                                       window[spatial + d - 2], window[4 * spatial]);
        sizes.push_back(size);
      }
      output = memref::AllocOp::create(rewriter, loc, outType, sizes);
    } else if (!whole && output.getType() != outType) {
      output = memref::CastOp::create(rewriter, loc, outType, output);
    }
    // After the inputs and the weight, before a bias.
    buffers.insert(buffers.begin() + leading, output);
    callExternal(rewriter, op, "kiln_library_call_" + std::to_string(call.getId()), buffers);
    bufferization::replaceOpWithBufferizedValues(rewriter, op, whole ? whole : output);
    return success();
  }
};

} // namespace

void registerLibraryCallBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, KilnDialect *) {
    LibraryCallOp::attachInterface<LibraryCallModel>(*context);
  });
}

} // namespace kiln::library
