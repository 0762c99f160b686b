//===- NNRules.cpp - gradients of contractions, reductions, softmax -------===//
//
// matmul: dA = dC @ B^T, dB = A^T @ dC (batch dims broadcast back by
// summing); reduce_sum / reduce_mean: the gradient spread over the reduced
// dims (divided by their count for the mean); softmax: dx = y (dy -
// sum(dy y)); log_softmax: dx = dy - exp(y) sum(dy), the numerically
// stable forms (no division by y); reduce_max / reduce_min: shared by the
// elements equal to the result; topk: each kept value's gradient back at
// its index.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"

using namespace mlir;

namespace kiln::autodiff {
namespace {

using Grads = llvm::SmallVectorImpl<Value>;

/// `x` with its last two dims swapped.
Value transposeLast(OpBuilder &b, Location loc, Value x) {
  int64_t rank = typeOf(x).getRank();
  llvm::SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return TransposeOp::create(b, loc, x, b.getDenseI64ArrayAttr(perm));
}

LogicalResult MatmulOpRule(MatmulOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value lhs = op.getLhs(), rhs = op.getRhs();
  if (typeOf(lhs).getRank() < 2 || typeOf(rhs).getRank() < 2)
    return op.emitOpError("gradient of a matmul with a rank-1 operand is not supported yet");
  Value dLhs = MatmulOp::create(b, loc, g[0], transposeLast(b, loc, rhs));
  RankedTensorType lt = typeOf(lhs), rt = typeOf(rhs), gt = typeOf(g[0]);
  int64_t rank = lt.getRank();
  Value dRhs;
  if (rt.getRank() == 2 && rank > 2 && lt.hasStaticShape() && gt.hasStaticShape() &&
      lt.getShape().drop_back(2) == gt.getShape().drop_back(2)) {
    // A weight shared by every leading index (a linear layer over a
    // sequence): one [K, rows] x [rows, N] product, not a batch of them
    // summed afterwards (which would hold [batch, K, N]).
    int64_t k = lt.getDimSize(rank - 1), n = gt.getDimSize(rank - 1);
    int64_t rows = lt.getNumElements() / std::max<int64_t>(k, 1);
    auto flat = [&](Value v, int64_t width) {
      auto type = RankedTensorType::get({rows, width}, typeOf(v).getElementType());
      return ReshapeOp::create(b, loc, type, v, b.getDenseI64ArrayAttr({rows, width})).getResult();
    };
    dRhs = MatmulOp::create(b, loc, transposeLast(b, loc, flat(lhs, k)), flat(g[0], n));
  } else {
    dRhs = MatmulOp::create(b, loc, transposeLast(b, loc, lhs), g[0]);
  }
  return pushUnbroadcast(b, loc, {{dLhs, lhs}, {dRhs, rhs}}, out);
}

LogicalResult ReduceSumOpRule(ReduceSumOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  FailureOr<Value> spreadGrad = spread(b, op.getLoc(), g[0], op.getAxes(), op.getKeepdims(),
                                       typeOf(op.getInput()));
  if (failed(spreadGrad))
    return failure();
  out.push_back(*spreadGrad);
  return success();
}

LogicalResult ReduceMeanOpRule(ReduceMeanOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  RankedTensorType type = typeOf(op.getInput());
  FailureOr<Value> spreadGrad =
      spread(b, op.getLoc(), g[0], op.getAxes(), op.getKeepdims(), type);
  if (failed(spreadGrad))
    return failure();
  int64_t count = 1;
  for (int64_t a : op.getAxes())
    count *= type.getDimSize(a < 0 ? a + type.getRank() : a);
  out.push_back(MulOp::create(b, op.getLoc(), *spreadGrad,
                              scalar(b, op.getLoc(), type.getElementType(), 1.0 / count)));
  return success();
}

/// reduce_max / reduce_min: the gradient shared evenly by the elements
/// equal to the result (as PyTorch's amax / amin).
template <typename Op>
LogicalResult extremumRule(Op op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  RankedTensorType type = typeOf(op.getInput());
  FailureOr<Value> y = spread(b, loc, op.getResult(), op.getAxes(), op.getKeepdims(), type);
  FailureOr<Value> dy = spread(b, loc, g[0], op.getAxes(), op.getKeepdims(), type);
  if (failed(y) || failed(dy))
    return failure();
  Value mask = CastOp::create(b, loc, type,
                              CompareOp::create(b, loc, ComparePredicate::eq, op.getInput(), *y));
  Value count = ReduceSumOp::create(b, loc, mask, b.getDenseI64ArrayAttr(op.getAxes()),
                                    b.getBoolAttr(true));
  out.push_back(MulOp::create(b, loc, *dy, DivOp::create(b, loc, mask, count)));
  return success();
}

LogicalResult SoftmaxOpRule(SoftmaxOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value y = op.getResult();
  auto axes = b.getDenseI64ArrayAttr({static_cast<int64_t>(op.getAxis())});
  Value dot = ReduceSumOp::create(b, loc, MulOp::create(b, loc, g[0], y), axes,
                                  b.getBoolAttr(true));
  out.push_back(MulOp::create(b, loc, y, SubOp::create(b, loc, g[0], dot)));
  return success();
}

LogicalResult LogSoftmaxOpRule(LogSoftmaxOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  auto axes = b.getDenseI64ArrayAttr({static_cast<int64_t>(op.getAxis())});
  Value total = ReduceSumOp::create(b, loc, g[0], axes, b.getBoolAttr(true));
  Value softmax = ExpOp::create(b, loc, op.getResult());
  out.push_back(SubOp::create(b, loc, g[0], MulOp::create(b, loc, softmax, total)));
  return success();
}

/// topk: each kept value's gradient goes back to the entry it came from,
/// dx[..., j, ...] = sum over slots r of dv[..., r, ...] where
/// indices[..., r, ...] = j (the indices are distinct along the axis).
/// Slots at the axis, entries j along a new last dim: [..., k, ..., n],
/// summed over the slots, the entries' dim moved back to the axis.
LogicalResult TopKOpRule(TopKOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  RankedTensorType xType = typeOf(op.getInput());
  int64_t rank = xType.getRank(), axis = static_cast<int64_t>(op.getAxis());
  int64_t n = xType.getDimSize(axis);
  if (ShapedType::isDynamic(n))
    return op.emitOpError("gradient of a topk along an axis known only at run time is not "
                          "supported yet");
  llvm::SmallVector<int64_t> withEntries(rank, 0); // every dim copied, then 1
  withEntries.push_back(1);
  auto flat = b.getDenseI64ArrayAttr(withEntries);
  Value slots = ReshapeOp::create(b, loc, op.getIndices(), flat);
  Value dv = ReshapeOp::create(b, loc, g[0], flat);
  llvm::SmallVector<int64_t> entryShape(rank, 1), entries(n);
  entryShape.push_back(n);
  for (int64_t j = 0; j < n; ++j)
    entries[j] = j;
  Value iota = ConstantOp::create(
      b, loc, DenseElementsAttr::get(RankedTensorType::get(entryShape, b.getI64Type()),
                                     llvm::ArrayRef<int64_t>(entries)));
  Value from = CompareOp::create(b, loc, ComparePredicate::eq, slots, iota);
  Value spread = SelectOp::create(b, loc, from, dv,
                                  scalar(b, loc, xType.getElementType(), 0.0));
  Value dx = ReduceSumOp::create(b, loc, spread, b.getDenseI64ArrayAttr({axis}),
                                 b.getBoolAttr(false));
  if (axis != rank - 1) {
    llvm::SmallVector<int64_t> perm; // [..., (no axis), ..., n] -> the input's order
    for (int64_t d = 0; d < rank - 1; ++d) {
      if (d == axis)
        perm.push_back(rank - 1);
      perm.push_back(d);
    }
    dx = TransposeOp::create(b, loc, dx, b.getDenseI64ArrayAttr(perm));
  }
  out.push_back(dx);
  if (op.getCount())
    out.push_back(Value()); // a run-time k
  return success();
}

} // namespace

void registerNNRules(MLIRContext *context) {
  TopKOp::attachInterface<RuleModel<TopKOp, TopKOpRule>>(*context);
  MatmulOp::attachInterface<RuleModel<MatmulOp, MatmulOpRule>>(*context);
  ReduceSumOp::attachInterface<RuleModel<ReduceSumOp, ReduceSumOpRule>>(*context);
  ReduceMeanOp::attachInterface<RuleModel<ReduceMeanOp, ReduceMeanOpRule>>(*context);
  SoftmaxOp::attachInterface<RuleModel<SoftmaxOp, SoftmaxOpRule>>(*context);
  ReduceMaxOp::attachInterface<RuleModel<ReduceMaxOp, extremumRule<ReduceMaxOp>>>(*context);
  ReduceMinOp::attachInterface<RuleModel<ReduceMinOp, extremumRule<ReduceMinOp>>>(*context);
  LogSoftmaxOp::attachInterface<RuleModel<LogSoftmaxOp, LogSoftmaxOpRule>>(*context);
}

} // namespace kiln::autodiff
