//===- Passes.h - CUDA code generation passes -------------------*- C++ -*-===//
//
// Declarations of the passes in backends/cuda/Passes.td and their
// registration.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_PASSES_H
#define KILN_BACKENDS_CUDA_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::cuda {

#define GEN_PASS_DECL
#include "backends/cuda/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "backends/cuda/Passes.h.inc"

/// The module attributes kiln-cuda-gather-kernels and
/// kiln-cuda-lower-launches leave for the artifact.
inline constexpr llvm::StringLiteral kConstantsAttr = "kiln_cuda.constants";
inline constexpr llvm::StringLiteral kKernelsAttr = "kiln_cuda.kernels";
inline constexpr llvm::StringLiteral kLaunchesAttr = "kiln_cuda.launches";
inline constexpr llvm::StringLiteral kPtxAttr = "kiln_cuda.ptx";
/// kiln-gpu-map-loops: the memref type of each value the host reads from
/// device memory (kDeviceReadPrefix + its index).
inline constexpr llvm::StringLiteral kDeviceReadsAttr = "kiln_cuda.device_reads";
/// kiln-gpu-map-loops: each host function called on device buffers (a
/// string operation, kHostCallPrefix + its index): {callee, args (their
/// memref types), staged (whether each is device memory, copied to the
/// host and, the last, back)}.
inline constexpr llvm::StringLiteral kHostCallsAttr = "kiln_cuda.host_calls";
/// The C-interface functions the entry point defines.
inline constexpr llvm::StringLiteral kLaunchPrefix = "__kiln_cuda_launch_";
inline constexpr llvm::StringLiteral kConstantPrefix = "__kiln_cuda_constant_";
inline constexpr llvm::StringLiteral kDeviceReadPrefix = "__kiln_cuda_read_";
inline constexpr llvm::StringLiteral kHostCallPrefix = "__kiln_cuda_host_";
/// The one GPU module every kernel ends up in.
inline constexpr llvm::StringLiteral kKernelModule = "kiln_kernels";

} // namespace kiln::cuda

#endif // KILN_BACKENDS_CUDA_PASSES_H
