//===- Pipeline.cpp - pass order of the CUDA backend ----------------------===//

#include "backends/cuda/Pipeline.h"
#include "backends/common/HostCode.h"
#include "backends/cuda/CudaArtifact.h"
#include "backends/cuda/Passes.h"
#include "compiler/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln::cuda {

/// Host loops as GPU-mapped parallel loops (what both the CUDA pipeline
/// and the CPU emulation of the mapping start with); a long reduction's
/// output takes a block of `reductionBlockSize` threads (0: `blockSize`).
static void addMapping(OpPassManager &pm, int64_t blockSize, bool emulate,
                       int64_t reductionBlockSize = 0) {
  // Every parallel dim in the mapped loop, reductions serial inside.
  pm.addNestedPass<func::FuncOp>(createGpuParallelDimsFirst());
  // Each row of a row kernel on a warp (lanes a loop when emulated).
  GpuWarpRowsOptions warp;
  warp.emulate = emulate;
  warp.blockSize = reductionBlockSize ? reductionBlockSize : blockSize;
  pm.addNestedPass<func::FuncOp>(createGpuWarpRows(warp));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createLowerAffinePass());
  // A reduction's initial fill inside its nest (a max pool: one kernel).
  pm.addNestedPass<func::FuncOp>(createGpuFoldFills());
  GpuMapLoopsOptions map;
  map.blockSize = blockSize;
  map.emulate = emulate;
  pm.addPass(createGpuMapLoops(map));
}

void buildCudaCodegenPipeline(OpPassManager &pm, const CudaCodegenOptions &options) {
  addMapping(pm, options.blockSize, options.emulate);
  if (options.emulate) {
    // The mapped loop nests as they are, run by the host (sequentially);
    // their 4-element vector accesses as the host's vector loads.
    pm.addPass(createConvertVectorToLLVMPass());
    host::buildHostLowering(pm, host::HostLoweringOptions{});
    return;
  }
  // No canonicalisation before this: it would dissolve one-thread loops.
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  // The constants (bounds, steps, shuffle offsets, divisors) and index
  // arithmetic the canonicaliser hoisted to the function back into each
  // launch: otherwise outlining makes them kernel parameters, and the
  // kernel divides by a run-time value and cannot unroll.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  // A block reduction's shared buffer: the launch's workgroup memory.
  pm.addPass(createCudaWorkgroupBuffers());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createCudaGatherKernels());
  pm.addPass(createLowerAffinePass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  // What NVVM's patterns leave of the math dialect (math.absi, from a
  // reflect pad's run-time pads) as LLVM intrinsics NVPTX lowers.
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  for (const std::string &chip : options.chips) {
    GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    // PTX 8.0 (CUDA 12): sm_90 needs >= 7.8; LLVM's default aborts.
    target.features = "+ptx80";
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa"; // PTX; ptxas makes the cubins
  binary.toolkitPath = options.toolkitPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createCudaLowerLaunches());
  // The host code: allocation and launches, down to the LLVM dialect.
  host::buildHostLowering(pm, host::HostLoweringOptions{});
}

void registerCudaPipelines() {
  registerKilnCudaPasses();
  PassPipelineRegistration<>(
      "kiln-cuda-codegen",
      "The CUDA backend's code generation after `plan` (sm_80 and sm_90): kernels to PTX, "
      "launches as calls, the host code in the LLVM dialect",
      [](OpPassManager &pm) {
        CudaCodegenOptions options;
        options.toolkitPath = findToolkit();
        buildCudaCodegenPipeline(pm, options);
      });
  PassPipelineRegistration<>(
      "kiln-lower-to-llvm-gpu-mapped",
      "As kiln-lower-to-llvm, with the loop nests mapped as the CUDA backend maps them "
      "(blocks x threads, masked), run on the CPU: checks the mapping numerically",
      [](OpPassManager &pm) {
        buildPipeline(pm, PipelineOptions{Phase::Plan});
        // Blocks of 4 threads: the mask, several blocks; a block reduction
        // over 64 threads (2 warps) from 1,024 elements an output.
        addMapping(pm, /*blockSize=*/4, /*emulate=*/true, /*reductionBlockSize=*/64);
        pm.addPass(createConvertVectorToLLVMPass());
        host::HostLoweringOptions options;
        options.genericAllocation = false;
        host::buildHostLowering(pm, options);
      });
}

} // namespace kiln::cuda
