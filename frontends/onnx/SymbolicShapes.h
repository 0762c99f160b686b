//===- SymbolicShapes.h - shape arithmetic on dynamic dims ------*- C++ -*-===//
//
// Exporters compute reshape targets from `Shape` at run time (e.g. a
// transformer's [batch * heads, seq, head_dim]). Kiln's IR has no tensors
// of dims: the importer evaluates such shape arithmetic itself, element by
// element, where each element is a known integer or unknown (it depends on
// a dynamic dim). A fully known result becomes a constant; one with unknown
// elements stays symbolic and may only reach the ops that take a shape
// (Reshape, where one unknown element becomes -1; Expand, where it keeps
// the input's dynamic dim). Anything else that reads it is unsupported,
// with the node named.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_SYMBOLICSHAPES_H
#define KILN_FRONTENDS_ONNX_SYMBOLICSHAPES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <optional>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace kiln::onnx_frontend {

class NodeContext;

/// What an unknown element is, where the importer can tell: dim `dim` of
/// the kiln value `tensor` (Shape of a dynamic tensor, and the ops that
/// only move its elements: Gather, Concat, Slice, a Where decided when
/// compiling). Expand to such an element broadcasts against a tensor with
/// that dim instead of reading the element when the model runs.
struct DimOrigin {
  mlir::Value tensor;
  int64_t dim = 0;
};

/// An integer tensor of rank 0 or 1 computed from shapes.
struct SymbolicInts {
  llvm::SmallVector<std::optional<int64_t>> values; ///< nullopt: unknown
  /// Each element's origin, where known (shorter than `values`: the rest
  /// have none).
  llvm::SmallVector<std::optional<DimOrigin>> origins;
  bool scalar = false;

  bool fullyKnown() const;
  std::optional<DimOrigin> originOf(size_t i) const {
    return i < origins.size() ? origins[i] : std::nullopt;
  }
  /// Appends an element and its origin (kept for unknown elements only).
  void push(std::optional<int64_t> value, std::optional<DimOrigin> origin = std::nullopt);
  /// Appends element `i` of `from`, with its origin.
  void pushFrom(const SymbolicInts &from, size_t i) { push(from.values[i], from.originOf(i)); }
};

/// Whether `opType` is shape arithmetic the importer can evaluate on
/// symbolic inputs.
bool isSymbolicArithmetic(llvm::StringRef opType);

/// Evaluates a shape-arithmetic node with at least one symbolic input and
/// binds its output (a constant when every element is known).
llvm::LogicalResult evaluateSymbolic(NodeContext &ctx);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_SYMBOLICSHAPES_H
