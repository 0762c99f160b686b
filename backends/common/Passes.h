//===- Passes.h - passes every backend's host code runs ---------*- C++ -*-===//
//
// Declarations of the passes in backends/common/Passes.td and their
// registration.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_PASSES_H
#define KILN_BACKENDS_COMMON_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::host {

#define GEN_PASS_DECL
#include "backends/common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "backends/common/Passes.h.inc"

} // namespace kiln::host

#endif // KILN_BACKENDS_COMMON_PASSES_H
