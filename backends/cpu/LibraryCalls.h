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
  /// Run a convolution's epilogue (bias, residual sum, activation) as
  /// oneDNN post-ops. On by default: in oneDNN's own layouts the fused
  /// primitive is faster than the convolution followed by Kiln's epilogue
  /// loop (resnet50, 2 threads: 57 vs 66 ms).
  bool convolutionPostOps = true;
  /// Keep activations channels-last (NHWC) between convolutions that run
  /// in oneDNN, the layout its AVX-512 / AVX2 kernels run in, so that no
  /// reorder runs between them (assignConvolutionLayouts).
  bool channelsLast = true;
  /// Store constant weights in the layout oneDNN picks on this host
  /// (compile time), so a session neither packs nor holds a second copy.
  bool prepackWeights = true;
};

/// Marks the ops of `module` that the runtime will run and returns their
/// table, indexed by the ids in the marks.
std::vector<LibraryCall> assignLibraryCalls(mlir::ModuleOp module,
                                            const LibraryCallOptions &options = {});

/// Makes kiln.library_call ops bufferise into calls of the runtime.
void registerLibraryCallBufferization(mlir::DialectRegistry &registry);

} // namespace kiln::cpu

#endif // KILN_BACKENDS_CPU_LIBRARYCALLS_H
