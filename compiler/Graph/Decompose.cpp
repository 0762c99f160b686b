//===- Decompose.cpp - composite kiln ops -> primitive kiln ops -----------===//
//
// Implements kiln-decompose. Each rewrite builds the primitive ops with
// inferred result types, so shapes stay exact.
//
//===----------------------------------------------------------------------===//

#include "compiler/Graph/Decompose.h"
#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_DECOMPOSE
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

Value scalarLike(PatternRewriter &b, Location loc, Value like, double value) {
  auto element = cast<RankedTensorType>(like.getType()).getElementType();
  auto type = RankedTensorType::get({}, element);
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, FloatAttr::get(element, value)));
}

/// exp(x - max) and its sum along `axis` (both keep the axis).
std::pair<Value, Value> shiftedExp(PatternRewriter &b, Location loc, Value x,
                                   int64_t axis, Value &shifted) {
  auto axes = b.getDenseI64ArrayAttr({axis});
  Value max = ReduceMaxOp::create(b, loc, x, axes, b.getBoolAttr(true));
  shifted = SubOp::create(b, loc, x, max);
  Value e = ExpOp::create(b, loc, shifted);
  Value sum = ReduceSumOp::create(b, loc, e, axes, b.getBoolAttr(true));
  return {e, sum};
}

struct DecomposeSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op, PatternRewriter &b) const override {
    Value shifted;
    auto [e, sum] = shiftedExp(b, op.getLoc(), op.getInput(),
                               static_cast<int64_t>(op.getAxis()), shifted);
    b.replaceOpWithNewOp<DivOp>(op, op.getType(), e, sum);
    return success();
  }
};

struct DecomposeLogSoftmax : OpRewritePattern<LogSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogSoftmaxOp op, PatternRewriter &b) const override {
    Value shifted;
    auto [e, sum] = shiftedExp(b, op.getLoc(), op.getInput(),
                               static_cast<int64_t>(op.getAxis()), shifted);
    Value logSum = LogOp::create(b, op.getLoc(), sum);
    b.replaceOpWithNewOp<SubOp>(op, op.getType(), shifted, logSum);
    return success();
  }
};

struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    SmallVector<int64_t> axes;
    for (int64_t d = op.getAxis(); d < op.getInput().getType().getRank(); ++d)
      axes.push_back(d);
    auto axesAttr = b.getDenseI64ArrayAttr(axes);
    Value mean = ReduceMeanOp::create(b, loc, x, axesAttr, b.getBoolAttr(true));
    Value centered = SubOp::create(b, loc, x, mean);
    Value variance = ReduceMeanOp::create(b, loc, MulOp::create(b, loc, centered, centered),
                                          axesAttr, b.getBoolAttr(true));
    double epsilon = op.getEpsilon().convertToDouble();
    Value inv = RsqrtOp::create(b, loc, AddOp::create(b, loc, variance,
                                                      scalarLike(b, loc, x, epsilon)));
    Value normalized = MulOp::create(b, loc, centered, inv);
    Value scaled = MulOp::create(b, loc, normalized, op.getScale());
    b.replaceOpWithNewOp<AddOp>(op, op.getType(), scaled, op.getBias());
    return success();
  }
};

struct DecomposeBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    int64_t rank = op.getInput().getType().getRank();
    // [C] -> [C, 1, ...] so the vectors broadcast along dim 1.
    SmallVector<int64_t> shape = {-1};
    shape.append(rank - 2, 1);
    auto channel = [&](Value v) {
      return ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr(shape)).getResult();
    };
    double epsilon = op.getEpsilon().convertToDouble();
    Value x = op.getInput();
    Value inv = RsqrtOp::create(b, loc, AddOp::create(b, loc, op.getVariance(),
                                                      scalarLike(b, loc, x, epsilon)));
    Value scale = channel(MulOp::create(b, loc, op.getScale(), inv));
    Value centered = SubOp::create(b, loc, x, channel(op.getMean()));
    Value scaled = MulOp::create(b, loc, centered, scale);
    b.replaceOpWithNewOp<AddOp>(op, op.getType(), scaled, channel(op.getBias()));
    return success();
  }
};

/// stop_gradient has done its work once gradients are built (or was never
/// needed): the value is its operand.
struct RemoveStopGradient : OpRewritePattern<StopGradientOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StopGradientOp op, PatternRewriter &b) const override {
    b.replaceOp(op, op.getInput());
    return success();
  }
};

} // namespace

void kiln::populateNormalizationDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeLayerNorm, DecomposeBatchNorm>(patterns.getContext());
}

namespace {

struct DecomposePass : kiln::impl::DecomposeBase<DecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeSoftmax, DecomposeLogSoftmax, DecomposeLayerNorm,
                 DecomposeBatchNorm, RemoveStopGradient>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
