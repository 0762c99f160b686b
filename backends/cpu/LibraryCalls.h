//===- LibraryCalls.h - conv / matmul handed to the runtime -----*- C++ -*-===//
//
// On CPU, convolutions and matmuls (with their epilogues) run in oneDNN
// through the runtime. Before lowering,
// every convolution oneDNN can run gets `kiln.library_call = N`; the
// linalg lowering leaves those ops alone, and bufferisation turns each into
// a call of `kiln_library_call_N(input, weight, output)`, which the
// artifact's entry point forwards to the runtime. The table of calls goes
// into the artifact's descriptor so the runtime can prepare them up front.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_LIBRARYCALLS_H
#define KILN_BACKENDS_CPU_LIBRARYCALLS_H

#include "compiler/Target/LibraryCall.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

#include <string>
#include <vector>

namespace kiln::cpu {

struct LibraryCallOptions {
  /// Run a convolution's epilogue as oneDNN post-ops too. Off by default:
  /// oneDNN 2.6's plain-layout convolutions are slower with post-ops than
  /// alone followed by Kiln's fused epilogue loop.
  bool convolutionPostOps = false;
};

/// Marks the ops of `module` that the runtime will run and returns their
/// table, indexed by the ids in the marks.
std::vector<LibraryCall> assignLibraryCalls(mlir::ModuleOp module,
                                            const LibraryCallOptions &options = {});

/// Makes kiln.library_call ops bufferise into calls of the runtime.
void registerLibraryCallBufferization(mlir::DialectRegistry &registry);

} // namespace kiln::cpu

#endif // KILN_BACKENDS_CPU_LIBRARYCALLS_H
