//===- VerifyContract.cpp - the phase contracts of docs/Contracts.md ------===//
//
// kiln-verify-contract{phase=P} checks, without changing anything, what
// the phase P promises to the next one. Op verifiers already check each op
// on its own; this pass checks what only holds of a whole phase's output
// (which dialects may be left, where kernels sit, what the memory plan
// left behind).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace kiln {
#define GEN_PASS_DEF_VERIFYCONTRACT
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

bool isKiln(Operation *op) { return isa<KilnDialect>(op->getDialect()); }

/// Function bodies hold only kiln ops, func.return and func.call (the
/// ops inside kernels included).
LogicalResult checkOnlyKiln(ModuleOp module, StringRef phase) {
  WalkResult walk = module.walk([&](Operation *op) {
    if (isa<ModuleOp, func::FuncOp, func::ReturnOp, func::CallOp>(op) || isKiln(op))
      return WalkResult::advance();
    op->emitOpError("is not a kiln op: the ") << phase << " phase leaves only kiln ops, "
                                              << "func.return and func.call";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// The most bytes a tensor may have: far above any memory, far below
/// where int64 index arithmetic wraps (the runtime refuses larger inputs
/// with the same limit).
constexpr unsigned kMaxTensorBytesLog2 = 48;

/// The bytes of a shaped type counting its static dims only (a dynamic
/// dim as 1), or nullopt when they exceed 2^kMaxTensorBytesLog2 (no
/// product wraps).
std::optional<uint64_t> staticBytes(ShapedType type) {
  if (llvm::is_contained(type.getShape(), 0))
    return uint64_t(0);
  Type element = type.getElementType();
  uint64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
  const uint64_t limit = uint64_t(1) << kMaxTensorBytesLog2;
  uint64_t bytes = std::max<uint64_t>(1, (bits + 7) / 8);
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d))
      continue;
    if (static_cast<uint64_t>(d) > limit / bytes)
      return std::nullopt;
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes;
}

/// No value has static dims whose bytes exceed 2^kMaxTensorBytesLog2
/// (a model expanding to [2^62, 4] is refused here, naming the op, not
/// compiled into an artifact whose sizes wrap).
LogicalResult checkSizes(ModuleOp module) {
  auto tooLarge = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && shaped.hasRank() && !staticBytes(shaped);
  };
  for (auto function : module.getOps<func::FuncOp>())
    for (auto [i, type] : llvm::enumerate(function.getArgumentTypes()))
      if (tooLarge(type))
        return function.emitOpError("argument ")
               << i << " is " << type << ": more than 2^" << kMaxTensorBytesLog2
               << " bytes, beyond what Kiln compiles";
  WalkResult walk = module.walk([&](Operation *op) {
    for (auto [i, result] : llvm::enumerate(op->getResults()))
      if (tooLarge(result.getType())) {
        op->emitOpError("result ") << i << " is " << result.getType() << ": more than 2^"
                                   << kMaxTensorBytesLog2 << " bytes, beyond what Kiln compiles";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult checkImport(ModuleOp module) {
  auto entry = module.lookupSymbol<func::FuncOp>("main");
  if (!entry)
    return module.emitError("the import phase must produce func.func @main");
  FunctionType type = entry.getFunctionType();
  auto named = [&](Type t, DictionaryAttr attrs, const char *what, unsigned i) -> LogicalResult {
    if (!isa<RankedTensorType>(t))
      return entry.emitOpError() << what << " " << i << " is " << t << ", not a ranked tensor";
    if (!attrs || !attrs.getAs<StringAttr>(KilnDialect::NameAttrHelper::getNameStr()))
      return entry.emitOpError() << what << " " << i << " has no "
                                 << KilnDialect::NameAttrHelper::getNameStr();
    return success();
  };
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (failed(named(type.getInput(i), entry.getArgAttrDict(i), "argument", i)))
      return failure();
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (failed(named(type.getResult(i), entry.getResultAttrDict(i), "result", i)))
      return failure();
  return checkOnlyKiln(module, "import");
}

/// No composite op kiln-expand-composites writes out is left.
LogicalResult checkExpanded(ModuleOp module) {
  WalkResult walk = module.walk([&](Operation *op) {
    if (!isa<ConvTransposeOp>(op))
      return WalkResult::advance();
    op->emitOpError("is left after the graph phase, whose kiln-expand-composites writes it "
                    "as primitives");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// No result type is less refined than what its op infers.
LogicalResult checkRefined(ModuleOp module) {
  WalkResult walk = module.walk([&](InferTypeOpInterface op) {
    if (!isKiln(op))
      return WalkResult::advance();
    SmallVector<Type> inferred;
    if (failed(op.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                   op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
                                   op->getRegions(), inferred)))
      return WalkResult::advance(); // the op verifier reports it
    for (auto [declared, expected] : llvm::zip(op->getResultTypes(), inferred)) {
      auto d = dyn_cast<RankedTensorType>(declared);
      auto e = dyn_cast<RankedTensorType>(expected);
      if (!d || !e || d.getRank() != e.getRank())
        continue;
      for (int64_t i = 0; i < d.getRank(); ++i)
        if (d.isDynamicDim(i) && !e.isDynamicDim(i)) {
          op->emitOpError("result is ") << declared << " where " << expected
                                        << " is inferred: the graph phase refines every "
                                           "inferable dim";
          return WalkResult::interrupt();
        }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult checkKernels(ModuleOp module) {
  WalkResult walk = module.walk([&](KernelOp kernel) {
    if (!isa<func::FuncOp>(kernel->getParentOp())) {
      kernel.emitOpError("must sit directly in a function after the fuse phase");
      return WalkResult::interrupt();
    }
    auto ops = kernel.bodyOps();
    if (kernel.getKind() == KernelKind::epilogue &&
        (ops.empty() || !isa<ConvOp, MatmulOp>(*ops.begin()))) {
      kernel.emitOpError("epilogue kernel must start with a convolution or matmul");
      return WalkResult::interrupt();
    }
    if (kernel.getKind() == KernelKind::reduction &&
        !KilnDialect::OuterDimsAttrHelper(kernel->getContext()).isAttrPresent(kernel)) {
      kernel.emitOpError("reduction kernel has no ")
          << KilnDialect::OuterDimsAttrHelper::getNameStr();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult checkLinalg(ModuleOp module) {
  WalkResult walk = module.walk([&](Operation *op) {
    if (!isKiln(op) || isa<LibraryCallOp, StringOp>(op))
      return WalkResult::advance();
    op->emitOpError("is left after the linalg phase (only kiln.library_call and kiln.string may "
                    "be)");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// The most bytes of one constant an artifact stores (object files address
/// their data with 32-bit offsets).
constexpr unsigned kMaxConstantBytesLog2 = 31;

LogicalResult checkPlan(ModuleOp module) {
  // A constant that large (ConstantOfShape of 10^11 elements returned as an
  // output) would be written out byte by byte; refuse it by name.
  for (auto global : module.getOps<memref::GlobalOp>()) {
    std::optional<uint64_t> bytes = staticBytes(global.getType());
    if (global.getConstant() &&
        (!bytes || *bytes > (uint64_t(1) << kMaxConstantBytesLog2)))
      return global.emitOpError("is a constant ")
             << global.getType() << " (from the model's constants, "
             << (bytes ? std::to_string(*bytes) + " bytes" : std::string("too large")) << "): "
             << "an artifact stores at most 2^" << kMaxConstantBytesLog2
             << " bytes per constant";
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (!KilnDialect::MemoryPlanAttrHelper(func->getContext()).isAttrPresent(func))
      return func.emitOpError("has no ") << KilnDialect::MemoryPlanAttrHelper::getNameStr()
                                         << " after the plan phase";
    WalkResult walk = func.walk([&](Operation *op) {
      for (Type type : llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
        if (isa<TensorType>(type)) {
          op->emitOpError("has a tensor (") << type << ") after the plan phase: every value "
                                                       "is a buffer";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success();
}

struct VerifyContract : impl::VerifyContractBase<VerifyContract> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LogicalResult result = failure();
    if (failed(checkSizes(module)))
      result = failure();
    else if (phase == "import")
      result = checkImport(module);
    else if (phase == "graph")
      result = success(succeeded(checkExpanded(module)) && succeeded(checkRefined(module)));
    else if (phase == "fuse")
      result = success(succeeded(checkExpanded(module)) && succeeded(checkRefined(module)) &&
                       succeeded(checkKernels(module)));
    else if (phase == "linalg")
      result = checkLinalg(module);
    else if (phase == "plan")
      result = checkPlan(module);
    else
      module.emitError("kiln-verify-contract: unknown phase '")
          << phase << "' (import, graph, fuse, linalg, plan)";
    if (failed(result))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
