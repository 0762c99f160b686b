//===- LibraryClaims.h - what every backend's library calls share -*- C++ -*-===//
//
// A backend claims convolutions, matmuls and their fused epilogues for its
// vendor library (compiler/Target/LibraryCall.h); these are the pieces
// every such backend uses: the attributes that mark a claimed op, the
// description of an epilogue kernel, and the bufferisation of
// `kiln.library_call N (...)` into `call @kiln_library_call_N(inputs...,
// weight, output[, bias])` on buffers, which the artifact's entry point
// forwards to kiln_runtime_services.library_call.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_LIBRARYCLAIMS_H
#define KILN_BACKENDS_COMMON_LIBRARYCLAIMS_H

#include "compiler/Target/LibraryCall.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <vector>

namespace kiln::library {

/// On a claimed op or kernel: the index of its call.
inline constexpr llvm::StringLiteral kCallAttr = KilnDialect::LibraryCallAttrHelper::getNameStr();
/// On a call whose output starts as one of its operands (the residual):
/// that operand's index.
inline constexpr llvm::StringLiteral kResidualAttr =
    KilnDialect::ResidualOperandAttrHelper::getNameStr();
/// On every call: how many leading operands are its inputs and weight.
inline constexpr llvm::StringLiteral kInputsAttr =
    KilnDialect::LibraryInputsAttrHelper::getNameStr();

/// On a claimed convolution or pool whose output's spatial dims are known
/// only at run time: how the bufferisation sizes them from the input's.
inline constexpr llvm::StringLiteral kOutputWindowAttr =
    KilnDialect::OutputWindowAttrHelper::getNameStr();

/// A ranked tensor type's dims, -1 where dynamic.
std::vector<int64_t> dimsOf(mlir::Type type);
/// Whether any of the ranked tensor types has a zero-size dim.
bool hasZeroDim(llvm::ArrayRef<mlir::Type> types);
/// The operand a call's output starts as, if any.
std::optional<unsigned> residualOperand(mlir::Operation *op);
/// The library call an op was marked as, if any.
std::optional<unsigned> callIndex(mlir::Operation *op);

/// Adds an epilogue kernel's bias, residual and activation to `call`
/// (marking the kernel's residual operand); fails on an op no library
/// epilogue covers. The kernel's body is the root, then the epilogue in
/// kiln-fuse's order; its operands are the root's two, then what the
/// epilogue reads.
mlir::LogicalResult describeEpilogue(KernelOp kernel, LibraryCall &call);

/// Moves `locations` of `from`'s fused location onto `to`'s, or drops them
/// when `to` is null (a kernel's location names the model's ops in it:
/// `kiln inspect --kernels`).
void moveLocations(mlir::Operation *from, mlir::Operation *to,
                   llvm::ArrayRef<mlir::Location> locations);

/// Moves the activation of several ops that ends an epilogue kernel's body
/// (a SiLU: a sigmoid, then its mul; a hard sigmoid; a HardSwish) out after
/// the kernel, for a library that has no such activation: the call keeps
/// its bias and residual, and the activation is generated (as before
/// kiln-fuse took it into epilogues). Whether it moved one.
bool peelActivation(KernelOp kernel);

/// Marks `op` as call `calls.size()` and appends `call`; a convolution or
/// pool whose output has a spatial dim known only at run time gets its
/// window (kOutputWindowAttr).
void markLibraryCall(mlir::Operation *op, LibraryCall call, std::vector<LibraryCall> &calls);

/// A matmul call whose lhs or rhs is a transpose of the last two dims (of
/// a value computed at run time: constant weights are transposed at
/// compile time) reads the transpose's input instead, through strides or
/// the library's transpose flag (the call's `transposes`: lhs, rhs), so
/// the transpose is never computed: a training step's W^T and dY^T,
/// attention's K^T. A transpose that moves the last dim to the second last
/// with others (a sequence-first attention's K^T: [S, B*H, D] to
/// [B*H, D, S]) is read so from a transpose that keeps the last dim
/// ([B*H, S, D]), which moves whole rows. `accepts(call, k)`: whether the
/// backend's library reads operand k (0 the lhs, 1 the rhs) of `call` so.
/// The claimed op or kernel becomes its kiln.library_call here, on those
/// operands.
void absorbMatmulTransposes(mlir::ModuleOp module, std::vector<LibraryCall> &calls,
                            llvm::function_ref<bool(const LibraryCall &, int)> accepts);

/// At `op`: a call of `name` (a private declaration in `op`'s module with
/// MLIR's C interface, which the artifact's entry point defines) on
/// `args`.
void callExternal(mlir::RewriterBase &rewriter, mlir::Operation *op, llvm::StringRef name,
                  mlir::ValueRange args);

/// The bufferisation of `kiln.library_call`.
void registerLibraryCallBufferization(mlir::DialectRegistry &registry);

} // namespace kiln::library

#endif // KILN_BACKENDS_COMMON_LIBRARYCLAIMS_H
