//===- FoldPads.cpp - zero padding taken into convolutions and pools ------===//
//
// Implements kiln-fold-pads (see compiler/Passes.td). A `kiln.pad` of
// zeros over the spatial dims only, read by a convolution or an average
// pool, becomes that op's own padding: the op reads the unpadded input.
// The pad is a generated loop nest between two library calls otherwise,
// and it makes the value before it channels-first (torch exports
// `F.avg_pool2d(x, 3, 1, 1)`, count_include_pad, as Pad then
// AveragePool: inception_v3 has nine).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FOLDPADS
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The spatial pads of `value`'s zero `kiln.pad` ([low..., high...] over
/// dims 2 and up, the layout of a convolution's or pool's `pads`) and the
/// unpadded input; nullopt when `value` is not such a pad (another mode
/// or value, a pad of the batch or the channels, a crop).
std::optional<std::pair<Value, SmallVector<int64_t>>> zeroSpatialPad(Value value) {
  auto pad = value.getDefiningOp<PadOp>();
  if (!pad || pad.getMode() != PadMode::constant || pad.getValue().convertToDouble() != 0.0)
    return std::nullopt;
  ArrayRef<int64_t> pads = pad.getPads();
  int64_t rank = static_cast<int64_t>(pads.size()) / 2;
  if (rank < 3 || llvm::any_of(pads, [](int64_t p) { return p < 0; }) || pads[0] != 0 ||
      pads[1] != 0 || pads[rank] != 0 || pads[rank + 1] != 0)
    return std::nullopt;
  SmallVector<int64_t> spatial(pads.begin() + 2, pads.begin() + rank);
  spatial.append(pads.begin() + rank + 2, pads.end());
  return std::make_pair(pad.getInput(), spatial);
}

/// `own` + `extra`, or nullopt when a side's padding would reach the
/// window's extent (`kernel` dims, dilated): a library keeps windows that
/// overlap the input.
std::optional<SmallVector<int64_t>> combined(ArrayRef<int64_t> own, ArrayRef<int64_t> extra,
                                             ArrayRef<int64_t> kernel,
                                             ArrayRef<int64_t> dilations) {
  if (own.size() != extra.size() || own.size() != 2 * kernel.size())
    return std::nullopt;
  SmallVector<int64_t> out;
  for (auto [i, p] : llvm::enumerate(own)) {
    size_t d = i % kernel.size();
    int64_t extent = (kernel[d] - 1) * (dilations.empty() ? 1 : dilations[d]) + 1;
    out.push_back(p + extra[i]);
    if (out.back() >= extent)
      return std::nullopt;
  }
  return out;
}

struct PadIntoConvolution : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp conv, PatternRewriter &b) const override {
    auto pad = zeroSpatialPad(conv.getInput());
    auto weight = cast<RankedTensorType>(conv.getWeight().getType());
    if (!pad || weight.getRank() < 3 ||
        llvm::any_of(weight.getShape().drop_front(2), ShapedType::isDynamic))
      return b.notifyMatchFailure(conv, "not a convolution of zero-padded input");
    std::optional<SmallVector<int64_t>> pads =
        combined(conv.getPads(), pad->second, weight.getShape().drop_front(2),
                 conv.getDilations());
    if (!pads)
      return b.notifyMatchFailure(conv, "padding would reach the window's extent");
    b.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(pad->first);
      conv.setPads(*pads);
    });
    return success();
  }
};

/// An average pool counts the explicit zeros in each divisor; so does one
/// that counts its own padding, or has none: the pool with both paddings
/// and count_include_pad. (ceil_mode's last windows may leave the padded
/// input, where the counts differ: left alone.)
struct PadIntoAveragePool : OpRewritePattern<AvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolOp pool, PatternRewriter &b) const override {
    auto pad = zeroSpatialPad(pool.getInput());
    bool ownCounted = pool.getCountIncludePad() ||
                      llvm::all_of(pool.getPads(), [](int64_t p) { return p == 0; });
    if (!pad || pool.getCeilMode() || !ownCounted)
      return b.notifyMatchFailure(pool, "not an average pool of zero-padded input");
    std::optional<SmallVector<int64_t>> pads =
        combined(pool.getPads(), pad->second, pool.getKernelShape(), pool.getDilations());
    if (!pads)
      return b.notifyMatchFailure(pool, "padding would reach the window's extent");
    b.modifyOpInPlace(pool, [&] {
      pool.getInputMutable().assign(pad->first);
      pool.setPads(*pads);
      pool.setCountIncludePad(true);
    });
    return success();
  }
};

struct FoldPads : kiln::impl::FoldPadsBase<FoldPads> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PadIntoConvolution, PadIntoAveragePool>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
