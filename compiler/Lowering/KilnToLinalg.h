//===- KilnToLinalg.h - lowering kiln ops to linalg on tensors --*- C++ -*-===//
//
// Target-independent lowering of the kiln dialect to linalg, tensor, arith
// and math on tensors, shared by every backend. Library operations
// (matmul, conv) may be claimed by a backend before this runs; what is
// left is lowered to generic loops nests here.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_LOWERING_KILNTOLINALG_H
#define KILN_COMPILER_LOWERING_KILNTOLINALG_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace kiln {
class KernelOp;
} // namespace kiln

namespace kiln {

/// Elementwise ops (unary, binary with broadcasting, compare, select,
/// cast) and constants.
void populateElementwiseToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// Reductions and arg-reductions.
void populateReductionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// Matmul, convolution and pooling as generic loop nests (the fallback
/// when no library claims them).
void populateContractionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// Data movement: transpose, expand, concat, split, slice,
/// gather, pad.
void populateDataMovementToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// reshape and dynamic_reshape (ReshapesToLinalg.cpp).
void populateReshapesToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// kiln.topk: one scan of every row, an insertion sort that stops at k
/// (scf loops on tensors).
void populateTopKToLoopsPatterns(mlir::RewritePatternSet &patterns);

namespace lowering {

/// What generated code calls when a shape read at run time is invalid (a
/// negative size, a reshape that changes the element count, a read from
/// an empty tensor): the artifact's entry point defines it and abandons
/// the run with KILN_RUN_SHAPE_ERROR. kiln-convert-to-linalg declares it
/// where some lowering calls it.
inline constexpr llvm::StringLiteral kShapeErrorFunction = "kiln_shape_error";

/// A lowering pattern declining `op` for `reason` (a limit of the lowering,
/// not "another pattern takes it"): notifyMatchFailure, which only debug
/// builds of MLIR print, and the reason kept, so that when no pattern
/// lowers the op kiln-convert-to-linalg's error says why.
mlir::LogicalResult refuse(mlir::PatternRewriter &b, mlir::Operation *op,
                           llvm::StringRef reason);

/// Calls kShapeErrorFunction with `code` unless `ok` (i1) holds.
void checkAtRunTime(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ok, int32_t code);

/// The number of elements of `input` (a ranked tensor), as an index.
mlir::Value elementCount(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input);

/// Run-time shape error codes (the entry point names them).
enum ShapeErrorCode : int32_t {
  kNegativeSize = 1,
  kReshapeCount = 2,
  kReadFromEmpty = 3,
  kContractedDims = 4, ///< a matmul's operands disagree on the dim it sums over
  kDeclaredSize = 5,   ///< a dim the IR declares static has another size
  kTopKCount = 6,      ///< a topk's run-time k outside [0, the axis' length]
};

/// Which dims of `inputs`, broadcasting numpy-style into `resultType`
/// (aligned at the right), may stretch at run time: a dynamic input dim
/// where the result's is a static size other than 1, or where another
/// input is dynamic too, unless every input dynamic there has its size
/// from the same source (followed back through elementwise ops, library
/// calls' batches, ops writing into a destination, tensor.dim and
/// tensor.empty: x * sigmoid(x) at a dynamic batch cannot broadcast). Such
/// a dim is read at (size == 1 ? 0 : i); the others at i. Shared by the
/// elementwise lowering and the row kernels (RowKernels.cpp).
class RuntimeBroadcast {
public:
  RuntimeBroadcast(mlir::RankedTensorType resultType, mlir::ValueRange inputs);
  /// Whether an input's dims fit the result's rank (none has more).
  bool valid() const { return isValid; }
  /// Whether dim `i` of an input of type `type` may stretch at run time.
  bool mayStretch(mlir::RankedTensorType type, int64_t i) const;
  /// The size of the result's dynamic dim `j`: the largest of the inputs'
  /// sizes there (a static 1 stretches), one input's when every input
  /// dynamic there has the same source. Null when no input has the dim.
  mlir::Value resultSize(mlir::OpBuilder &b, mlir::Location loc, int64_t j) const;

private:
  mlir::RankedTensorType resultType;
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<int64_t> dynamicInputs; // inputs dynamic at each result dim
  llvm::SmallVector<bool> oneSource;        // ... all with the same size source
  bool isValid = true;
};

/// A linalg.generic over the shape of `resultType` whose inputs broadcast
/// numpy-style into it; `body` maps the input elements to the result
/// element. An input dim that may stretch at run time (RuntimeBroadcast)
/// is read in the body at (size == 1 ? 0 : i); the others through
/// indexing maps.
mlir::FailureOr<mlir::Value> buildBroadcastGeneric(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
    mlir::ValueRange inputs,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::ValueRange)>
        body);

/// tensor.empty of `type`, taking each dynamic size from the dim of the
/// same index of the first `source` of that rank with a dynamic dim there.
mlir::FailureOr<mlir::Value> buildEmpty(mlir::OpBuilder &b, mlir::Location loc,
                                        mlir::RankedTensorType type,
                                        mlir::ValueRange sources);

/// Concats of more inputs than this become one tensor.concat, which
/// bufferises as one op (a buffer and a copy per input). Fewer become a
/// chain of insert_slices, whose producers the empty-tensor elimination
/// can make write into the concat's buffer directly (no copy), as a
/// library call marked `kiln.output_into` does; but one-shot
/// bufferisation's analysis of such a chain grows faster than quadratically
/// with its length (100 inputs: 4 s, 200: 72 s).
constexpr size_t kMaxInsertSliceChain = 16;

/// Dim `d` of `v` as an index value (a constant when static).
mlir::Value dimOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, int64_t d);

