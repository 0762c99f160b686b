//===- GatherKernels.cpp - one GPU module; constants as device copies -----===//
//
// Implements kiln-cuda-gather-kernels (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_CUDAGATHERKERNELS
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {
namespace {

struct CudaGatherKernelsPass : impl::CudaGatherKernelsBase<CudaGatherKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    SmallVector<gpu::GPUModuleOp> outlined(module.getOps<gpu::GPUModuleOp>());
    // (A model whose work is all library calls has no kernel module.)
    gpu::GPUModuleOp merged;
    if (!outlined.empty()) {
      OpBuilder b(ctx);
      b.setInsertionPointToEnd(module.getBody());
      merged = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModule);
    }
    // Old (module, kernel) -> the kernel's name in the merged module.
    llvm::StringMap<StringAttr> renamed;
    for (gpu::GPUModuleOp from : outlined) {
      SymbolTable mergedSymbols(merged);
      for (gpu::GPUFuncOp kernel : llvm::make_early_inc_range(from.getOps<gpu::GPUFuncOp>())) {
        std::string key = (from.getName() + "::" + kernel.getName()).str();
        kernel->remove();
        mergedSymbols.insert(kernel); // renames on a clash
        renamed[key] = kernel.getNameAttr();
      }
      if (!from.getBody()->without_terminator().empty()) {
        from.emitError("the CUDA backend expected outlined GPU modules to hold kernels only");
        return signalPassFailure();
      }
      from.erase();
    }

    // Launches name the merged kernels; constants passed to a kernel or a
    // library call become the session's device copies.
    llvm::DenseMap<Attribute, unsigned> constantIndex; // global symbol -> i
    SmallVector<Attribute> constantTypes;
    // A constant's device copy in place of the host's for `operand`.
    auto toDevice = [&](OpOperand &operand) {
      auto global = operand.get().getDefiningOp<memref::GetGlobalOp>();
      if (!global)
        return;
      auto type = cast<MemRefType>(global.getType());
      auto [entry, inserted] = constantIndex.try_emplace(global.getNameAttr(), constantIndex.size());
      std::string name = (kConstantPrefix + llvm::Twine(entry->second)).str();
      if (inserted) {
        OpBuilder top(ctx);
        top.setInsertionPointToEnd(module.getBody());
        auto decl =
            func::FuncOp::create(top, module.getLoc(), name, top.getFunctionType({type}, {type}));
        decl.setPrivate();
        decl->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
        constantTypes.push_back(TypeAttr::get(type));
      }
      OpBuilder at(operand.getOwner());
      auto device = func::CallOp::create(at, operand.getOwner()->getLoc(), name, TypeRange{type},
                                         ValueRange{global.getResult()});
      operand.set(device.getResult(0));
    };
    // Library calls read their operands on the device too.
    module.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with("kiln_library_call_"))
        for (OpOperand &operand : call->getOpOperands())
          toDevice(operand);
    });
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      std::string key =
          (kernel.getRootReference().getValue() + "::" + kernel.getLeafReference().getValue())
              .str();
      auto found = renamed.find(key);
      if (found == renamed.end()) {
        launch.emitError("launch of an unknown kernel ") << kernel;
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(SymbolRefAttr::get(merged.getNameAttr(),
                                              {FlatSymbolRefAttr::get(found->second)}));
      for (OpOperand &operand : launch.getKernelOperandsMutable())
        toDevice(operand);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    module->setAttr(kConstantsAttr, ArrayAttr::get(ctx, constantTypes));
  }
};

} // namespace
} // namespace kiln::cuda
