//===- Pipelines.h - Kiln's phases and the passes in each -------*- C++ -*-===//
//
// The compiler is a sequence of named phases (docs/Architecture.md). This
// header names them; Pipelines.cpp is the only place that orders the
// target-neutral passes (each backend orders its codegen in its own
// pipeline file).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINES_PIPELINES_H
#define KILN_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kiln {

/// The phases of the compiler, in order. Up to `plan` they know no target
/// (this file orders their passes); `codegen` is the chosen backend's own
/// pipeline (compiler/Target/Backend.h), and the artifact is written after
/// it. `fuse` groups ops into kernels, the backend claims library calls
/// between `fuse` and `linalg`, `plan` bufferises and packs intermediates
/// into one arena. Autodiff will come after `graph`.
enum class Phase { Import, Graph, Fuse, Linalg, Plan, Codegen };

/// The phase named `name` (as in `--compile-to=<name>`), if any. `llvm`
/// names `codegen` too (the CPU backend's code generation ends in the LLVM
/// dialect).
std::optional<Phase> parsePhase(llvm::StringRef name);
llvm::StringRef phaseName(Phase phase);
/// "import, graph, fuse, linalg, plan, codegen", for messages.
std::string phaseNames();

/// Options shared by every pipeline.
struct PipelineOptions {
  /// Stop after this phase (inclusive).
  Phase stopAfter = Phase::Graph;
  /// Start after this phase (the caller has run the ones before, e.g. to
  /// let the backend claim library calls after `fuse`).
  Phase startAfter = Phase::Import;
  /// Largest batch (dim 0 of dynamic inputs) the memory plan must hold;
  /// 0 leaves buffers with dynamic dims to the runtime's pool.
  int64_t maxBatch = 0;
  /// Fuse elementwise loop nests in the linalg phase (off: every op of the
  /// model its own loop nest, for comparisons).
  bool fuse = true;
  /// A training step's `--remat`: kiln-rematerialize before kiln-fuse.
  bool remat = false;
};

/// Adds the passes of every target-neutral phase after `options.startAfter`
/// up to `options.stopAfter` (`codegen` is the backend's: not added here).
/// Each phase ends with `kiln-verify-contract` for that phase.
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Adds the check of the import contract (what a source must hand the
/// driver: kiln-verify-contract{phase=import}).
void buildImportCheck(mlir::OpPassManager &pm);

/// Registers the named pipelines (`kiln-graph`, `kiln-lower-to-linalg`,
/// `kiln-plan`) with the pass registry.
void registerPipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_PIPELINES_H
