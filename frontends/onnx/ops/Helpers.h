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

/// The permutation that moves `axis` of a rank-`rank` tensor last (the
/// others keep their order) and the one that moves it back.
struct AxisToLast {
  llvm::SmallVector<int64_t> toLast, back;
};
AxisToLast axisToLast(int64_t rank, int64_t axis);

/// An i64 iota over dim `d` of `shape`, laid out as [1.., shape[d], ..1]
/// so that it broadcasts along that dim.
mlir::Value iotaAlong(NodeContext &ctx, llvm::ArrayRef<int64_t> shape,
                      int64_t d);

/// Keys' cubic convolution weight of distances `t` (a float tensor) with
/// coefficient `a` (Resize's cubic_coeff_a; -0.75 for GridSample): 0
/// beyond |t| = 2.
mlir::Value cubicWeight(NodeContext &ctx, mlir::Value t, double a);

/// A constant tensor of `type` filled by `fn(flatIndex)`.
mlir::Value generateConstant(NodeContext &ctx, mlir::RankedTensorType type,
                             llvm::function_ref<double(int64_t)> fn);

//===--- run-time shape operands ------------------------------------------===//
//
// An operand that decides shapes (Reshape's shape, Slice's starts, Tile's
// repeats, ...) that is not a constant is read when the model runs: the
// importer builds the shape arithmetic as i64 tensor ops and the result's
// dims come from kiln.iota / kiln.dynamic_reshape.

/// Input `i` as an i64 tensor read at run time (integer inputs cast).
mlir::Value runtimeInts(NodeContext &ctx, size_t i);

/// What a reshape of `x` to `spec` (-2: an element computed at run time,
/// entry i of `target` when it is given) gives each dim, -1 where it cannot
/// tell. A run-time element that is a dynamic dim of `x` (the same tensor's
/// dim, through Shape, Gather, Concat and transposes) is that dim;
/// otherwise a run-time element at the position of a dynamic dim of `x` is
/// taken to be that dim (a batch carried through, as exporters write it);
/// so is a 0. With every dynamic dim of `x` so carried, the -1 entry is the
/// quotient of the static ones (a channel shuffle's [N, -1, H, W] after
/// [N, 2, C/2, H, W] and a transpose: C). The reshape checks these when the
/// model runs. (ReshapeDims.cpp)
llvm::SmallVector<int64_t> knownReshapeDims(mlir::Value x, llvm::ArrayRef<int64_t> spec,
                                            bool allowZero, mlir::Value target = {});
/// The dims of `v` as a 1-D i64 tensor: a constant when static, else
/// kiln.shape_of.
mlir::Value shapeTensor(NodeContext &ctx, mlir::Value v);
/// Entry `k` of a 1-D tensor as a rank-0 tensor.
mlir::Value entryOf(NodeContext &ctx, mlir::Value v, int64_t k);
/// A rank-0 value (or a 1-element tensor) as a 1-D tensor of one element.
mlir::Value asVector(NodeContext &ctx, mlir::Value v);
/// A tensor of one element as a rank-0 tensor.
mlir::Value asScalar(NodeContext &ctx, mlir::Value v);
/// Dim `d` of `v` as a rank-0 i64 tensor.
mlir::Value dimValue(NodeContext &ctx, mlir::Value v, int64_t d);
/// 1-D i64 tensor [0, 1, ..., n - 1] for a rank-0 i64 `n` read at run time.
mlir::Value iotaOfLength(NodeContext &ctx, mlir::Value n);
/// Rank-0 i64 constant.
mlir::Value i64Scalar(NodeContext &ctx, int64_t value);
/// An i64 iota over dim `d` of `v` (its length read at run time when
/// dynamic), laid out with `rank` dims, all 1 but dim `at`, so that it
/// broadcasts along that dim.
mlir::Value iotaOfDim(NodeContext &ctx, mlir::Value v, int64_t d, int64_t rank, int64_t at);
/// The dims of `v` as rank-0 i64 tensors (constants where static).
llvm::SmallVector<mlir::Value> dimValues(NodeContext &ctx, mlir::Value v);
/// `v` reshaped to the shape of `like` (same element count), read at run
/// time where `like` has dynamic dims.
mlir::Value reshapeLike(NodeContext &ctx, mlir::Value v, mlir::Value like);
/// The most entries a selection (selectedPositions) takes: it builds an
/// n x n matrix.
constexpr int64_t kMaxSelected = 4096;
/// The positions (i64 [count], count decided at run time) of the non-zero
/// entries of `flags` (i64 [n]), in order: entry k is the position whose
/// running count of selected entries reaches k + 1. Quadratic in n: callers
/// refuse a static n above kMaxSelected; a run-time n above it stops the
/// run with a shape error.
mlir::Value selectedPositions(NodeContext &ctx, mlir::Value flags);
/// `v` (an i64 tensor), with a run-time check: when `ok` (a rank-0 i1) is
/// false the run stops with a shape error (KILN_ERROR_SHAPE). (The check
/// is an iota whose length is -1 then, folded into `v`'s data flow so that
/// it runs before `v` is read.)
mlir::Value requireAtRunTime(NodeContext &ctx, mlir::Value v, mlir::Value ok);
/// `x` split along `axis` into pieces of `sizes` (rank-0 i64 values read
/// when the model runs): piece i gathers its run of the axis. Sizes that
/// are negative or do not add up to the dim stop the run with a shape error.
llvm::SmallVector<mlir::Value> splitAtRunTime(NodeContext &ctx, mlir::Value x, int64_t axis,
                                              llvm::ArrayRef<mlir::Value> sizes);
