//===- ConvertKilnToLinalg.cpp - the kiln-convert-to-linalg pass ----------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

/// The reasons lowering patterns gave while kiln-convert-to-linalg runs on
/// this thread (refuse), by op.
static thread_local llvm::DenseMap<Operation *, std::string> *refusals = nullptr;

LogicalResult kiln::lowering::refuse(PatternRewriter &b, Operation *op, StringRef reason) {
  if (refusals)
    (*refusals)[op] = reason.str();
  return b.notifyMatchFailure(op, reason);
}

namespace {

/// Replaces the conversion's "failed to legalize operation 'NAME' that was
/// explicitly marked illegal" error by "NAME is not lowered: " and the
/// reason the lowering patterns gave for an op of that name at its
/// location (in the message: the CLI prints errors without their notes).
struct RefusalReasons {
  llvm::DenseMap<Operation *, std::string> reasons;
  ScopedDiagnosticHandler handler;

  explicit RefusalReasons(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return failure();
          std::string message = diag.str();
          for (auto &[op, reason] : reasons)
            if (op->getLoc() == diag.getLocation() &&
                StringRef(message).contains(
                    ("failed to legalize operation '" + op->getName().getStringRef() + "'")
                        .str())) {
              // Reported in its place (this handler passes the new error on).
              emitError(diag.getLocation())
                  << op->getName().getStringRef() << " is not lowered: " << reason;
              return success();
            }
          return failure(); // reported as usual
        }) {
    refusals = &reasons;
  }
  ~RefusalReasons() { refusals = nullptr; }
};

/// arith works on signless integers. The lowerings read signedness from the
/// kiln types they replace (divui or divsi, uitofp or sitofp, ...); once
/// nothing is left to lower, every unsigned type (in values, signatures and
/// constants) becomes the signless type of its width: the same bits.
void makeSignless(Operation *root) {
  AttrTypeReplacer replacer;
  replacer.addReplacement([](IntegerType t) -> std::optional<Type> {
    if (t.isSignless())
      return std::nullopt;
    return IntegerType::get(t.getContext(), t.getWidth());
  });
  // Dense constants keep their bits under the new element type.
  replacer.addReplacement([&](DenseIntElementsAttr a) -> std::optional<Attribute> {
    auto element = dyn_cast<IntegerType>(a.getElementType());
    if (!element || element.isSignless())
      return std::nullopt;
    return a.bitcast(IntegerType::get(a.getContext(), element.getWidth()));
  });
  replacer.addReplacement([&](DenseResourceElementsAttr a) -> std::optional<Attribute> {
    Type type = replacer.replace(a.getType());
    if (type == a.getType())
      return std::nullopt;
    return DenseResourceElementsAttr::get(cast<ShapedType>(type), a.getRawHandle());
  });
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true, /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
}

/// Kernels and ops a backend claimed (`kiln.library_call = N`) become
/// `kiln.library_call N` on the same operands; other kernels are inlined,
/// so the patterns (and linalg's fusion) see their ops.
void resolveKernels(func::FuncOp func) {
  SmallVector<Operation *> work;
  func.walk([&](Operation *op) {
    if (isa<kiln::KernelOp>(op) || op->hasAttr(kiln::KilnDialect::LibraryCallAttrHelper::getNameStr()))
      work.push_back(op);
  });
  for (Operation *op : work) {
    OpBuilder b(op);
    if (auto id = op->getAttrOfType<IntegerAttr>(kiln::KilnDialect::LibraryCallAttrHelper::getNameStr())) {
      auto call = kiln::LibraryCallOp::create(
          b, op->getLoc(), op->getResult(0).getType(),
          b.getI32IntegerAttr(static_cast<int32_t>(id.getInt())), op->getOperands());
      // Backend facts about the call (e.g. which operand the output starts
      // as) travel with it.
      for (NamedAttribute attr : op->getDiscardableAttrs())
        if (attr.getName() != kiln::KilnDialect::LibraryCallAttrHelper::getNameStr())
          call->setAttr(attr.getName(), attr.getValue());
      op->getResult(0).replaceAllUsesWith(call.getResult());
      op->erase();
      continue;
    }
    auto kernel = cast<kiln::KernelOp>(op);
    if (kernel.getKind() == kiln::KernelKind::reduction)
      kiln::lowering::lowerReductionKernel(kernel);
    else
      kernel.inlineBody();
  }
}

