//===- InferShapes.cpp - refine dynamic dims from operands ----------------===//
//
// Implements kiln-infer-shapes. The work is `refineResultTypes`, which
// refines one op; the pass walks functions in order and then updates the
// signatures of functions nobody in the module calls.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {
#define GEN_PASS_DEF_INFERSHAPES
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The most refined type compatible with both `declared` and `inferred`, or
/// failure when two static sizes disagree.
FailureOr<Type> meetTypes(Type declared, Type inferred) {
  auto d = dyn_cast<RankedTensorType>(declared);
  auto i = dyn_cast<RankedTensorType>(inferred);
  if (!d || !i || d.getRank() != i.getRank() ||
      d.getElementType() != i.getElementType()) {
    if (declared != inferred)
      return failure();
    return declared;
  }
  SmallVector<int64_t> dims;
  for (auto [ds, is] : llvm::zip(d.getShape(), i.getShape())) {
    if (!ShapedType::isDynamic(ds) && !ShapedType::isDynamic(is) && ds != is)
      return failure();
    dims.push_back(ShapedType::isDynamic(ds) ? is : ds);
  }
  return Type(RankedTensorType::get(dims, d.getElementType(), d.getEncoding()));
}

/// Refines the result types of one kiln op in place. Returns the number of
/// results whose type changed. `returnsFollow` says whether the enclosing
/// function's signature will be refined too, so a return may take the new
/// type.
FailureOr<unsigned> refineResultTypes(InferTypeOpInterface op,
                                      bool returnsFollow) {
  Operation *operation = op.getOperation();
  SmallVector<Type> inferred;
  if (failed(op.inferReturnTypes(
          operation->getContext(), operation->getLoc(),
          operation->getOperands(), operation->getAttrDictionary(),
          operation->getPropertiesStorage(), operation->getRegions(),
          inferred)))
    return failure();
  if (inferred.size() != operation->getNumResults())
    return operation->emitOpError("inferred ")
           << inferred.size() << " result types for "
           << operation->getNumResults() << " results";
  unsigned changed = 0;
  for (auto [result, type] : llvm::zip(operation->getResults(), inferred)) {
    Type declared = result.getType();
    FailureOr<Type> refined = meetTypes(declared, type);
    if (failed(refined))
      return operation->emitOpError("declared result type ")
             << declared << " contradicts the inferred type " << type;
    if (*refined == declared)
      continue;
    result.setType(*refined);
    ++changed;
    // Users outside kiln (and not a return) keep the type they verified with.
    OpBuilder builder(operation->getContext());
    builder.setInsertionPointAfter(operation);
    tensor::CastOp cast;
    for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
      Operation *user = use.getOwner();
      if (isa_and_nonnull<kiln::KilnDialect>(user->getDialect()) ||
          (returnsFollow && isa<func::ReturnOp>(user)))
        continue;
      if (!cast)
        cast = tensor::CastOp::create(builder, operation->getLoc(), declared,
                                      result);
      if (user != cast)
        use.set(cast);
    }
  }
  return changed;
}

struct InferShapesPass : kiln::impl::InferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool returnsFollow = SymbolTable::symbolKnownUseEmpty(func, module);
      WalkResult walk = func.walk([&](Operation *op) {
        auto infer = dyn_cast<InferTypeOpInterface>(op);
        if (!infer || !isa_and_nonnull<kiln::KilnDialect>(op->getDialect()))
          return WalkResult::advance();
        FailureOr<unsigned> changed = refineResultTypes(infer, returnsFollow);
        if (failed(changed))
          return WalkResult::interrupt();
        numRefined += *changed;
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
      if (returnsFollow)
        refineSignature(func);
    }
  }

  /// Gives the function the result types its returns now produce.
  static void refineSignature(func::FuncOp func) {
    SmallVector<func::ReturnOp> returns;
    func.walk([&](func::ReturnOp r) { returns.push_back(r); });
    if (returns.size() != 1)
      return;
    FunctionType type = func.getFunctionType();
    auto results = llvm::to_vector(returns.front().getOperandTypes());
    if (results != llvm::to_vector(type.getResults()))
      func.setType(FunctionType::get(func.getContext(), type.getInputs(),
                                     results));
  }
};

} // namespace
