//===- KilnConstantFolding.h - evaluate kiln ops on constants ---*- C++ -*-===//
//
// Element-by-element evaluation of kiln ops whose operands are all dense
// constants. Used by the op folders so that shape computations (a Shape
// gathered, concatenated and fed to a reshape) become constants during
// import and in the graph phase. Only small tensors are folded: weights are
// resources and are left to the backend.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_KILNCONSTANTFOLDING_H
#define KILN_DIALECTS_KILN_IR_KILNCONSTANTFOLDING_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace kiln {

/// Tensors with more elements than this are not folded.
constexpr int64_t kMaxFoldedElements = 1 << 14;

/// Dense operands of an op, or an empty vector when one is not dense.
llvm::SmallVector<mlir::DenseElementsAttr>
denseOperands(llvm::ArrayRef<mlir::Attribute> operands);

/// result[i] = fn(operands broadcast to the result shape at i). Returns
/// null when the result type is not static or too large, or `fn` does.
mlir::DenseElementsAttr foldBroadcast(
    mlir::RankedTensorType resultType,
    llvm::ArrayRef<mlir::DenseElementsAttr> operands,
    llvm::function_ref<mlir::Attribute(llvm::ArrayRef<mlir::Attribute>)> fn);

/// result[i] = source[map(i)], for ops that only move elements. `map`
/// receives the result's multi-index and returns the flat source index.
mlir::DenseElementsAttr foldGather(
    mlir::RankedTensorType resultType, mlir::DenseElementsAttr source,
    llvm::function_ref<int64_t(llvm::ArrayRef<int64_t>)> map);

/// Converts one element to `type` with kiln.cast's semantics.
mlir::Attribute castElement(mlir::Attribute value, mlir::Type type);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_IR_KILNCONSTANTFOLDING_H
