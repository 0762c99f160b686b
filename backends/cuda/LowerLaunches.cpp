//===- LowerLaunches.cpp - launches as calls of the runtime ---------------===//
//
// Implements kiln-cuda-lower-launches (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_CUDALOWERLAUNCHES
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {
namespace {

struct CudaLowerLaunchesPass : impl::CudaLowerLaunchesBase<CudaLowerLaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    SmallVector<Attribute> kernels, launches;
    llvm::StringMap<int64_t> kernelIndex;
    SmallVector<gpu::LaunchFuncOp> all;
    module.walk([&](gpu::LaunchFuncOp launch) { all.push_back(launch); });
    for (gpu::LaunchFuncOp launch : all) {
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
          launch.getDynamicSharedMemorySize() || launch.hasClusterSize()) {
        launch.emitError("the CUDA backend launches synchronous kernels without dynamic "
                         "shared memory or clusters only");
        return signalPassFailure();
      }
      StringRef name = launch.getKernelName().getValue();
      auto [entry, inserted] = kernelIndex.try_emplace(name, kernelIndex.size());
      if (inserted)
        kernels.push_back(StringAttr::get(ctx, name));
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      SmallVector<Value> operands = {launch.getGridSizeX(),  launch.getGridSizeY(),
                                     launch.getGridSizeZ(),  launch.getBlockSizeX(),
                                     launch.getBlockSizeY(), launch.getBlockSizeZ()};
      llvm::append_range(operands, launch.getKernelOperands());
      SmallVector<Type> types;
      SmallVector<Attribute> argTypes;
      for (Value v : operands)
        types.push_back(v.getType());
      for (Value v : launch.getKernelOperands()) {
        Type t = v.getType();
        if (!isa<MemRefType, IndexType, IntegerType, FloatType>(t)) {
          launch.emitError("the CUDA backend cannot pass a ") << t << " to a kernel";
          return signalPassFailure();
        }
        argTypes.push_back(TypeAttr::get(t));
      }
      std::string callee = (kLaunchPrefix + llvm::Twine(launches.size())).str();
      OpBuilder top(ctx);
      top.setInsertionPointToEnd(module.getBody());
      auto decl = func::FuncOp::create(top, loc, callee, top.getFunctionType(types, {}));
      decl.setPrivate();
      decl->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
      func::CallOp::create(b, loc, callee, TypeRange{}, operands);
      launches.push_back(DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, "kernel"),
                               IntegerAttr::get(IntegerType::get(ctx, 64), entry->second)),
                NamedAttribute(StringAttr::get(ctx, "args"), ArrayAttr::get(ctx, argTypes))}));
      launch.erase();
    }
    // The binaries' PTX by GPU.
    SmallVector<NamedAttribute> ptx;
    for (gpu::BinaryOp binary : llvm::make_early_inc_range(module.getOps<gpu::BinaryOp>())) {
      for (Attribute object : binary.getObjects()) {
        auto gpuObject = cast<gpu::ObjectAttr>(object);
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(gpuObject.getTarget());
        if (!target || gpuObject.getFormat() != gpu::CompilationTarget::Assembly) {
          binary.emitError("the CUDA backend expects PTX for NVVM targets");
          return signalPassFailure();
        }
        ptx.push_back(NamedAttribute(target.getChip(), gpuObject.getObject()));
      }
      binary.erase();
    }
    for (gpu::GPUModuleOp left : llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>()))
      left.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
    module->setAttr(kKernelsAttr, ArrayAttr::get(ctx, kernels));
    module->setAttr(kLaunchesAttr, ArrayAttr::get(ctx, launches));
    module->setAttr(kPtxAttr, DictionaryAttr::get(ctx, ptx));
  }
};

} // namespace
} // namespace kiln::cuda
