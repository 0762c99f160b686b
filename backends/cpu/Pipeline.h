//===- Pipeline.h - the CPU backend's code generation -----------*- C++ -*-===//
//
// The CPU backend's own pipeline, after the target-neutral `plan` phase:
// parallel loops, chunk outlining, the LLVM dialect. The only place that
// orders the CPU backend's passes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_PIPELINE_H
#define KILN_BACKENDS_CPU_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <cstdint>

namespace kiln::cpu {

struct CpuCodegenOptions {
  /// Lower memref arguments to bare pointers instead of MLIR's memref
  /// descriptors (what mlir-runner and printMemref need).
  bool barePointerCalls = false;
  /// Allocate through MLIR's generic functions (_mlir_memref_to_llvm_alloc
  /// / _free), which the artifact routes to the runtime's pooled
  /// allocator, instead of malloc / free.
  bool genericAllocation = true;
  /// Run the outermost parallel loops on the runtime's threads (chunk
  /// functions called through `__kiln_parallel_for`, which the artifact
  /// provides) when their estimated iteration count reaches
  /// `minParallelWork`.
  bool parallelChunks = true;
  int64_t minParallelWork = 32768;
};

/// Adds the CPU code generation passes: bufferised IR with a memory plan
/// -> the LLVM dialect.
void buildCpuCodegenPipeline(mlir::OpPassManager &pm, const CpuCodegenOptions &options);

/// Registers `kiln-lower-to-llvm` (every phase, then CPU code generation
/// with memref-descriptor calls and malloc, for mlir-runner) and the CPU
/// passes.
void registerCpuPipelines();

} // namespace kiln::cpu

#endif // KILN_BACKENDS_CPU_PIPELINE_H
