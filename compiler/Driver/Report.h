//===- Report.h - what a compile reports of its memory plan and kernels ---===//
//
// The compile report embedded in the artifact (`kiln inspect` reads it) and
// the lines `kiln compile --report` prints, built from the IR: the
// `kiln.memory_plan` of the entry function and its kernels after `linalg`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_REPORT_H
#define KILN_COMPILER_DRIVER_REPORT_H

#include "compiler/Target/Backend.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace kiln::driver {

/// What kiln-plan-memory recorded on a function.
struct MemoryPlanSummary {
  int64_t arenaBytes = 0, lowerBound = 0, naiveBytes = 0, planned = 0, unplanned = 0;
  int64_t inPlace = 0, bounded = 0, maxBatch = 0, positions = 0;
  llvm::SmallVector<int64_t> buffers; ///< (offset, size, first, last) each
  /// A training step's: where its backward pass starts (-1: none), and
  /// the buffers live across that position (activations saved for it).
  int64_t backwardFrom = -1, savedBuffers = 0, savedBytes = 0;
};

/// The memory plan of function `entry`.
MemoryPlanSummary readMemoryPlan(mlir::ModuleOp module, llvm::StringRef entry);

/// The kernels of function `entry` after the linalg phase: each library
/// call (named by the backend) and each loop nest, with the model's nodes
/// in it and the bytes its operands and results take (dynamic dims
/// counted as 1, with "dynamic": true). With `mark`, a call
/// `kiln_kernel_begin(k)` goes before kernel k (the artifact's profiling
/// hook, kiln_session_set_kernel_hook): the backend defines the symbol.
llvm::json::Array listKernels(mlir::ModuleOp module, llvm::StringRef entry,
                              const Backend &backend,
                              const std::vector<LibraryCall> &calls, bool mark);

/// The compile report as JSON (docs/UserGuide.md, kiln inspect), with the
/// backend's one-line summary of the code (Backend::codeSummary).
std::string buildReport(const MemoryPlanSummary &plan, llvm::json::Array kernels,
                        const std::string &code);

/// The `memory: ...` line of `kiln compile --report`.
std::string describeMemoryPlan(const MemoryPlanSummary &plan);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_REPORT_H
