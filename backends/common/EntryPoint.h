//===- EntryPoint.h - the artifact's C entry point ---------------*- C++ -*-===//
//
// An artifact is its host object code (MLIR's C interface of the entry
// function) plus generated C: the entry point that implements the runtime
// ABI (runtime/include/kiln/kiln_model_abi.h) and the forwarders the
// compiled code calls (allocation, parallel_for, library calls, and what a
// backend adds), then the shared descriptor (Descriptor.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_ENTRYPOINT_H
#define KILN_BACKENDS_COMMON_ENTRYPOINT_H

#include "compiler/Target/Backend.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <set>
#include <string>

namespace kiln::artifact {

/// The C source of the entry point `run`: memref descriptor types
/// `memrefR` for the ranks of the model's tensors, its library calls'
/// operands and `extraRanks`; the static `services` / `services_state` /
/// `call_failed` / `allocation_failed()` the forwarders use; then
/// `extra` (a backend's own forwarders) before `run`.
std::string entryPointSource(const ArtifactContents &contents,
                             const std::set<int64_t> &extraRanks = {},
                             llvm::StringRef extra = {});

} // namespace kiln::artifact

#endif // KILN_BACKENDS_COMMON_ENTRYPOINT_H
