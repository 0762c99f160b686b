//===- Pipelines.cpp - pass order of every phase --------------------------===//
//
// The only file that orders passes. Each phase ends with the IR verified
// (the pass manager verifies after every pass), so a broken contract is
// caught at the phase that broke it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Passes.h"
#include "backends/cpu/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

static constexpr struct {
  Phase phase;
  llvm::StringLiteral name;
} kPhaseNames[] = {{Phase::Import, "import"},
                   {Phase::Graph, "graph"},
                   {Phase::Fuse, "fuse"},
                   {Phase::Linalg, "linalg"},
                   {Phase::LLVM, "llvm"}};

std::optional<Phase> parsePhase(llvm::StringRef name) {
  for (const auto &entry : kPhaseNames)
    if (entry.name == name)
      return entry.phase;
  return std::nullopt;
}

llvm::StringRef phaseName(Phase phase) {
  for (const auto &entry : kPhaseNames)
    if (entry.phase == phase)
      return entry.name;
  return "unknown";
}

/// graph: whole-program clean-up on the kiln dialect.
static void addGraphPhase(OpPassManager &pm) {
  // Shapes first: folders and canonicalisations match on static types.
  pm.addPass(createInferShapes());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Batch norms after convolutions become their weights and a bias.
  pm.addNestedPass<func::FuncOp>(createFoldBatchNorm());
  pm.addPass(createCanonicalizerPass());
  // Folding can expose more static shapes (e.g. a reshape of a constant).
  pm.addPass(createInferShapes());
}

/// fuse: convolutions and matmuls with their epilogues become kernels.
static void addFusePhase(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createFuse());
}

/// linalg: kiln lowered to linalg / tensor / arith / math on tensors.
static void addLinalgPhase(OpPassManager &pm, const PipelineOptions &options) {
  // Composite ops become primitives first, so the lowering (and later
  // fusion) only sees reductions and elementwise ops.
  pm.addNestedPass<func::FuncOp>(createDecompose());
  pm.addNestedPass<func::FuncOp>(createConvertKilnToLinalg());
  pm.addPass(createCanonicalizerPass());
  // Producer-consumer fusion of elementwise generics, before buffers exist.
  if (options.fuse) {
    pm.addPass(createFuseElementwise());
    pm.addPass(createCanonicalizerPass());
  }
}

/// llvm: buffers, loops and the LLVM dialect. One-shot bufferisation
/// allocates every intermediate; the plan phase (memory planning) will
/// replace those allocations by offsets into one arena.
static void addLLVMPhase(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  // Row loops of reduction kernels: temporaries on the stack, then a
  // parallel loop like linalg's.
  pm.addPass(createStackRowBuffers());
  pm.addPass(createForallToParallelLoopPass());
  // Intermediates with static shapes become views of one arena; before
  // deallocation, which then frees only the arena and what stays apart.
  PlanMemoryOptions plan;
  plan.maxBatch = options.maxBatch;
  pm.addPass(createPlanMemory(plan));
  // Free every intermediate buffer after its last use; function results
  // become owned by the caller (the runtime frees them).
  bufferization::buildBufferDeallocationPipeline(pm);
  // Clones that make returned constants owned become alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Parallel dims become scf.parallel: sequential loops unless outlined.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createLowerAffinePass());
  // Outermost parallel loops become chunk functions the runtime's threads
  // run; after deallocation, so no chunk frees what another reads.
  if (options.parallelChunks) {
    cpu::OutlineParallelChunksOptions chunks;
    chunks.minWork = options.minParallelWork;
    pm.addPass(cpu::createOutlineParallelChunks(chunks));
  }
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Expanding strided metadata of dynamic views builds affine.apply.
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.genericAllocation;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // Intrinsics first; what LLVM has no intrinsic for (erf, atan, tanh)
  // becomes a libm call.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = options.barePointerCalls;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Chunk calls become the runtime's parallel_for once their arguments are
  // plain LLVM values that fit in one struct.
  if (options.parallelChunks)
    pm.addPass(cpu::createPackChunkCalls());
}

void buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  // Phases after `startAfter` up to `stopAfter`, in order.
  auto runs = [&](Phase phase) {
    return phase > options.startAfter && phase <= options.stopAfter;
  };
  if (runs(Phase::Graph))
    addGraphPhase(pm);
  if (runs(Phase::Fuse))
    addFusePhase(pm);
  if (runs(Phase::Linalg))
    addLinalgPhase(pm, options);
  if (runs(Phase::LLVM))
    addLLVMPhase(pm, options);
}

void registerPipelines() {
  PassPipelineRegistration<>(
      "kiln-graph", "Kiln's graph phase: shape inference, folding, CSE",
      [](OpPassManager &pm) {
        buildPipeline(pm, PipelineOptions{Phase::Graph});
      });
  PassPipelineRegistration<>(
      "kiln-lower-to-linalg", "Kiln's phases up to linalg on tensors",
      [](OpPassManager &pm) {
        buildPipeline(pm, PipelineOptions{Phase::Linalg});
      });
  PassPipelineRegistration<>(
      "kiln-lower-to-llvm",
      "Kiln's phases down to the LLVM dialect (memref descriptor calls)",
      [](OpPassManager &pm) {
        buildPipeline(pm, PipelineOptions{Phase::LLVM});
      });
}

} // namespace kiln
