//===- LibraryCalls.cpp - conv handed to the runtime ----------------------===//

#include "backends/cpu/LibraryCalls.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "kiln/kiln_model_abi.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln::cpu {

static constexpr llvm::StringLiteral kCallAttr = "kiln.library_call";

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

std::vector<LibraryCall> assignLibraryCalls(ModuleOp module) {
  std::vector<LibraryCall> calls;
  auto mark = [&](Operation *op) {
    op->setAttr(kCallAttr, IntegerAttr::get(IntegerType::get(op->getContext(), 32),
                                            calls.size()));
  };
  module.walk([&](MatmulOp matmul) {
    if (!runsInOneDnn(matmul))
      return;
    LibraryCall call;
    call.kind = KILN_LIBRARY_MATMUL;
    call.input = dimsOf(matmul.getLhs().getType());
    call.weight = dimsOf(matmul.getRhs().getType());
    call.output = dimsOf(matmul.getType());
    mark(matmul);
    calls.push_back(std::move(call));
  });
  module.walk([&](ConvOp conv) {
    if (!runsInOneDnn(conv))
      return;
    LibraryCall call;
    call.kind = KILN_LIBRARY_CONV;
    call.input = dimsOf(conv.getInput().getType());
    call.weight = dimsOf(conv.getWeight().getType());
    call.output = dimsOf(conv.getType());
    call.strides.assign(conv.getStrides().begin(), conv.getStrides().end());
    call.dilations.assign(conv.getDilations().begin(), conv.getDilations().end());
    call.pads.assign(conv.getPads().begin(), conv.getPads().end());
    call.groups = static_cast<int64_t>(conv.getGroups());
    mark(conv);
    calls.push_back(std::move(call));
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

/// Bufferises a marked op into `call @kiln_library_call_N(operands...,
/// output)`; a dynamic output dim takes its size from the same dim of the
/// first operand.
template <typename OpTy>
struct LibraryCallModel
    : bufferization::BufferizableOpInterface::ExternalModel<LibraryCallModel<OpTy>, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &, const bufferization::AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &, const bufferization::AnalysisState &) const {
    return false;
  }
  bufferization::AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                                     const bufferization::AnalysisState &) const {
    return {};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto id = op->getAttrOfType<IntegerAttr>(kCallAttr);
    if (!id)
      return op->emitOpError("has no library call assigned and no lowering");
    Location loc = op->getLoc();
    FailureOr<Value> input = contiguousBuffer(rewriter, loc, op->getOperand(0), options, state);
    FailureOr<Value> weight = contiguousBuffer(rewriter, loc, op->getOperand(1), options, state);
    if (failed(input) || failed(weight))
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      if (resultType.isDynamicDim(d))
        sizes.push_back(memref::DimOp::create(rewriter, loc, *input, d));
    auto outType = MemRefType::get(resultType.getShape(), resultType.getElementType());
    Value output = memref::AllocOp::create(rewriter, loc, outType, sizes);
    // One private declaration per call, typed like its operands.
    std::string name = "kiln_library_call_" + std::to_string(id.getInt());
    auto module = op->getParentOfType<ModuleOp>();
    auto callType = rewriter.getFunctionType(
        TypeRange{input->getType(), weight->getType(), outType}, {});
    if (!module.lookupSymbol<func::FuncOp>(name)) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      auto decl = func::FuncOp::create(rewriter, loc, name, callType);
      decl.setPrivate();
      decl->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
    }
    func::CallOp::create(rewriter, loc, name, TypeRange{},
                         ValueRange{*input, *weight, output});
    bufferization::replaceOpWithBufferizedValues(rewriter, op, output);
    return success();
  }
};

} // namespace

void registerLibraryCallBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, KilnDialect *) {
    ConvOp::attachInterface<LibraryCallModel<ConvOp>>(*context);
    MatmulOp::attachInterface<LibraryCallModel<MatmulOp>>(*context);
  });
}

} // namespace kiln::cpu
