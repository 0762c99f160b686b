//===- ShapeEntries.h - shape entries traced to dims and constants -*- C++ -*-===//
//
// A model computes a shape as a small integer tensor: kiln.shape_of, then
// ops that move or combine its entries. ShapeEntryExpr follows one entry
// of such a tensor back to the constants and dims it is computed from.
// The type inference of kiln.iota and kiln.dynamic_reshape evaluates it
// (an entry known when compiling is a static dim of the result); the
// lowering emits it as host arithmetic on the dims (hostEntry), so a shape
// so computed costs no kernel and is never read back from a device.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_SHAPEENTRIES_H
#define KILN_DIALECTS_KILN_IR_SHAPEENTRIES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace kiln {

/// The elements of `v` where it is a kiln.constant of integers (i1 and
/// unsigned ones zero-extended), else nullopt.
std::optional<llvm::SmallVector<int64_t>> constantInts(mlir::Value v);

/// How entry `i` of an integer tensor of rank 0 or 1 and static length is
/// computed: a tree whose leaves are constants and dims of tensors (through
/// kiln.shape_of), combined by integer add, sub, mul and div (truncating,
/// as kiln.div). trace() follows reshape, cast, gather and slice with
/// constant indices, concat, and select on a constant condition to those
/// leaves, at most 16 producers deep.
struct ShapeEntryExpr {
  enum class Kind { constant, dim, add, sub, mul, div };
  struct Node {
    Kind kind;
    /// constant: the value; dim: which dim of `of`.
    int64_t value = 0;
    /// dim: the tensor whose dim it is.
    mlir::Value of;
    /// add, sub, mul, div: the operands, indices into `nodes`.
    unsigned lhs = 0, rhs = 0;
  };
  /// Operands before the nodes that use them; the entry is the last.
  llvm::SmallVector<Node, 4> nodes;

  /// The expression of entry `i` of `tensor`, or nullopt where a producer
  /// on the way is none of the above.
  static std::optional<ShapeEntryExpr> trace(mlir::Value tensor, int64_t i);
  unsigned root() const { return nodes.size() - 1; }
  /// The value of node `at` when compiling: nullopt where it reads a
  /// dynamic dim, divides by zero or overflows int64.
  std::optional<int64_t> evaluate(unsigned at) const;
};

/// Entry `i` of `tensor` where it is known when compiling (a constant, or
/// arithmetic on constants and static dims), else nullopt.
std::optional<int64_t> knownShapeEntry(mlir::Value tensor, int64_t i);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_IR_SHAPEENTRIES_H
