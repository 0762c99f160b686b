//===- Pipeline.cpp - pass order of the CPU backend -----------------------===//

#include "backends/cpu/Pipeline.h"
#include "backends/common/HostCode.h"
#include "backends/cpu/Passes.h"
#include "compiler/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln::cpu {

void buildCpuCodegenPipeline(OpPassManager &pm, const CpuCodegenOptions &options) {
  // Library calls' constant weights get names the descriptor points at.
  pm.addPass(createExportLibraryWeights());
  // Parallel dims become scf.parallel: sequential loops unless outlined.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createLowerAffinePass());
  // Outermost parallel loops become chunk functions the runtime's threads
  // run; after deallocation (plan phase), so no chunk frees what another
  // reads.
  if (options.parallelChunks) {
    OutlineParallelChunksOptions chunks;
    chunks.minWork = options.minParallelWork;
    pm.addPass(createOutlineParallelChunks(chunks));
  }
  // exp, tanh, erf and log as polynomials, not one libm call per vector lane.
  pm.addPass(createApproximateMath());
  host::HostLoweringOptions lowering;
  lowering.genericAllocation = options.genericAllocation;
  lowering.barePointerCalls = options.barePointerCalls;
  host::buildHostLowering(pm, lowering);
  // Chunk calls become the runtime's parallel_for once their arguments are
  // plain LLVM values that fit in one struct.
  if (options.parallelChunks)
    pm.addPass(createPackChunkCalls());
}

void registerCpuPipelines() {
  registerKilnCpuPasses();
  PassPipelineRegistration<>(
      "kiln-lower-to-llvm",
      "Kiln's phases, then CPU code generation down to the LLVM dialect (memref "
      "descriptor calls, malloc: for mlir-runner)",
      [](OpPassManager &pm) {
        buildPipeline(pm, PipelineOptions{Phase::Plan});
        CpuCodegenOptions options;
        options.genericAllocation = false;
        options.parallelChunks = false;
        buildCpuCodegenPipeline(pm, options);
      });
}

} // namespace kiln::cpu
