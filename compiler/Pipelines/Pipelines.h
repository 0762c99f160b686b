//===- Pipelines.h - Kiln's phases and the passes in each -------*- C++ -*-===//
//
// The compiler is a sequence of named phases (docs/Architecture.md). This
// header names them; Pipelines.cpp is the only place that orders passes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINES_PIPELINES_H
#define KILN_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace kiln {

/// The phases of the compiler, in order. `fuse` groups ops into kernels;
/// `linalg` and `llvm` are the first two steps of CPU code generation
/// (memory planning runs inside `llvm`, after bufferisation); autodiff will
/// come after `graph`.
enum class Phase { Import, Graph, Fuse, Linalg, LLVM };

/// The phase named `name` (as in `--compile-to=<name>`), if any.
std::optional<Phase> parsePhase(llvm::StringRef name);
llvm::StringRef phaseName(Phase phase);

/// Options shared by every pipeline.
struct PipelineOptions {
  /// Stop after this phase (inclusive).
  Phase stopAfter = Phase::Graph;
  /// Lower memref arguments to bare pointers (what the artifact's entry
  /// point uses) instead of MLIR's memref descriptors (what mlir-runner and
  /// printMemref need).
  bool barePointerCalls = false;
  /// Start after this phase (the caller has run the ones before, e.g. to
  /// assign library calls to the kernels after `fuse`).
  Phase startAfter = Phase::Import;
  /// Allocate through MLIR's generic functions (_mlir_memref_to_llvm_alloc
  /// / _free), which the artifact routes to the runtime's pooled
  /// allocator, instead of malloc / free.
  bool genericAllocation = false;
  /// Run the outermost parallel loops on the runtime's threads (chunk
  /// functions called through `__kiln_parallel_for`, which the artifact
  /// provides), when their estimated iteration count reaches
  /// `minParallelWork`.
  bool parallelChunks = false;
  int64_t minParallelWork = 32768;
  /// Largest batch (dim 0 of dynamic inputs) the memory plan must hold;
  /// 0 leaves buffers with dynamic dims to the runtime's pool.
  int64_t maxBatch = 0;
  /// Fuse elementwise loop nests in the linalg phase (off: every op of the
  /// model its own loop nest, for comparisons).
  bool fuse = true;
};

/// Adds the passes of every phase after import up to `options.stopAfter`.
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers the named pipelines (`kiln-graph`, `kiln-lower-to-linalg`,
/// `kiln-lower-to-llvm`) with the pass registry.
void registerPipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_PIPELINES_H
