//===- StringCalls.h - kiln.string as calls of the entry point's C -*- C++ -*-===//
//
// The bufferisation of `kiln.string` into calls of `kiln_string_<kind>`,
// and the C source of those functions, which the artifact's entry point
// carries when the code calls them (ArtifactContents::strings).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_STRINGCALLS_H
#define KILN_BACKENDS_COMMON_STRINGCALLS_H

#include "mlir/IR/DialectRegistry.h"

#include <string>

namespace kiln::strings {

/// The bufferisation of `kiln.string` (host code: the CUDA backend calls
/// the functions on host copies of its device buffers).
void registerStringBufferization(mlir::DialectRegistry &registry);

/// The C functions, for the entry point's source (after its memref1,
/// services, services_state, call_failed and allocation_failed).
std::string functionsSource();

} // namespace kiln::strings

#endif // KILN_BACKENDS_COMMON_STRINGCALLS_H