/// Concatenation of 1-D pieces (rank-0 pieces become one entry).
mlir::Value concatVector(NodeContext &ctx, llvm::ArrayRef<mlir::Value> pieces);
/// The (static) number of axes input `i` names for a Squeeze or reduction
/// of `x`, or nullopt (recorded) when it is not a 1-D tensor of static
/// length, or names more axes than `x` has dims.
std::optional<int64_t> removedAxesCount(NodeContext &ctx, mlir::Value x, size_t i);
/// Input `i` (axes) read at run time, made non-negative for rank `rank`.
mlir::Value runtimeAxes(NodeContext &ctx, size_t i, int64_t rank);
/// flags[p] = 1 (i64 [rank]) where p is one of `axes`.
mlir::Value axisFlags(NodeContext &ctx, mlir::Value axes, int64_t rank);
/// before[p] = how many of flags[0..p) are set.
mlir::Value countBefore(NodeContext &ctx, mlir::Value flags, int64_t rank);
/// `v` without the (size-1) dims whose flag is set; `resultRank` of them
/// are left.
mlir::Value squeezeFlagged(NodeContext &ctx, mlir::Value v, mlir::Value flags,
                           int64_t resultRank);

/// Cast / CastLike when the input or the target (`to`, ONNX's data type;
/// `target` its kiln type, null for strings) is a string tensor
/// (ops/Strings.cpp).
llvm::LogicalResult castStrings(NodeContext &ctx, int to, mlir::Type target);
/// Equal of two string tensors (ops/Strings.cpp).
llvm::LogicalResult compareStrings(NodeContext &ctx);
/// A string constant of `shape` (row-major `strings`): its text an i8
/// constant of the artifact, the handles `kiln.string "at"` its offsets
/// (ops/Strings.cpp). The caller marks it a string tensor.
mlir::Value buildStringConstant(mlir::OpBuilder &b, mlir::Location loc,
                                llvm::ArrayRef<std::string> strings,
                                llvm::ArrayRef<int64_t> shape);
/// The same in a node's importer, marked a string tensor.
mlir::Value stringConstant(NodeContext &ctx, llvm::ArrayRef<std::string> strings,
                           llvm::ArrayRef<int64_t> shape);
/// A STRING TensorProto (an initializer, Constant's value) as a string
/// constant; null, with `error` set, when its strings do not fill its dims.
mlir::Value stringTensorConstant(mlir::OpBuilder &b, mlir::Location loc,
                                 const onnx::TensorProto &tensor, std::string &error);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_OPS_HELPERS_H
