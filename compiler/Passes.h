//===- Passes.h - Kiln compiler passes --------------------------*- C++ -*-===//
//
// Declarations of every pass in Passes.td and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PASSES_H
#define KILN_COMPILER_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace kiln

#endif // KILN_COMPILER_PASSES_H
