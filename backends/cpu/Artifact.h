//===- Artifact.h - the CPU artifact's entry point ---------------*- C++ -*-===//
//
// A CPU artifact is the model's object code plus generated C: the entry
// point that implements the runtime ABI (runtime/include/kiln/
// kiln_model_abi.h) for MLIR's C interface, and the shared descriptor
// (backends/common). backends/common links it into a .so, .a or .o.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_ARTIFACT_H
#define KILN_BACKENDS_CPU_ARTIFACT_H

#include "compiler/Target/Backend.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln::cpu {

/// The C source of the artifact's entry point and descriptor (device
/// CPU, needing `requiredFeatures`).
std::string artifactSource(const ArtifactContents &contents, llvm::StringRef requiredFeatures);

} // namespace kiln::cpu

#endif // KILN_BACKENDS_CPU_ARTIFACT_H
