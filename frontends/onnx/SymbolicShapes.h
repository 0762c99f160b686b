//===- SymbolicShapes.h - shape arithmetic on dynamic dims ------*- C++ -*-===//
//
// Exporters compute reshape targets from `Shape` at run time (e.g. a
// transformer's [batch * heads, seq, head_dim]). Kiln's IR has no tensors
// of dims: the importer evaluates such shape arithmetic itself, element by
// element, where each element is a known integer or unknown (it depends on
// a dynamic dim). A fully known result becomes a constant; one with unknown
// elements stays symbolic and may only reach the ops that take a shape
// (Reshape, where one unknown element becomes -1; Expand, where it keeps
// the input's dynamic dim; Pad, which leaves a dim whose pads are known
// zeros alone). Anything else that reads it is unsupported,
// with the node named.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_SYMBOLICSHAPES_H
#define KILN_FRONTENDS_ONNX_SYMBOLICSHAPES_H

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

/// An integer tensor computed from shapes: rank 0 or 1, or rank 2 and
/// more where `dims` says (torch's exporter reshapes F.pad's pads to
/// [-1, 2], reverses the pairs and transposes them).
struct SymbolicInts {
  llvm::SmallVector<std::optional<int64_t>> values; ///< row-major; nullopt: unknown
  bool scalar = false;
  llvm::SmallVector<int64_t> dims; ///< rank 2 and more; empty: rank 0 or 1

  bool fullyKnown() const;
  /// The dims of the tensor, whatever its rank.
  llvm::SmallVector<int64_t> shape() const;
};

/// Whether `opType` is shape arithmetic the importer can evaluate on
/// symbolic inputs.
bool isSymbolicArithmetic(llvm::StringRef opType);

/// Evaluates a shape-arithmetic node with at least one symbolic input and
/// binds its output (a constant when every element is known).
llvm::LogicalResult evaluateSymbolic(NodeContext &ctx);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_SYMBOLICSHAPES_H