/// The number of windows of `extent` positions every `stride` over a dim
/// of `size` positions (an index value) padded by `low` and `high`:
/// max(0, (size + low + high - extent) floordiv stride + 1). With `ceil`
/// (a pool's ceil_mode) ONNX's count: ceildiv instead of floordiv, less one
/// when the last window would start past the input and the low padding. A
/// convolution's or pool's output dim known only at run time, in Kiln's
/// loops and in a library call's output buffer alike.
mlir::Value windowCount(mlir::OpBuilder &b, mlir::Location loc, mlir::Value size, int64_t low,
                        int64_t high, int64_t extent, int64_t stride, bool ceil);

/// Entry `i` of the kiln value `tensor`, a small integer tensor of rank 0
/// or 1 computed from dims and constants (ShapeEntryExpr), as an index
/// computed on the host from the dims themselves; null where it is not.
/// A shape so computed is never read back from device memory (a GPU run
/// that reads nothing back can be captured into a CUDA Graph) and costs no
/// kernel. (HostShapes.cpp)
mlir::Value hostEntry(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor, int64_t i);
/// Entry `i` of a 1-D integer tensor as an index: hostEntry where it can,
/// else read from the tensor.
mlir::Value extractIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor, int64_t i);
/// The dynamic dims of `type`, an op's result whose dims are the entries
/// of `shape` (extractIndex), each checked at run time not negative.
llvm::SmallVector<mlir::Value> runtimeSizes(mlir::OpBuilder &b, mlir::Location loc,
                                            mlir::RankedTensorType type, mlir::Value shape);

/// The type a sum or product of `element`s accumulates in (contractions,
/// reductions): float32 for the 16-bit floats (as numpy's and ONNX
/// Runtime's kernels do: summing in float16 drifts by ulps with the
/// length), else the element type.
mlir::Type accumulatorOf(mlir::OpBuilder &b, mlir::Type element);
/// `wide` rounded elementwise to `type` (same shape), or `wide` itself
/// when it has that element type already.
mlir::Value roundTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value wide,
                    mlir::RankedTensorType type);
/// The smallest value of element type `type`: -inf for floats, the most
/// negative integer otherwise (the identity of max).
double lowestValue(mlir::Type type);

/// A scalar constant of `type` (float or integer) holding `value`.
/// One element of a float8 / float4 type widened to f32 (exact).
mlir::Value lowPrecisionToF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// An f32 element narrowed to the float8 / float4 type `to` with
/// kiln.cast's semantics (nearest even; f8E8M0FNU rounds up; overflow
/// saturates with `saturate`, else becomes infinity or NaN).
mlir::Value f32ToLowPrecision(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                              mlir::Type to, bool saturate);

mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// Replaces a `kiln.kernel reduction` (kiln.outer_dims = k) by an
/// `scf.forall` over the result's first k dims whose body runs the
/// kernel's ops on one row of every input (RowKernels.cpp).
void lowerReductionKernel(KernelOp kernel);

} // namespace lowering
} // namespace kiln

#endif // KILN_COMPILER_LOWERING_KILNTOLINALG_H
