//===- Pipelines.cpp - pass order of every phase --------------------------===//
//
// The only file that orders passes. Each phase ends with the IR verified
// (the pass manager verifies after every pass), so a broken contract is
// caught at the phase that broke it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

static constexpr struct {
  Phase phase;
  llvm::StringLiteral name;
} kPhaseNames[] = {{Phase::Import, "import"}, {Phase::Graph, "graph"}};

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
  // Folding can expose more static shapes (e.g. a reshape of a constant).
  pm.addPass(createInferShapes());
}

void buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  if (options.stopAfter == Phase::Import)
    return;
  addGraphPhase(pm);
}

void registerPipelines() {
  PassPipelineRegistration<>(
      "kiln-graph", "Kiln's graph phase: shape inference, folding, CSE",
      [](OpPassManager &pm) {
        buildPipeline(pm, PipelineOptions{Phase::Graph});
      });
}

} // namespace kiln
