//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// Declarations of the passes in backends/cpu/Passes.td and their
// registration.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_PASSES_H
#define KILN_BACKENDS_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::cpu {

#define GEN_PASS_DECL
#include "backends/cpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "backends/cpu/Passes.h.inc"

/// Prefix of the chunk functions kiln-outline-parallel-chunks creates and
/// the name of the runtime entry point kiln-pack-chunk-calls calls.
inline constexpr llvm::StringLiteral kChunkPrefix = "__kiln_chunk_";
inline constexpr llvm::StringLiteral kParallelForSymbol = "__kiln_parallel_for";
/// The module attribute kiln-export-library-weights leaves: call id ->
/// the symbol of its constant weights.
inline constexpr llvm::StringLiteral kLibraryWeightsAttr = "kiln_cpu.library_weights";
inline constexpr llvm::StringLiteral kLibraryWeightsPrefix = "kiln_library_weights_";

} // namespace kiln::cpu

#endif // KILN_BACKENDS_CPU_PASSES_H
