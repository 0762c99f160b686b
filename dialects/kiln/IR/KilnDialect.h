//===- KilnDialect.h - the kiln dialect, its enums and ops ------*- C++ -*-===//
//
// The one header users of the dialect include: the dialect class, the
// generated enums and op classes, and the shape-inference helpers that the
// generated op code calls.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_KILNDIALECT_H
#define KILN_DIALECTS_KILN_IR_KILNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/kiln/IR/KilnDialect.h.inc"
#include "dialects/kiln/IR/KilnEnums.h.inc"
#include "dialects/kiln/IR/KilnInterfaces.h.inc"

namespace kiln {

/// Marks an entry argument or result that is a string tensor: i64 handles
/// (see kiln.string), KILN_DTYPE_STRING in the artifact.
inline constexpr llvm::StringLiteral kStringAttr = "kiln.string";

/// Result types are compatible when they pairwise have the same element type
/// and rank and no two static dims differ: an op may declare `?` where
/// inference knows the size (kiln-infer-shapes refines it later).
bool areCompatibleResultTypes(mlir::TypeRange lhs, mlir::TypeRange rhs);

/// The storage-only element types (Kiln_LowPrecisionElements): float8,
/// float4 and 4- and 2-bit integers, which kiln moves and converts but
/// computes nothing on.
bool isLowPrecision(mlir::Type element);
/// The float ones of them, converted in software (LLVM has no such types).
bool isLowPrecisionFloat(mlir::Type element);

/// Infers the numpy-broadcast shape of `operands` with `elementType`.
llvm::LogicalResult inferBroadcastResult(std::optional<mlir::Location> loc,
                                         llvm::ArrayRef<mlir::Type> operands,
                                         mlir::Type elementType,
                                         llvm::SmallVectorImpl<mlir::Type> &out);

/// Infers the result of reducing `input` over `axes` (sorted, unique, in
/// range), keeping reduced dims as 1 when `keepDims`.
llvm::LogicalResult inferReduceResult(std::optional<mlir::Location> loc,
                                      mlir::Type input,
                                      llvm::ArrayRef<int64_t> axes,
                                      bool keepDims, mlir::Type elementType,
                                      llvm::SmallVectorImpl<mlir::Type> &out);

} // namespace kiln

#define GET_OP_CLASSES
#include "dialects/kiln/IR/KilnOps.h.inc"

#endif // KILN_DIALECTS_KILN_IR_KILNDIALECT_H
