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
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln::strings {

/// What the name of every function a `kiln.string` calls starts with
/// ("kiln_string_lower", "kiln_string_parse_f32", ...).
inline constexpr llvm::StringLiteral kFunctionPrefix = "kiln_string_";

/// The bufferisation of `kiln.string` (host code: the CUDA backend calls
/// the functions on host copies of its device buffers).
void registerStringBufferization(mlir::DialectRegistry &registry);

/// The C functions, for the entry point's source (after its memref1,
/// services, services_state, call_failed and allocation_failed).
std::string functionsSource();

} // namespace kiln::strings

#endif // KILN_BACKENDS_COMMON_STRINGCALLS_H
