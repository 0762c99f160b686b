//===- Fusion.h - the groupings kiln-fuse forms -----------------*- C++ -*-===//
//
// kiln-fuse runs these in order on each function: epilogues first (a
// convolution or matmul with its bias, residual and activation), then
// elementwise trees among the ops left.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_FUSION_FUSION_H
#define KILN_COMPILER_FUSION_FUSION_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace kiln::fusion {

/// Groups each tree of elementwise ops into a `kiln.kernel elementwise`:
/// a root and, recursively, the operands it computes that have no other
/// user and the root's shape (a value it would read through a broadcast is
/// left out: fusing it would compute it once per element that reads it).
/// Returns the number of kernels formed; `fusedOps` counts their ops.
int64_t formElementwiseKernels(mlir::func::FuncOp func, int64_t &fusedOps);

/// Groups each softmax, log-softmax, layer normalisation or reduction over
/// trailing axes (keepdims) with its elementwise prologue (the tree that
/// computes its input, as above) and epilogue (the chain of single users
/// after it) into a `kiln.kernel reduction` whose attribute
/// `kiln.outer_dims = k` says that every value in it is computed row by
/// row over the result's first k dims; the lowering runs the rows in
/// parallel, each in one go. Returns the number of kernels formed.
int64_t formReductionKernels(mlir::func::FuncOp func, int64_t &fusedOps);

/// The first reduced dim of an op that roots a reduction kernel (softmax
/// or log-softmax along the last dim, layer normalisation, a keepdims
/// reduction over trailing dims: rows of static size, at most 16,384
/// elements), or nullopt if `op` is not one.
std::optional<int64_t> firstReducedDim(mlir::Operation *op);

/// Elementwise kiln ops (unary, binary, compare, select, cast).
bool isElementwise(mlir::Operation *op);

/// Extends `tree` from index `from`: operands of its ops computed by
/// elementwise ops of the same block that are not in `grouped`, have no
/// other user and have the shape `shape`, recursively.
void growElementwiseTree(llvm::SmallVector<mlir::Operation *> &tree, size_t from,
                         llvm::ArrayRef<int64_t> shape,
                         const llvm::DenseSet<mlir::Operation *> &grouped);

/// Moves `ops` (one block, `last` the one whose result is used outside)
/// into a new `kiln.kernel` of `kind` whose operands are what they read from
/// outside, once each, in block order.
KernelOp groupIntoKernel(llvm::SmallVector<mlir::Operation *> ops, mlir::Operation *last,
                         KernelKind kind);

} // namespace kiln::fusion

#endif // KILN_COMPILER_FUSION_FUSION_H