/// Each library call marked `kiln.output_into = c` (a backend's claim: its
/// only use is a channel concatenation, in which it starts at channel c)
/// that the concatenation's chain inserts whole at [0, c, 0, ...] becomes
/// that insertion: the call, moved there, takes the chain's tensor so far
/// as its last operand and returns it with its output written in (its
/// bufferisation: a view of that buffer is the call's output). Fails on a
/// marked call the chain does not insert so (the backend's claim and the
/// lowering disagree: the runtime would write with the wrong strides).
LogicalResult writeCallsIntoConcats(func::FuncOp func) {
  StringRef into = kiln::KilnDialect::OutputIntoAttrHelper::getNameStr();
  SmallVector<kiln::LibraryCallOp> marked;
  func.walk([&](kiln::LibraryCallOp call) {
    if (call->hasAttr(into))
      marked.push_back(call);
  });
  for (kiln::LibraryCallOp call : marked) {
    int64_t channel = call->getAttrOfType<IntegerAttr>(into).getInt();
    // The sizes the chain reads of the output: its batch is its input's
    // (a convolution's), its other dims static.
    for (Operation *user : llvm::make_early_inc_range(call->getUsers())) {
      auto dim = dyn_cast<tensor::DimOp>(user);
      std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
      if (!index || *index >= call.getType().getRank())
        continue;
      OpBuilder b(dim);
      Value size = call.getType().isDynamicDim(*index)
                       ? (*index == 0 ? tensor::DimOp::create(b, dim.getLoc(),
                                                              call.getOperands()[0], 0)
                                      : Value())
                       : arith::ConstantIndexOp::create(b, dim.getLoc(),
                                                        call.getType().getDimSize(*index));
      if (!size)
        continue;
      dim.replaceAllUsesWith(size);
      dim.erase();
    }
    auto insert = call->hasOneUse()
                      ? dyn_cast<tensor::InsertSliceOp>(*call->getUsers().begin())
                      : tensor::InsertSliceOp();
    auto type = call.getType();
    bool whole = insert && insert.getSource() == call.getResult() &&
                 insert.getDestType().getRank() == type.getRank() && type.getRank() >= 2 &&
                 insert->getBlock() == call->getBlock();
    for (int64_t d = 0; whole && d < type.getRank(); ++d) {
      std::optional<int64_t> offset = getConstantIntValue(insert.getMixedOffsets()[d]);
      std::optional<int64_t> stride = getConstantIntValue(insert.getMixedStrides()[d]);
      whole = offset == (d == 1 ? channel : 0) && stride == 1 &&
              (type.isDynamicDim(d) ||
               getConstantIntValue(insert.getMixedSizes()[d]) == type.getDimSize(d));
    }
    if (!whole)
      return call.emitOpError("is marked to write into channel ")
             << channel << " of a concatenation that does not insert it there whole";
    OpBuilder b(insert);
    SmallVector<Value> operands(call.getOperands());
    operands.push_back(insert.getDest());
    auto written = kiln::LibraryCallOp::create(b, call.getLoc(), insert.getDestType(),
                                               call.getIdAttr(), operands);
    for (NamedAttribute attr : call->getDiscardableAttrs())
      written->setAttr(attr.getName(), attr.getValue());
    insert.getResult().replaceAllUsesWith(written.getResult());
    insert.erase();
    call.erase();
  }
  return success();
}

/// Run-time shape checks (lowering::checkAtRunTime) call back into the
/// artifact's entry point: declared once, where some lowering made a check.
void declareShapeError(ModuleOp module) {
  StringRef name = kiln::lowering::kShapeErrorFunction;
  if (module.lookupSymbol(name))
    return;
  WalkResult found = module.walk([&](func::CallOp call) {
    return call.getCallee() == name ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (!found.wasInterrupted())
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto decl = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType({b.getI32Type()}, {}));
  decl.setPrivate();
}

struct ConvertKilnToLinalgPass
    : kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    kiln::populateElementwiseToLinalgPatterns(patterns);
    kiln::populateReductionToLinalgPatterns(patterns);
    kiln::populateDataMovementToLinalgPatterns(patterns);
    kiln::populateReshapesToLinalgPatterns(patterns);
    kiln::populateContractionToLinalgPatterns(patterns);
    kiln::populateTopKToLoopsPatterns(patterns);
    ModuleOp module = getOperation();
    ConversionTarget target(*context);
    target.addIllegalDialect<kiln::KilnDialect>();
    // What a backend runs in a library is bufferised into a call instead.
    target.addLegalOp<kiln::LibraryCallOp>();
    // So are the string functions the entry point defines.
    target.addLegalOp<kiln::StringOp>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           func::FuncDialect, scf::SCFDialect>();
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (func::FuncOp func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      resolveKernels(func);
      RefusalReasons reasons(context);
      if (failed(applyPartialConversion(func, target, frozen)) ||
          failed(writeCallsIntoConcats(func))) {
        signalPassFailure();
        return;
      }
    }
    declareShapeError(module);
    makeSignless(module);
  }
};
} // namespace
