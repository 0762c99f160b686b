//===- LibraryCalls.cpp - conv / matmul handed to the runtime -------------===//

#include "backends/cpu/LibraryCalls.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln::cpu {

static constexpr llvm::StringLiteral kCallAttr = KilnDialect::LibraryCallAttrHelper::getNameStr();
/// On a call whose output starts as one of its operands (the residual):
/// that operand's index.
static constexpr llvm::StringLiteral kResidualAttr =
    KilnDialect::ResidualOperandAttrHelper::getNameStr();

static std::vector<int64_t> dimsOf(Type type) {
  std::vector<int64_t> dims;
  for (int64_t d : cast<RankedTensorType>(type).getShape())
    dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return dims;
}

/// oneDNN rejects (or divides by) zero-size dims; generated code handles
/// them.
static bool hasZeroDim(ArrayRef<Type> types) {
  return llvm::any_of(types, [](Type t) {
    return llvm::is_contained(cast<RankedTensorType>(t).getShape(), 0);
  });
}

/// oneDNN runs f32 2-D convolutions whose only dynamic dim is the batch.
static bool runsInOneDnn(ConvOp conv) {
  RankedTensorType in = conv.getInput().getType(), w = conv.getWeight().getType();
  RankedTensorType out = conv.getType();
  if (!in.getElementType().isF32() || in.getRank() != 4 || !w.hasStaticShape() ||
      hasZeroDim({in, w, out}))
    return false;
  for (int64_t d = 1; d < 4; ++d)
    if (in.isDynamicDim(d) || out.isDynamicDim(d))
      return false;
  return true;
}

/// oneDNN runs f32 matmuls of rank <= 3 whose dynamic dims are leading dims
/// of the lhs that the output shares.
static bool runsInOneDnn(MatmulOp matmul) {
  RankedTensorType lhs = matmul.getLhs().getType(), rhs = matmul.getRhs().getType();
  RankedTensorType out = matmul.getType();
  if (!lhs.getElementType().isF32() || out.getRank() > 3 || !rhs.hasStaticShape() ||
      hasZeroDim({lhs, rhs, out}))
    return false;
  if (lhs.getRank() != out.getRank())
    return false;
  for (int64_t d = 0; d < out.getRank(); ++d)
    if (out.isDynamicDim(d) && (d >= out.getRank() - 1 || !lhs.isDynamicDim(d)))
      return false;
  return !lhs.isDynamicDim(lhs.getRank() - 1);
}

/// The call of a convolution or matmul `root`, without epilogue.
static LibraryCall describeRoot(Operation *root) {
  LibraryCall call;
  if (auto matmul = dyn_cast<MatmulOp>(root)) {
    call.kind = LibraryKind::Matmul;
    call.input = dimsOf(matmul.getLhs().getType());
    call.weight = dimsOf(matmul.getRhs().getType());
    call.output = dimsOf(matmul.getType());
    return call;
  }
  auto conv = cast<ConvOp>(root);
  call.kind = LibraryKind::Convolution;
  call.input = dimsOf(conv.getInput().getType());
  call.weight = dimsOf(conv.getWeight().getType());
  call.output = dimsOf(conv.getType());
  call.params = {
      {"strides", {conv.getStrides().begin(), conv.getStrides().end()}},
      {"dilations", {conv.getDilations().begin(), conv.getDilations().end()}},
      {"pads", {conv.getPads().begin(), conv.getPads().end()}},
      {"groups", {static_cast<int64_t>(conv.getGroups())}}};
  return call;
}

static bool runsInOneDnn(Operation *root) {
  if (auto conv = dyn_cast<ConvOp>(root))
    return runsInOneDnn(conv);
  if (auto matmul = dyn_cast<MatmulOp>(root))
    return runsInOneDnn(matmul);
  return false;
}

