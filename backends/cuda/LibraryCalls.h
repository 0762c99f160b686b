//===- LibraryCalls.h - what the CUDA backend hands to its libraries -*- C++ -*-===//
//
// Matmuls (a linear layer's, attention's batched ones) run in cuBLASLt with
// the epilogue it fuses: bias, ReLU or tanh-GELU, and a residual added in
// place (beta = 1); 2-D convolutions in cuDNN (asymmetric pads taken by an
// explicit pad of the input first) with a bias, a residual, then ReLU,
// ReLU6, sigmoid or tanh. A kernel whose epilogue the library does not
// cover is dissolved: the matmul or convolution is the call, its epilogue
// a generated kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_LIBRARYCALLS_H
#define KILN_BACKENDS_CUDA_LIBRARYCALLS_H

#include "compiler/Target/LibraryCall.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinOps.h"

#include <vector>

namespace kiln::cuda {

/// Marks the matmuls and convolutions (and their kernels) the libraries
/// run and returns their calls: LibraryKind::Matmul (row-major lhs
/// [.., M, K], rhs [K, N] or [.., K, N], output [.., M, N]) and
/// LibraryKind::Convolution (channels-first).
std::vector<LibraryCall> claimLibraryCalls(mlir::ModuleOp module);

/// Whether cuDNN runs `conv` once its pads are symmetric: f32, 2-D,
/// channels-first, a static weight, only the batch dynamic.
bool cudnnRunsWithSymmetricPads(ConvOp conv);

/// Gives each convolution cuDNN would run but for its asymmetric pads an
/// explicit `kiln.pad` of its input by the difference (before its kernel,
/// in the input's place among the kernel's operands, if it roots one) and
/// the smaller pad of each dim on both sides (SplitConvPads.cpp); returns
/// how many.
int splitAsymmetricConvPads(mlir::ModuleOp module);

/// Makes each `kiln.concat` whose leading inputs are exactly an earlier
/// concatenation's (same axis and block; at least two) take that
/// concatenation in their place, the longest such (ChainConcats.cpp);
/// returns how many.
int chainConcats(mlir::ModuleOp module);

} // namespace kiln::cuda

#endif // KILN_BACKENDS_CUDA_LIBRARYCALLS_H
