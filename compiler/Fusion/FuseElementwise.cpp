//===- FuseElementwise.cpp - elementwise fusion that keeps locations ------===//
//
// Implements kiln-fuse-elementwise: upstream linalg elementwise fusion
// whose control function also merges the producer's location into the
// consumer's, so fused loop nests name all their model nodes; a transpose
// keeping the last dim joins the elementwise loop nest that reads it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The most ops one fused loop body holds.
constexpr size_t kMaxFusedOps = 128;

/// The size of a dim of a collapse_shape as the product of its source dims,
/// so that the collapse's only user is the op that reads it (a transpose's
/// result sized from its input would keep a reshape of a strided slice from
/// folding into the transpose by expansion, and the slice would be copied).
struct DimOfCollapse : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp op, PatternRewriter &rewriter) const override {
    auto collapse = op.getSource().getDefiningOp<tensor::CollapseShapeOp>();
    std::optional<int64_t> dim = op.getConstantIndex();
    if (!collapse || !dim || *dim < 0 || *dim >= collapse.getResultType().getRank())
      return failure();
    Location loc = op.getLoc();
    Value size = arith::ConstantIndexOp::create(rewriter, loc, 1);
    // Kept: a loop over an element of the returned vector would outlive it.
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    for (int64_t d : groups[*dim])
      size = arith::MulIOp::create(rewriter, loc, size,
                                   tensor::DimOp::create(rewriter, loc, collapse.getSrc(), d));
    rewriter.replaceOp(op, size);
    return success();
  }
};

/// A transpose that keeps the last dim (it moves whole rows: an attention's
/// Q, [S, B, H, D] -> [B, H, S, D]) read only by an elementwise loop nest
/// (Q's scale) becomes a generic, which the elementwise fusion then takes
/// into that loop nest: one pass over the data instead of two. A transpose
/// that moves the last dim stays one (its lowering reads rows, not
/// scattered elements).
struct GeneralizeRowTransposeIntoElementwise : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm = op.getPermutation();
    if (!op.hasPureTensorSemantics() || perm.empty() ||
        perm.back() != static_cast<int64_t>(perm.size()) - 1 || !op->hasOneUse())
      return failure();
    OpOperand &use = *op->getUses().begin();
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!consumer || !consumer.isDpsInput(&use) ||
        consumer.getNumParallelLoops() != consumer.getNumLoops())
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

struct FuseElementwise : kiln::impl::FuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // As upstream: fuse a producer into its only user; unlike upstream,
    // only when the user reads each element once (its indexing map for the
    // operand is a permutation of all its loops). A matmul reading a scaled
    // or transposed operand, or a broadcast of a computed vector, would
    // compute each element again for every loop the map leaves out.
    //
    // A fused body stays at most kMaxFusedOps ops: every fusion clones both
    // bodies and merges their locations, so an unbounded chain of N ops
    // costs N^2 (a 20,000-op Add/Relu chain took 148 s); bounded, a chain
    // is fused in groups and the cost is linear.
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      Operation *consumer = fused->getOwner();
      auto bodySize = [](Operation *op) -> size_t {
        if (auto generic = dyn_cast<linalg::GenericOp>(op))
          return generic.getBody()->getOperations().size();
        return 1;
      };
      if (bodySize(producer) + bodySize(consumer) > kMaxFusedOps)
        return false;
      // Folding a reshape by expansion expands the other operands with its
      // groups; a group of several dynamic dims is beyond what the memref
      // lowering handles (it needs their product's strides).
      auto manyDynamic = [](ArrayRef<ReassociationIndices> groups, ShapedType expanded) {
        return llvm::any_of(groups, [&](const ReassociationIndices &group) {
          return llvm::count_if(group, [&](int64_t d) { return expanded.isDynamicDim(d); }) > 1;
        });
      };
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(producer))
        if (manyDynamic(collapse.getReassociationIndices(), collapse.getSrcType()))
          return false;
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(consumer))
        if (manyDynamic(expand.getReassociationIndices(), expand.getResultType()))
          return false;
      auto linalgConsumer = dyn_cast<linalg::LinalgOp>(consumer);
      if (linalgConsumer && !linalgConsumer.getMatchingIndexingMap(fused).isPermutation())
        return false;
      consumer->setLoc(FusedLoc::get(consumer->getContext(),
                                     {producer->getLoc(), consumer->getLoc()}));
      return true;
    };
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    patterns.add<DimOfCollapse, GeneralizeRowTransposeIntoElementwise>(context);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