/// Adds an epilogue kernel's bias, residual and activation to `call`;
/// fails on an op oneDNN's post-ops do not cover. The kernel's body is the
/// root, then the epilogue in kiln-fuse's order; the kernel's operands are
/// the root's two, then what the epilogue reads, in order.
static LogicalResult describeEpilogue(KernelOp kernel, LibraryCall &call) {
  auto ops = llvm::to_vector(llvm::map_range(kernel.bodyOps(), [](Operation &op) { return &op; }));
  for (Operation *op : llvm::drop_begin(ops)) {
    if (auto add = dyn_cast<AddOp>(op)) {
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

std::vector<LibraryCall> assignLibraryCalls(ModuleOp module, const LibraryCallOptions &options) {
  std::vector<LibraryCall> calls;
  auto mark = [&](Operation *op, LibraryCall call) {
    op->setAttr(kCallAttr, IntegerAttr::get(IntegerType::get(op->getContext(), 32),
                                            calls.size()));
    calls.push_back(std::move(call));
  };
  // In program order: kernels as a whole, bare convolutions and matmuls.
  // oneDNN 2.6 runs plain-layout (NCHW) convolutions with post-ops slower
  // than without them followed by Kiln's own fused loop nest (resnet50,
  // 2 threads: sum + relu post-ops 80 ms, bias only 60 ms, none 58 ms),
  // so a convolution kernel is dissolved (unless asked otherwise): oneDNN
  // runs the convolution, the epilogue is generated. A matmul (oneDNN's
  // brgemm) takes its whole epilogue.
  SmallVector<KernelOp> kernels;
  module.walk([&](KernelOp kernel) {
    if (options.convolutionPostOps)
      return;
    if (kernel.getKind() == KernelKind::epilogue && !kernel.getBody().front().without_terminator().empty())
      kernels.push_back(kernel);
  });
  for (KernelOp kernel : kernels) {
    Operation *root = &*kernel.bodyOps().begin();
    if (!isa<ConvOp>(root) || !runsInOneDnn(root))
      continue;
    kernel.inlineBody();
  }
  // In program order: kernels as a whole, bare convolutions and matmuls.
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      if (kernel.getKind() != KernelKind::epilogue || kernel.getBody().front().empty())
        return WalkResult::skip();
      Operation *root = &*kernel.bodyOps().begin();
      if (!runsInOneDnn(root))
        return WalkResult::skip();
      LibraryCall call = describeRoot(root);
      if (succeeded(describeEpilogue(kernel, call)))
        mark(kernel, std::move(call));
      else
        kernel->removeAttr(kResidualAttr);
      return WalkResult::skip();
    }
    if (isa<ConvOp, MatmulOp>(op) && runsInOneDnn(op))
      mark(op, describeRoot(op));
    return WalkResult::advance();
  });
  return calls;
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

/// The operand a call's output starts as, if any.
static std::optional<unsigned> residualOperand(Operation *op) {
  if (auto index = op->getAttrOfType<IntegerAttr>(kResidualAttr))
    return static_cast<unsigned>(index.getInt());
  return std::nullopt;
}

/// Bufferises `kiln.library_call N (input, weight, extras...)` into `call
/// @kiln_library_call_N(input, weight, output, bias?)` (the runtime's
/// operand order). The output is a new buffer, or, for a call with a
/// residual, the residual's buffer, written in place (one-shot
/// bufferisation copies it first when the residual is still needed); a
/// dynamic output dim takes its size from the same dim of the input.
struct LibraryCallModel
    : bufferization::BufferizableOpInterface::ExternalModel<LibraryCallModel, LibraryCallOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &, const bufferization::AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const bufferization::AnalysisState &) const {
    return residualOperand(op) == operand.getOperandNumber();
  }
  bufferization::AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                                     const bufferization::AnalysisState &) const {
    if (residualOperand(op) != operand.getOperandNumber())
      return {};
    return {{op->getResult(0), bufferization::BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto call = cast<LibraryCallOp>(op);
    Location loc = op->getLoc();
    std::optional<unsigned> residual = residualOperand(op);
    SmallVector<Value> buffers;
    Value output;
    for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
      FailureOr<Value> buffer = contiguousBuffer(rewriter, loc, operand, options, state);
      if (failed(buffer))
        return failure();
      if (residual == i)
        output = *buffer;
      else
        buffers.push_back(*buffer);
    }
    if (buffers.size() < 2)
      return op->emitOpError("needs an input and a weight");
    auto resultType = cast<RankedTensorType>(call.getType());
    auto outType = MemRefType::get(resultType.getShape(), resultType.getElementType());
    if (!output) {
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < resultType.getRank(); ++d)
        if (resultType.isDynamicDim(d))
          sizes.push_back(memref::DimOp::create(rewriter, loc, buffers[0], d));
      output = memref::AllocOp::create(rewriter, loc, outType, sizes);
    } else if (output.getType() != outType) {
      output = memref::CastOp::create(rewriter, loc, outType, output);
    }
    buffers.insert(buffers.begin() + 2, output);
    // One private declaration per call, typed like its operands.
    std::string name = "kiln_library_call_" + std::to_string(call.getId());
    auto module = op->getParentOfType<ModuleOp>();
    auto callType = rewriter.getFunctionType(ValueRange(buffers).getTypes(), {});
    if (!module.lookupSymbol<func::FuncOp>(name)) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      auto decl = func::FuncOp::create(rewriter, loc, name, callType);
      decl.setPrivate();
      decl->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
    }
    func::CallOp::create(rewriter, loc, name, TypeRange{}, buffers);
    bufferization::replaceOpWithBufferizedValues(rewriter, op, output);
    return success();
  }
};

} // namespace

void registerLibraryCallBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, KilnDialect *) {
    LibraryCallOp::attachInterface<LibraryCallModel>(*context);
  });
}

} // namespace kiln::cpu
