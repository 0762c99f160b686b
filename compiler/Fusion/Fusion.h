//===- Fusion.h - the groupings kiln-fuse forms -----------------*- C++ -*-===//
//
// kiln-fuse runs these in order on each function: epilogues first (a
// convolution or matmul with its bias, residual and activation), then
// elementwise trees among the ops left.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_FUSION_FUSION_H
#define KILN_COMPILER_FUSION_FUSION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::fusion {

/// Groups each tree of elementwise ops into a `kiln.kernel "elementwise"`:
/// a root and, recursively, the operands it computes that have no other
/// user and the root's shape (a value it would read through a broadcast is
/// left out: fusing it would compute it once per element that reads it).
/// Returns the number of kernels formed; `fusedOps` counts their ops.
int64_t formElementwiseKernels(mlir::func::FuncOp func, int64_t &fusedOps);

} // namespace kiln::fusion

#endif // KILN_COMPILER_FUSION_FUSION_H
