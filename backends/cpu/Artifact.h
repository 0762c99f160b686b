//===- Artifact.h - writing a compiled model ---------------------*- C++ -*-===//
//
// An artifact is the model's object code plus a generated C entry point
// that implements the runtime ABI (runtime/include/kiln/kiln_model_abi.h):
// the descriptor (names, dtypes, dims, content hash) and a `run` function
// that turns plain pointers into MLIR memref descriptors. It is written as
// a shared library (.so), a static library (.a) or an object (.o), always
// with a C header.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_ARTIFACT_H
#define KILN_BACKENDS_CPU_ARTIFACT_H

#include "backends/cpu/LibraryCalls.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cpu {

struct ArtifactTensor {
  std::string name;
  int32_t dtype; ///< kiln_dtype
  std::vector<int64_t> dims; ///< -1 for dynamic
};

struct ArtifactInfo {
  std::vector<ArtifactTensor> inputs, outputs;
  std::string contentHash;
  std::string target;
  /// The symbol of the compiled entry point's C interface.
  std::string entrySymbol;
  /// Operations the runtime performs for the code (oneDNN convolutions).
  std::vector<LibraryCall> libraryCalls;
  /// The planned arena of the entry point (kiln-plan-memory).
  int64_t arenaBytes = 0;
  /// The largest batch the arena holds (`--max-batch`), 0 if unbounded.
  int64_t maxBatch = 0;
  /// The compile report (memory plan, kernels) as JSON, for kiln inspect.
  std::string report;
};

/// Writes `object` + the generated entry point to `outputPath` (.so, .a or
/// .o by its extension) and the header next to it (same stem, .h).
llvm::Error writeArtifact(llvm::StringRef outputPath, llvm::StringRef object,
                          const ArtifactInfo &info);

} // namespace kiln::cpu

#endif // KILN_BACKENDS_CPU_ARTIFACT_H
