//===- Pipelines.cpp - pass order of every phase --------------------------===//
//
// The only file that orders the target-neutral passes (each backend orders
// its own code generation in its pipeline file). The pass manager verifies
// the IR after every pass, and each phase ends with kiln-verify-contract
// for what docs/Contracts.md promises of it, so a broken contract is
// caught at the phase that broke it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
                   {Phase::Plan, "plan"},
                   {Phase::Codegen, "codegen"}};

std::optional<Phase> parsePhase(llvm::StringRef name) {
  if (name == "llvm")
    return Phase::Codegen;
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

std::string phaseNames() {
  std::string names;
  for (const auto &entry : kPhaseNames)
    names += (names.empty() ? "" : ", ") + entry.name.str();
  return names;
}

/// Checks the contract of `phase` (docs/Contracts.md) at its end.
static void addContractCheck(OpPassManager &pm, Phase phase) {
  VerifyContractOptions contract;
  contract.phase = phaseName(phase).str();
  pm.addPass(createVerifyContract(contract));
}

/// graph: whole-program clean-up on the kiln dialect.
static void addGraphPhase(OpPassManager &pm) {
  // Transposed convolutions become primitives the phases below fold and
  // fuse.
  pm.addNestedPass<func::FuncOp>(createExpandComposites());
  // Shapes first: folders and canonicalisations match on static types.
  pm.addPass(createInferShapes());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Batch norms after convolutions become their weights and a bias.
  pm.addNestedPass<func::FuncOp>(createFoldBatchNorm());
  // Zero pads become the padding of the convolution or pool that reads
  // them.
  pm.addNestedPass<func::FuncOp>(createFoldPads());
  // Transposed weights (Gemm's transB, linear layers) become constants.
  pm.addNestedPass<func::FuncOp>(createFoldConstantTransposes());
  // GELU written out in erf (torch's export) becomes one op an epilogue
  // can take.
  pm.addNestedPass<func::FuncOp>(createRecognizeGelu());
  pm.addPass(createCanonicalizerPass());
  // Folding can expose more static shapes (e.g. a reshape of a constant).
  pm.addPass(createInferShapes());
}

/// fuse: convolutions and matmuls with their epilogues become kernels.
static void addFusePhase(OpPassManager &pm, const PipelineOptions &options) {
  // After the graph phase's CSE (which would merge the copies back).
  if (options.remat)
    pm.addNestedPass<func::FuncOp>(createRematerialize());
  pm.addNestedPass<func::FuncOp>(createFuse());
}

/// linalg: kiln lowered to linalg / tensor / arith / math on tensors.
static void addLinalgPhase(OpPassManager &pm, const PipelineOptions &options) {
  // Composite ops become primitives first, so the lowering (and later
  // fusion) only sees reductions and elementwise ops.
  pm.addNestedPass<func::FuncOp>(createDecompose());
  pm.addPass(createConvertKilnToLinalg());
  pm.addPass(createCanonicalizerPass());
  // Producer-consumer fusion of elementwise generics, before buffers exist.
  if (options.fuse) {
    pm.addPass(createFuseElementwise());
    pm.addPass(createCanonicalizerPass());
  }
}

/// plan: buffers and the memory plan. One-shot bufferisation allocates
/// every intermediate; kiln-plan-memory then makes those with a bounded
/// size views of one arena at fixed offsets.
static void addPlanPhase(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(createEmptyReshapes());
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
  // Free every intermediate buffer (the deallocation pipeline frees them at
  // the end of their block, kiln-free-after-last-use right after their last
  // use); function results become owned by the caller (the runtime frees
  // them).
  bufferization::buildBufferDeallocationPipeline(pm);
  // Clones that make returned constants owned become alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createFreeAfterLastUse());
}

void buildImportCheck(OpPassManager &pm) { addContractCheck(pm, Phase::Import); }

void buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  // Phases after `startAfter` up to `stopAfter`, in order.
  auto runs = [&](Phase phase) {
    return phase > options.startAfter && phase <= options.stopAfter;
  };
  if (runs(Phase::Graph)) {
    addGraphPhase(pm);
    addContractCheck(pm, Phase::Graph);
  }
  if (runs(Phase::Fuse)) {
    addFusePhase(pm, options);
    addContractCheck(pm, Phase::Fuse);
  }
  if (runs(Phase::Linalg)) {
    addLinalgPhase(pm, options);
    addContractCheck(pm, Phase::Linalg);
  }
  if (runs(Phase::Plan)) {
    addPlanPhase(pm, options);
    addContractCheck(pm, Phase::Plan);
  }
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
      "kiln-plan", "Kiln's target-neutral phases: up to buffers and the memory plan",
      [](OpPassManager &pm) {
        buildPipeline(pm, PipelineOptions{Phase::Plan});
      });
}

} // namespace kiln
