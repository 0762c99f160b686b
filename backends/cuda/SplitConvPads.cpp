//===- SplitConvPads.cpp - asymmetric convolution pads as an explicit pad -===//
//
// cuDNN's convolution API pads each spatial dim by the same amount on both
// sides, and it is the fallback of every convolution the runtime hands
// cuDNN's graph API. A convolution with asymmetric pads (ONNX's SAME_UPPER
// with a stride of 2, a 2 x 2 kernel with SAME) would otherwise be a
// generated loop nest: here its input is padded by the difference first
// (a `kiln.pad`, a copy the generated code does) and the convolution keeps
// the smaller pad of each dim on both sides, which cuDNN runs.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/LibraryCalls.h"
#include "backends/cuda/Passes.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_CUDASPLITCONVPADS
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {

/// `pads` ([top, left, bottom, right]) split into the explicit pad's
/// [low..., high...] over the input's 4 dims and the convolution's
/// symmetric pads, or nothing if they are symmetric or negative.
static std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
splitPads(ArrayRef<int64_t> pads) {
  if (pads.size() != 4 || llvm::any_of(pads, [](int64_t p) { return p < 0; }) ||
      (pads[0] == pads[2] && pads[1] == pads[3]))
    return std::nullopt;
  int64_t h = std::min(pads[0], pads[2]), w = std::min(pads[1], pads[3]);
  SmallVector<int64_t> explicitPads = {0, 0, pads[0] - h, pads[1] - w,
                                       0, 0, pads[2] - h, pads[3] - w};
  SmallVector<int64_t> symmetric = {h, w, h, w};
  return std::make_pair(explicitPads, symmetric);
}

static Value padInput(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> pads) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d))
      shape[d] += pads[d] + pads[type.getRank() + d];
  return PadOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), x,
                       b.getDenseI64ArrayAttr(pads),
                       PadModeAttr::get(b.getContext(), PadMode::constant),
                       b.getF64FloatAttr(0.0));
}

int splitAsymmetricConvPads(ModuleOp module) {
  SmallVector<ConvOp> convs;
  module.walk([&](ConvOp conv) {
    if (splitPads(conv.getPads()) && cudnnRunsWithSymmetricPads(conv))
      convs.push_back(conv);
  });
  for (ConvOp conv : convs) {
    auto [explicitPads, symmetric] = *splitPads(conv.getPads());
    Value input = conv.getInput();
    auto kernel = dyn_cast<KernelOp>(conv->getParentOp());
    auto arg = dyn_cast<BlockArgument>(input);
    if (kernel && arg && arg.getOwner() == &kernel.getBody().front()) {
      // The kernel's operand padded before it, in the operand's place (a
      // library call takes the kernel's operands in order: the
      // convolution's input first); the unpadded one stays after it if
      // the body uses it otherwise (a residual).
      OpBuilder b(kernel);
      unsigned index = arg.getArgNumber();
      Value padded = padInput(b, conv.getLoc(), kernel.getInputs()[index], explicitPads);
      Block &body = kernel.getBody().front();
      BlockArgument inner;
      if (arg.hasOneUse()) {
        kernel.getInputsMutable()[index].assign(padded);
        arg.setType(padded.getType());
        inner = arg;
      } else {
        SmallVector<Value> inputs(kernel.getInputs());
        inputs.insert(inputs.begin() + index, padded);
        kernel.getInputsMutable().assign(inputs);
        inner = body.insertArgument(index, padded.getType(), conv.getLoc());
      }
      conv.getInputMutable().assign(inner);
    } else {
      OpBuilder b(conv);
      conv.getInputMutable().assign(padInput(b, conv.getLoc(), input, explicitPads));
    }
    conv.setPads(symmetric);
  }
  return static_cast<int>(convs.size());
}

namespace {
struct CudaSplitConvPadsPass : impl::CudaSplitConvPadsBase<CudaSplitConvPadsPass> {
  void runOnOperation() override { splitAsymmetricConvPads(getOperation()); }
};
} // namespace

} // namespace kiln::cuda
