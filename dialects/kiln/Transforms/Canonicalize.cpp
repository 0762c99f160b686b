//===- Canonicalize.cpp - canonicalisation patterns of kiln ops ----------===//
//
// Rewrites that need more than a folder: chains of data-movement ops
// collapse into one. Each rewrite is a function returning FailureOr so it
// can be reused outside the greedy driver; the patterns are thin wrappers.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

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

struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    return composeReshapes(op, rewriter);
  }
};

} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<ComposeTransposes>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ComposeReshapes>(context);
}
