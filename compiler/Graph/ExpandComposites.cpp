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

/// Weights [O, C, K...] with every spatial dim reversed (a slice of step -1).
Value flipSpatially(PatternRewriter &b, Location loc, Value w) {
  int64_t rank = cast<RankedTensorType>(w.getType()).getRank();
  SmallVector<int64_t> starts(rank, 0), ends(rank, kMaxI64), steps(rank, 1);
  for (int64_t d = 2; d < rank; ++d) {
    starts[d] = -1;
    ends[d] = kMinI64;
    steps[d] = -1;
  }
  return slice(b, loc, w, starts, ends, steps);
}

/// A transposed convolution of stride s > 1 (groups 1, dilation 1) as one
/// stride-1 convolution of the input itself, by output phase: output
/// position u = s q + r (before the crop by the pads) takes
/// sum_j x[q - j] w[s j + r], a convolution of x with the sub-kernel
/// w[r], w[s + r], ... (J = ceil(K / s) taps, zeros past K), flipped. The
/// s^d phases' sub-kernels are one weight of s^d O output channels; the
/// result [N, s.., O, Q..] is interleaved to [N, O, Q s, ...] and cropped
/// by the pads. 1 / s^d of the multiplications of the zero-stuffed
/// convolution (ExpandConvTranspose), all of them by the input's entries.
struct ExpandConvTransposeByPhases : OpRewritePattern<ConvTransposeOp> {
  explicit ExpandConvTransposeByPhases(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(ConvTransposeOp op, PatternRewriter &b) const override {
    ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads();
    if (op.getGroups() != 1 || llvm::any_of(op.getDilations(), [](int64_t d) { return d != 1; }) ||
        llvm::all_of(strides, [](int64_t s) { return s == 1; }))
      return failure(); // ExpandConvTranspose
    Location loc = op.getLoc();
    auto xType = cast<RankedTensorType>(op.getInput().getType());
    auto wType = cast<RankedTensorType>(op.getWeight().getType());
    RankedTensorType yType = op.getType();
    int64_t spatial = wType.getRank() - 2, cin = wType.getDimSize(0),
            cout = wType.getDimSize(1), phases = 1;
    ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
    SmallVector<int64_t> taps(spatial), positions(spatial); // J, Q
    for (int64_t i = 0; i < spatial; ++i) {
      taps[i] = llvm::divideCeil(kernel[i], strides[i]);
      positions[i] = llvm::divideCeil(pads[i] + yType.getDimSize(2 + i), strides[i]);
      phases *= strides[i];
    }
    // Weights [C, O, K...] padded to s J, split [C, O, J0, s0, J1, s1, ...],
    // -> [s0, s1, ..., O, C, J...] -> [s^d O, C, J...], flipped.
    SmallVector<int64_t> wPads(2 * (spatial + 2), 0), split = {cin, cout},
        toPhases(spatial), merged = {phases * cout, cin};
    for (int64_t i = 0; i < spatial; ++i) {
      wPads[spatial + 2 + 2 + i] = strides[i] * taps[i] - kernel[i];
      split.append({taps[i], strides[i]});
      toPhases[i] = 3 + 2 * i;
      merged.push_back(taps[i]);
    }
    toPhases.append({1, 0});
    for (int64_t i = 0; i < spatial; ++i)
      toPhases.push_back(2 + 2 * i);
    Value w = zeroPad(b, loc, op.getWeight(), wPads);
    w = reshape(b, loc, w, split);
    w = TransposeOp::create(b, loc, w, b.getDenseI64ArrayAttr(toPhases));
    w = reshape(b, loc, w, merged);
    w = flipSpatially(b, loc, w);
    // The input padded by J - 1 before and to Q positions after (a
    // negative pad crops: entries past Q reach no kept output).
    SmallVector<int64_t> xPads(2 * (spatial + 2), 0);
    for (int64_t i = 0; i < spatial; ++i) {
      xPads[2 + i] = taps[i] - 1;
      xPads[spatial + 2 + 2 + i] = positions[i] - xType.getDimSize(2 + i);
    }
    Value x = zeroPad(b, loc, op.getInput(), xPads);
    Value y = ConvOp::create(b, loc, x, w,
                             b.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1)),
                             b.getDenseI64ArrayAttr(SmallVector<int64_t>(2 * spatial, 0)),
                             b.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1)),
                             b.getI64IntegerAttr(1));
    // [N, s^d O, Q...] -> [N, s0, s1, ..., O, Q0, Q1, ...] -> [N, O, Q0, s0,
    // Q1, s1, ...] -> [N, O, Q0 s0, Q1 s1, ...], cropped by the pads.
    SmallVector<int64_t> byPhase = {0}, interleave = {0, 1 + spatial}, joined = {0, cout};
    byPhase.append(strides.begin(), strides.end());
    byPhase.push_back(cout);
    byPhase.append(positions.begin(), positions.end());
    for (int64_t i = 0; i < spatial; ++i) {
      interleave.append({2 + spatial + i, 1 + i});
      joined.push_back(positions[i] * strides[i]);
    }
    y = reshape(b, loc, y, byPhase);
    y = TransposeOp::create(b, loc, y, b.getDenseI64ArrayAttr(interleave));
    y = reshape(b, loc, y, joined);
    SmallVector<int64_t> from(spatial + 2, 0), to(spatial + 2, kMaxI64), unit(spatial + 2, 1);
    for (int64_t i = 0; i < spatial; ++i) {
      from[2 + i] = pads[i];
      to[2 + i] = pads[i] + yType.getDimSize(2 + i);
    }
    y = slice(b, loc, y, from, to, unit);
    if (y.getType() != op.getType())
      return op.emitOpError("expands by phases to type ")
             << y.getType() << ", not " << op.getType();
    b.replaceOp(op, y);
    return success();
  }
};

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
    Value flipped = flipSpatially(b, loc, w);
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
  patterns.add<ExpandConvTransposeByPhases, ExpandConvTranspose>(patterns.getContext());
}
