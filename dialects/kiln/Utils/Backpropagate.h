//===- Backpropagate.h - reverse mode over a run of kiln ops ----*- C++ -*-===//
//
// The walk every gradient in Kiln takes: backwards over ops in program
// order, each op whose results carry a gradient asking its rule
// (DifferentiableOpInterface) for its operands', a value used several
// times summing them. kiln-differentiate (compiler/Autodiff) runs it over
// a function; the ONNX importer's Gradient op over the graph imported so
// far. The rules themselves are attached to the context by
// kiln::autodiff::registerGradientRules.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_UTILS_BACKPROPAGATE_H
#define KILN_DIALECTS_KILN_UTILS_BACKPROPAGATE_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {

/// Whether `v` can carry a gradient (a floating-point tensor).
bool carriesGradient(mlir::Value v);

/// Adds `g` to the gradient of `v` in `grads` (a kiln.add where it has one
/// already; nothing when `g` is null or `v` carries none). Fails, on
/// `from`, when `g`'s type is not `v`'s.
mlir::LogicalResult accumulateGradient(mlir::OpBuilder &b, llvm::DenseMap<mlir::Value, mlir::Value> &grads,
                                       mlir::Value v, mlir::Value g, mlir::Operation *from);

/// Reverse mode over `ops` (program order, one block): from the gradients
/// in `grads`, those of every value the ops read, built at `b`'s insertion
/// point. A result without a gradient of its own gets zeros; an op a
/// gradient must cross without a rule fails with a diagnostic naming it
/// (one whose operands carry none, a constant, is passed).
mlir::LogicalResult backpropagate(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Operation *> ops,
                                  llvm::DenseMap<mlir::Value, mlir::Value> &grads);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_UTILS_BACKPROPAGATE_H
