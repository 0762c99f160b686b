//===- LibraryCalls.cpp - what the CUDA backend hands to cuBLASLt ---------===//

#include "backends/cuda/LibraryCalls.h"
#include "backends/common/LibraryClaims.h"
#include "compiler/Lowering/KilnToLinalg.h"

#include "dialects/kiln/IR/KilnDialect.h"

using namespace mlir;

namespace kiln::cuda {
using namespace library;

/// cuBLASLt runs f32 matmuls of rank 2 to 4 whose rhs is a matrix (a
/// linear layer's weights: the lhs's leading dims fold into M) or has the
/// lhs's batch dims (strided batches, no broadcast). K and N are static;
/// dynamic dims are the lhs's leading ones the output shares.
static bool runsInCublasLt(MatmulOp matmul) {
  RankedTensorType lhs = matmul.getLhs().getType(), rhs = matmul.getRhs().getType();
  RankedTensorType out = matmul.getType();
  int64_t rank = out.getRank();
  if (!lhs.getElementType().isF32() || !rhs.getElementType().isF32() || rank < 2 || rank > 4 ||
      lhs.getRank() != rank || hasZeroDim({lhs, rhs, out}))
    return false;
  if (rhs.getRank() != 2 && rhs.getRank() != rank)
    return false;
  if (lhs.isDynamicDim(rank - 1) || rhs.isDynamicDim(rhs.getRank() - 1) ||
      rhs.isDynamicDim(rhs.getRank() - 2) || out.isDynamicDim(rank - 1))
    return false;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (out.isDynamicDim(d) != lhs.isDynamicDim(d))
      return false;
  if (rhs.getRank() == rank)
    for (int64_t d = 0; d + 2 < rank; ++d)
      if (rhs.getDimSize(d) != lhs.getDimSize(d)) // the same batch dims, static or not
        return false;
  return true;
}

static LibraryCall describeMatmul(MatmulOp matmul) {
  LibraryCall call;
  call.kind = LibraryKind::Matmul;
  call.input = dimsOf(matmul.getLhs().getType());
  call.weight = dimsOf(matmul.getRhs().getType());
  call.output = dimsOf(matmul.getType());
  return call;
}

bool cudnnRunsWithSymmetricPads(ConvOp conv) {
  RankedTensorType in = conv.getInput().getType(), w = conv.getWeight().getType();
  RankedTensorType out = conv.getType();
  if (!in.getElementType().isF32() || in.getRank() != 4 || !w.hasStaticShape() ||
      hasZeroDim({in, w, out}) || conv.getPads().size() != 4)
    return false;
  for (int64_t d = 1; d < 4; ++d)
    if (in.isDynamicDim(d) || out.isDynamicDim(d))
      return false;
  return true;
}

/// cuDNN runs f32 2-D convolutions with symmetric pads whose only dynamic
/// dim is the batch (asymmetric ones were split first:
/// splitAsymmetricConvPads).
static bool runsInCudnn(ConvOp conv) {
  ArrayRef<int64_t> pads = conv.getPads();
  return cudnnRunsWithSymmetricPads(conv) && pads[0] == pads[2] && pads[1] == pads[3];
}

static LibraryCall describeConv(ConvOp conv) {
  LibraryCall call;
  call.kind = LibraryKind::Convolution;
  call.input = dimsOf(conv.getInput().getType());
  call.weight = dimsOf(conv.getWeight().getType());
  call.output = dimsOf(conv.getType());
  call.params = {{"strides", {conv.getStrides().begin(), conv.getStrides().end()}},
                 {"dilations", {conv.getDilations().begin(), conv.getDilations().end()}},
                 {"pads", {conv.getPads().begin(), conv.getPads().end()}},
                 {"groups", {static_cast<int64_t>(conv.getGroups())}}};
  return call;
}

/// The epilogues the runtime hands cuDNN: a bias over the channels, a
/// residual, then ReLU, a clip to [0, b] (ReLU6), sigmoid, tanh or
/// nothing. Each is one fused graph of cuDNN's graph API where an engine
/// runs it, else the convolution API's calls with an activation pass in
/// place (runtime/src/devices/cudnn.h): only activations both paths have.
static bool cudnnTakes(const LibraryCall &call) {
  switch (call.epilogue.activation) {
  case LibraryActivation::None:
  case LibraryActivation::Relu:
  case LibraryActivation::Sigmoid:
  case LibraryActivation::Tanh:
    return true;
  case LibraryActivation::Clip:
    return call.epilogue.alpha == 0.0f && call.epilogue.beta > 0.0f;
  default:
    return false;
  }
}

/// The epilogues cuBLASLt fuses: a bias over N, a residual (beta = 1),
/// then no activation, ReLU or GELU (tanh form).
static bool cublasLtTakes(const LibraryCall &call) {
  if (call.epilogue.bias && call.epilogue.biasRank != 1)
    return false;
  switch (call.epilogue.activation) {
  case LibraryActivation::None:
  case LibraryActivation::Relu:
  case LibraryActivation::GeluTanh:
    return true;
  default:
    return false;
  }
}

/// The call of a matmul cuBLASLt runs or a convolution cuDNN runs,
/// without epilogue; nothing for other ops.
static std::optional<LibraryCall> describeRoot(Operation *op) {
  if (auto matmul = dyn_cast<MatmulOp>(op); matmul && runsInCublasLt(matmul))
    return describeMatmul(matmul);
  if (auto conv = dyn_cast<ConvOp>(op); conv && runsInCudnn(conv))
    return describeConv(conv);
  return std::nullopt;
}

static bool libraryTakes(const LibraryCall &call) {
  return call.kind == LibraryKind::Matmul ? cublasLtTakes(call) : cudnnTakes(call);
}

/// Marks each convolution call whose only use is a channel concatenation
/// (rank 4, static but for the batch, f32, lowered as a chain of
/// insertions) to write its output into its channels of the
/// concatenation's buffer (`kiln.output_into`): cuDNN writes the output
/// with the concatenation's batch stride (`output_batch_stride`), and the
/// copy of that input goes. Only where the output's start and batch
/// stride keep the 16-byte alignment cuDNN's graph tensors declare; not
/// with a residual (its buffer is the output).
static void writeIntoConcats(ModuleOp module, std::vector<LibraryCall> &calls) {
  module.walk([&](ConcatOp concat) {
    RankedTensorType type = concat.getType();
    if (concat.getAxis() != 1 || type.getRank() != 4 || !type.getElementType().isF32() ||
        concat.getInputs().size() > lowering::kMaxInsertSliceChain)
      return;
    for (int64_t d = 1; d < 4; ++d)
      if (type.isDynamicDim(d))
        return;
    int64_t plane = type.getDimSize(2) * type.getDimSize(3);
    int64_t batchStride = type.getDimSize(1) * plane;
    int64_t channel = 0;
    for (Value input : concat.getInputs()) {
      int64_t start = channel;
      channel += cast<RankedTensorType>(input.getType()).getDimSize(1);
      Operation *producer = input.getDefiningOp();
      std::optional<unsigned> id = callIndex(producer);
      if (!id || calls[*id].kind != LibraryKind::Convolution || calls[*id].epilogue.residual ||
          !input.hasOneUse() || producer->getNumResults() != 1 || batchStride % 4 != 0 ||
          (start * plane) % 4 != 0)
        continue;
      calls[*id].params.push_back({"output_batch_stride", {batchStride}});
      producer->setAttr(KilnDialect::OutputIntoAttrHelper::getNameStr(),
                        IntegerAttr::get(IntegerType::get(module.getContext(), 64), start));
    }
  });
}

std::vector<LibraryCall> claimLibraryCalls(ModuleOp module) {
  std::vector<LibraryCall> calls;
  splitAsymmetricConvPads(module);
  chainConcats(module);
  // Neither cuDNN nor cuBLASLt has SiLU, hard sigmoid or HardSwish: the
  // call keeps the rest of its epilogue, and the activation is generated
  // after it.
  module.walk([&](KernelOp kernel) {
    if (kernel.getKind() == KernelKind::epilogue && !kernel.getBody().front().empty() &&
        describeRoot(&*kernel.bodyOps().begin()))
      peelActivation(kernel);
  });
  // Kernels whose epilogue cuBLASLt does not fuse: the matmul alone is the
  // call, the rest is generated.
  SmallVector<KernelOp> dissolve;
  module.walk([&](KernelOp kernel) {
    if (kernel.getKind() != KernelKind::epilogue || kernel.getBody().front().empty())
      return;
    std::optional<LibraryCall> root = describeRoot(&*kernel.bodyOps().begin());
    if (!root)
      return;
    LibraryCall call = *root;
    bool fused = succeeded(describeEpilogue(kernel, call)) && libraryTakes(call);
    kernel->removeAttr(kResidualAttr);
    if (!fused)
      dissolve.push_back(kernel);
  });
  for (KernelOp kernel : dissolve)
    kernel.inlineBody();
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      if (kernel.getKind() != KernelKind::epilogue || kernel.getBody().front().empty())
        return WalkResult::skip();
      std::optional<LibraryCall> root = describeRoot(&*kernel.bodyOps().begin());
      if (!root)
        return WalkResult::skip();
      LibraryCall call = *root;
      if (succeeded(describeEpilogue(kernel, call)) && libraryTakes(call))
        markLibraryCall(kernel, std::move(call), calls);
      else
        kernel->removeAttr(kResidualAttr);
      return WalkResult::skip();
    }
    if (std::optional<LibraryCall> root = describeRoot(op))
      markLibraryCall(op, std::move(*root), calls);
    return WalkResult::advance();
  });
  // A transposed operand as cuBLASLt's transpose flag (attention's K^T, a
  // training step's W^T): the rhs always; the lhs when its leading dims
  // need not fold into M (a matrix, or a batched rhs).
  absorbMatmulTransposes(module, calls, [](const LibraryCall &call, int operand) {
    return operand == 1 || call.input.size() == 2 || call.weight.size() > 2;
  });
  writeIntoConcats(module, calls);
  return calls;
}

} // namespace kiln::cuda
