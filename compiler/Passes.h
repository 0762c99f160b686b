//===- Passes.h - Kiln compiler passes --------------------------*- C++ -*-===//
//
// Declarations of every pass in Passes.td and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PASSES_H
#define KILN_COMPILER_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "dialects/kiln/IR/KilnDialect.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace kiln

#endif // KILN_COMPILER_PASSES_H
