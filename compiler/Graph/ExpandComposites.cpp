//===- ExpandComposites.cpp - kiln.conv_transpose -> primitives ----------===//
//
// Implements kiln-expand-composites, the graph phase's first pass. The ops
// it expands are those both frontends (ONNX, PyTorch) need and no backend
// takes whole; expanding them here, before shape inference and folding,
// lets constant weights fold and pads merge into the convolution as they
// would from the frontends, and keeps one composition in one place.
//
//===----------------------------------------------------------------------===//

#include "compiler/Graph/Decompose.h"
#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/Builders.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_EXPANDCOMPOSITES
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinI64 = std::numeric_limits<int64_t>::min();

Value slice(PatternRewriter &b, Location loc, Value v, ArrayRef<int64_t> starts,
            ArrayRef<int64_t> ends, ArrayRef<int64_t> steps) {
  return SliceOp::create(b, loc, v, b.getDenseI64ArrayAttr(starts),
                         b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps));
}

Value reshape(PatternRewriter &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  return ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr(shape));
}

/// A transposed convolution as a stride-1 convolution of the zero-stuffed,
/// padded input with the weights regrouped and flipped.
struct ExpandConvTranspose : OpRewritePattern<ConvTransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvTransposeOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto wType = cast<RankedTensorType>(op.getWeight().getType());
    size_t spatial = wType.getRank() - 2;
    ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
    ArrayRef<int64_t> pads = op.getPads(), dilations = op.getDilations(),
                      outputPadding = op.getOutputPadding();
    Value stuffed = zeroStuff(b, loc, op.getInput(), op.getStrides());
    // Padded by span - pad (the span is dilation * (K - 1)), plus the
    // output padding at the end; a negative pad crops.
    SmallVector<int64_t> convPads(2 * (spatial + 2), 0);
    for (size_t i = 0; i < spatial; ++i) {
      int64_t span = (kernel[i] - 1) * dilations[i];
      convPads[2 + i] = span - pads[i];
      convPads[2 + i + spatial + 2] = span - pads[i + spatial] + outputPadding[i];
    }
    Value padded = zeroPad(b, loc, stuffed, convPads);
    // Weights [C, O/g, K...] -> [g, C/g, O/g, K...] -> [g, O/g, C/g, K...]
    // -> [O, C/g, K...], flipped spatially.
    int64_t groups = static_cast<int64_t>(op.getGroups());
    int64_t cin = wType.getDimSize(0), coutPerGroup = wType.getDimSize(1);
    SmallVector<int64_t> grouped = {groups, cin / groups, coutPerGroup};
    grouped.append(kernel.begin(), kernel.end());
    SmallVector<int64_t> perm = {0, 2, 1};
    for (size_t i = 0; i < spatial; ++i)
      perm.push_back(3 + i);
    SmallVector<int64_t> regrouped = {groups * coutPerGroup, cin / groups};
    regrouped.append(kernel.begin(), kernel.end());
    Value w = reshape(b, loc,
                      TransposeOp::create(b, loc, reshape(b, loc, op.getWeight(), grouped),
                                          b.getDenseI64ArrayAttr(perm)),
                      regrouped);
    SmallVector<int64_t> starts(spatial + 2, 0), ends(spatial + 2, kMaxI64),
        steps(spatial + 2, 1);
    for (size_t i = 0; i < spatial; ++i) {
      starts[i + 2] = -1;
      ends[i + 2] = kMinI64;
      steps[i + 2] = -1;
    }
    Value flipped = slice(b, loc, w, starts, ends, steps);
    Value y = ConvOp::create(b, loc, padded, flipped,
                             b.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1)),
                             b.getDenseI64ArrayAttr(SmallVector<int64_t>(2 * spatial, 0)),
                             b.getDenseI64ArrayAttr(dilations), op.getGroupsAttr());
    if (y.getType() != op.getType())
      return op.emitOpError("expands to a convolution of type ")
             << y.getType() << ", not " << op.getType();
    b.replaceOp(op, y);
    return success();
  }
};

struct ExpandCompositesPass : kiln::impl::ExpandCompositesBase<ExpandCompositesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateCompositeExpansions(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    SmallVector<Operation *> composites;
    getOperation()->walk([&](Operation *op) {
      if (isa<ConvTransposeOp>(op))
        composites.push_back(op);
    });
    if (composites.empty())
      return;
    if (failed(applyOpPatternsGreedily(composites, std::move(patterns), config)))
      return signalPassFailure();
    // A pattern that failed has said why on the op.
    WalkResult left = getOperation()->walk([](Operation *op) {
      return isa<ConvTransposeOp>(op) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void kiln::populateCompositeExpansions(RewritePatternSet &patterns) {
  patterns.add<ExpandConvTranspose>(patterns.getContext());
}
