//===- Canonicalize.cpp - canonicalisation patterns of kiln ops ----------===//
//
// Rewrites that need more than a folder: chains of data-movement ops
// collapse into one; a transposed matmul whose operand is transposed
// becomes a matmul with one transpose fewer. Each rewrite is a function returning FailureOr so it
// can be reused outside the greedy driver; the patterns are thin wrappers.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/ShapeMath.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln;

namespace {

/// transpose(transpose(x, p), q) -> transpose(x, p o q).
FailureOr<TransposeOp> composeTransposes(TransposeOp outer,
                                         PatternRewriter &rewriter) {
  auto inner = outer.getInput().getDefiningOp<TransposeOp>();
  if (!inner)
    return failure();
  ArrayRef<int64_t> innerPerm = inner.getPermutation();
  SmallVector<int64_t> composed;
  for (int64_t p : outer.getPermutation())
    composed.push_back(innerPerm[p]);
  return rewriter.replaceOpWithNewOp<TransposeOp>(
      outer, outer.getType(), inner.getInput(),
      rewriter.getDenseI64ArrayAttr(composed));
}

/// transpose(matmul(a, b)) -> matmul(transpose(b), transpose(a)) (the last
/// two dims swapped, operands and result of one rank, the matmul used only
/// here) when an operand is itself such a transpose: the two transposes
/// cancel, so the rewrite leaves one transpose fewer (a backward pass's
/// weight gradient, transpose(matmul(transpose(x), dy)), becomes
/// matmul(transpose(dy), x)).
FailureOr<MatmulOp> transposeMatmul(TransposeOp outer, PatternRewriter &rewriter) {
  auto matmul = outer.getInput().getDefiningOp<MatmulOp>();
  if (!matmul || !matmul->hasOneUse() || !shape::swapsLastTwo(outer.getPermutation()))
    return failure();
  Value a = matmul.getLhs(), b = matmul.getRhs();
  int64_t rank = outer.getType().getRank();
  if (cast<RankedTensorType>(a.getType()).getRank() != rank ||
      cast<RankedTensorType>(b.getType()).getRank() != rank)
    return failure();
  auto isSwap = [](Value v) {
    auto t = v.getDefiningOp<TransposeOp>();
    return t && shape::swapsLastTwo(t.getPermutation());
  };
  if (!isSwap(a) && !isSwap(b))
    return failure();
  auto swapped = [&](Value v) -> Value {
    if (auto t = v.getDefiningOp<TransposeOp>(); t && shape::swapsLastTwo(t.getPermutation()))
      return t.getInput();
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape()), perm;
    std::swap(shape[rank - 1], shape[rank - 2]);
    for (int64_t d = 0; d < rank; ++d)
      perm.push_back(d);
    std::swap(perm[rank - 1], perm[rank - 2]);
    return TransposeOp::create(rewriter, outer.getLoc(),
                               RankedTensorType::get(shape, type.getElementType()), v,
                               rewriter.getDenseI64ArrayAttr(perm));
  };
  Value lhs = swapped(b), rhs = swapped(a);
  return rewriter.replaceOpWithNewOp<MatmulOp>(outer, outer.getType(), lhs, rhs);
}

/// reshape(reshape(x)) -> reshape(x) when the outer shape does not refer to
/// the intermediate's dims (no 0 entries) or the inner is rank-preserving
/// on the copied dims.
FailureOr<ReshapeOp> composeReshapes(ReshapeOp outer,
                                     PatternRewriter &rewriter) {
  auto inner = outer.getInput().getDefiningOp<ReshapeOp>();
  if (!inner)
    return failure();
  ArrayRef<int64_t> spec = outer.getShape();
  RankedTensorType source = inner.getInput().getType();
  RankedTensorType middle = inner.getType();
  SmallVector<int64_t> newSpec(spec);
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] != 0)
      continue;
    // A copied dim is kept only when the intermediate copied it from the
    // same index of the source too, or its size is static.
    ArrayRef<int64_t> innerSpec = inner.getShape();
    bool sameSource = i < innerSpec.size() && innerSpec[i] == 0 &&
                      i < static_cast<size_t>(source.getRank());
    if (sameSource)
      continue;
    if (ShapedType::isDynamic(middle.getDimSize(i)))
      return failure();
    newSpec[i] = middle.getDimSize(i);
  }
  return rewriter.replaceOpWithNewOp<ReshapeOp>(
      outer, outer.getType(), inner.getInput(),
      rewriter.getDenseI64ArrayAttr(newSpec));
}

struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    return composeTransposes(op, rewriter);
  }
};

struct TransposeMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    return transposeMatmul(op, rewriter);
  }
};

struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    return composeReshapes(op, rewriter);
  }
};

/// Outside a training step (which replaces it first) dropout is the
/// identity.
struct RemoveDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

} // namespace

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<RemoveDropout>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<ComposeTransposes, TransposeMatmul>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ComposeReshapes>(context);
}
