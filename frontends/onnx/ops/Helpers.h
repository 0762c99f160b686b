//===- Helpers.h - building blocks shared by the op importers ---*- C++ -*-===//
//
// Small functions several op families use: elementwise templates, numpy
// matmul, legacy (opset < 7) broadcasting, and the window attributes of
// convolution and pooling.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_OPS_HELPERS_H
#define KILN_FRONTENDS_ONNX_OPS_HELPERS_H

#include "frontends/onnx/NodeContext.h"
#include "frontends/onnx/OpRegistry.h"

namespace kiln::onnx_frontend {

/// Imports a node as one unary kiln op applied to input 0.
template <typename OpTy> llvm::LogicalResult importUnary(NodeContext &ctx) {
  return ctx.setOutput(0, ctx.make<OpTy>(ctx.input(0)));
}

/// Input `i`, with opset < 7 legacy broadcasting applied for input 1 when
/// the node has `broadcast = 1` (the operand aligns at `axis`).
mlir::Value broadcastOperand(NodeContext &ctx, size_t i);

/// Imports a node as one binary kiln op on inputs 0 and 1.
template <typename OpTy> llvm::LogicalResult importBinary(NodeContext &ctx) {
  return ctx.setOutput(
      0, ctx.make<OpTy>(broadcastOperand(ctx, 0), broadcastOperand(ctx, 1)));
}

/// ONNX/numpy matmul: 1-D operands are promoted to matrices and the added
/// dim removed from the result.
mlir::Value numpyMatmul(NodeContext &ctx, mlir::Value a, mlir::Value b);

/// Inserts size-1 dims at `axes` (sorted, of the result) with kiln.reshape.
mlir::Value unsqueeze(NodeContext &ctx, mlir::Value v,
                      llvm::ArrayRef<int64_t> axes);
/// Removes size-1 dims at `axes` (sorted).
mlir::Value squeeze(NodeContext &ctx, mlir::Value v,
                    llvm::ArrayRef<int64_t> axes);

/// Window attributes of Conv / ConvTranspose / pooling after auto_pad.
struct Window {
  llvm::SmallVector<int64_t> kernel, strides, pads, dilations;
};
/// Reads kernel_shape (or `kernel` when given), strides, dilations, pads
/// and auto_pad for `input` with `spatial` spatial dims. Returns nullopt
/// (recorded) when the attributes are inconsistent or auto_pad needs a
/// dynamic spatial size.
std::optional<Window> readWindow(NodeContext &ctx, mlir::Value input,
                                 llvm::ArrayRef<int64_t> kernel,
                                 bool ceilMode = false);

/// The static size of dim `d` of `v`, or nullopt (recording an Unsupported
/// issue that says `why` needs it) when it is dynamic.
std::optional<int64_t> staticDim(NodeContext &ctx, mlir::Value v, int64_t d,
                                 llvm::StringRef why);

/// kiln.pad with zeros (pads: every low pad, then every high pad).
mlir::Value zeroPad(NodeContext &ctx, mlir::Value v,
                    llvm::ArrayRef<int64_t> pads);

/// kiln.compare with predicate `p`.
mlir::Value compare(NodeContext &ctx, ComparePredicate p, mlir::Value a,
                    mlir::Value b);

/// An i64 iota over dim `d` of `shape`, laid out as [1.., shape[d], ..1]
/// so that it broadcasts along that dim.
mlir::Value iotaAlong(NodeContext &ctx, llvm::ArrayRef<int64_t> shape,
                      int64_t d);

/// A constant tensor of `type` filled by `fn(flatIndex)`.
mlir::Value generateConstant(NodeContext &ctx, mlir::RankedTensorType type,
                             llvm::function_ref<double(int64_t)> fn);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_OPS_HELPERS_H
