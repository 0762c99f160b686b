//===- LibraryCalls.cpp - conv / matmul handed to the runtime -------------===//

#include "backends/cpu/LibraryCalls.h"
#include "backends/common/LibraryClaims.h"
#include "compiler/Fusion/Fusion.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/Matchers.h"
#include "dialects/kiln/Utils/ShapeMath.h"
#include "kiln/kiln_model_abi.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln::cpu {
using namespace library;



/// oneDNN runs f32 2-D convolutions with static channels and weights;
/// the batch and the spatial dims may be known only at run time (the
/// device makes a primitive for each input shape it meets). Over such a
/// spatial dim the padding is below the window's extent, so that an empty
/// input gives an empty output (oneDNN takes no empty input).
static bool runsInOneDnn(ConvOp conv) {
  RankedTensorType in = conv.getInput().getType(), w = conv.getWeight().getType();
  RankedTensorType out = conv.getType();
  if (!in.getElementType().isF32() || in.getRank() != 4 || !w.hasStaticShape() ||
      hasZeroDim({in, w, out}) || in.isDynamicDim(1) || out.isDynamicDim(1))
    return false;
  ArrayRef<int64_t> pads = conv.getPads(), dilations = conv.getDilations();
  for (int64_t i = 0; i < 2; ++i) {
    int64_t extent = (w.getDimSize(2 + i) - 1) * dilations[i] + 1;
    if (pads[i] < 0 || pads[2 + i] < 0 ||
        ((in.isDynamicDim(2 + i) || out.isDynamicDim(2 + i)) && pads[i] + pads[2 + i] >= extent))
      return false;
  }
  return true;
}

/// oneDNN runs f32 matmuls of rank 2 to 4 whose rhs is a constant (a
/// linear layer's weights) or an activation of the output's rank
/// (attention's batched matmuls, QK^T and PV). Dynamic dims are leading
/// dims the output shares with the lhs (and, for the rhs, batch dims);
/// K and N are static.
static bool runsInOneDnn(MatmulOp matmul) {
  RankedTensorType lhs = matmul.getLhs().getType(), rhs = matmul.getRhs().getType();
  RankedTensorType out = matmul.getType();
  int64_t rank = out.getRank();
  if (!lhs.getElementType().isF32() || rank > 4 || rank < 2 || hasZeroDim({lhs, rhs, out}))
    return false;
  if (lhs.getRank() != rank || (!rhs.hasStaticShape() && rhs.getRank() != rank))
    return false;
  for (int64_t d = 0; d < rank; ++d)
    if (out.isDynamicDim(d) && (d >= rank - 1 || !lhs.isDynamicDim(d)))
      return false;
  for (int64_t d = 0; d < rhs.getRank(); ++d)
    if (rhs.isDynamicDim(d) && (d >= rhs.getRank() - 2 || !out.isDynamicDim(d)))
      return false;
  return !lhs.isDynamicDim(lhs.getRank() - 1);
}

/// The call of a max or average pool.
template <typename Pool>
static LibraryCall describePool(Pool pool, LibraryPooling algorithm) {
  LibraryCall call;
  call.kind = LibraryKind::Pool;
  call.input = dimsOf(pool.getInput().getType());
  call.output = dimsOf(pool.getType());
  call.params = {{"algorithm", {static_cast<int64_t>(algorithm)}},
                 {"kernel", {pool.getKernelShape().begin(), pool.getKernelShape().end()}},
                 {"strides", {pool.getStrides().begin(), pool.getStrides().end()}},
                 {"pads", {pool.getPads().begin(), pool.getPads().end()}}};
  return call;
}

static LibraryCall describeGlobalPool(ReduceMeanOp mean);
static LibraryCall describeConcat(ConcatOp concat);

/// The call of a convolution, matmul, pool or concat `root`, without
/// epilogue.
static LibraryCall describeRoot(Operation *root) {
  if (auto mean = dyn_cast<ReduceMeanOp>(root))
    return describeGlobalPool(mean);
  if (auto concat = dyn_cast<ConcatOp>(root))
    return describeConcat(concat);
  if (auto pool = dyn_cast<MaxPoolOp>(root))
    return describePool(pool, LibraryPooling::Max);
  if (auto pool = dyn_cast<AvgPoolOp>(root))
    return describePool(pool, pool.getCountIncludePad() ? LibraryPooling::AverageIncludePad
                                                        : LibraryPooling::AverageExcludePad);
  LibraryCall call;
  if (auto matmul = dyn_cast<MatmulOp>(root)) {
    call.kind = LibraryKind::Matmul;
    call.input = dimsOf(matmul.getLhs().getType());
    call.weight = dimsOf(matmul.getRhs().getType());
    call.output = dimsOf(matmul.getType());
    return call;
  }
  auto conv = cast<ConvOp>(root);
  call.kind = LibraryKind::Convolution;
  call.input = dimsOf(conv.getInput().getType());
  call.weight = dimsOf(conv.getWeight().getType());
  call.output = dimsOf(conv.getType());
  call.params = {
      {"strides", {conv.getStrides().begin(), conv.getStrides().end()}},
      {"dilations", {conv.getDilations().begin(), conv.getDilations().end()}},
      {"pads", {conv.getPads().begin(), conv.getPads().end()}},
      {"groups", {static_cast<int64_t>(conv.getGroups())}}};
  return call;
}

/// oneDNN runs f32 2-D max and average pooling without dilation whose
/// channels are static. An average pool in ceil mode that counts padded
/// positions stays generated: ONNX counts the explicit padding but not the
/// ceil-mode overflow, where oneDNN counts both or neither (without
/// count_include_pad both count only the real positions).
template <typename Pool>
static bool runsInOneDnn(Pool pool) {
  RankedTensorType in = pool.getInput().getType(), out = pool.getType();
  if (!in.getElementType().isF32() || in.getRank() != 4 || hasZeroDim({in, out}) ||
      in.isDynamicDim(1) || out.isDynamicDim(1))
    return false;
  if (auto avg = dyn_cast<AvgPoolOp>(pool.getOperation());
      avg && avg.getCeilMode() && avg.getCountIncludePad())
    return false;
  if (!llvm::all_of(pool.getDilations(), [](int64_t d) { return d == 1; }))
    return false;
  // Each window starts inside the input or the low padding and keeps a
  // real position: the low and the implied high padding are below the
  // window's size. The implied high padding may be negative (oneDNN takes
  // it so): the last stride leaves up to stride - 1 input positions
  // unread. Over a dim known only at run time low and high together are
  // below the window's size (then both are, and in floor mode an empty
  // input gives an empty output); in ceil mode the last window starts
  // inside the input or the low padding, and an empty input gives an
  // empty output when there is no low padding or a stride more fits in
  // the window than the padding.
  ArrayRef<int64_t> kernel = pool.getKernelShape(), strides = pool.getStrides();
  ArrayRef<int64_t> pads = pool.getPads();
  for (int64_t i = 0; i < 2; ++i) {
    if (pads[i] < 0 || pads[i] >= kernel[i])
      return false;
    if (in.isDynamicDim(2 + i) || out.isDynamicDim(2 + i)) {
      int64_t padding = pads[i] + pads[2 + i];
      if (padding >= kernel[i] ||
          (pool.getCeilMode() && pads[i] > 0 && padding + strides[i] > kernel[i]))
        return false;
      continue;
    }
    int64_t high = (out.getDimSize(2 + i) - 1) * strides[i] + kernel[i] - in.getDimSize(2 + i) -
                   pads[i];
    if (high <= -strides[i] || high >= kernel[i])
      return false;
  }
  return true;
}

/// oneDNN joins f32 rank-4 tensors along the channels (a squeezenet fire
/// module's, an inception block's), static, whose batch and spatial dims
/// are the output's (static or known only at run time: the runtime makes
/// a primitive per output shape and checks the inputs' dims at each run).
static bool runsInOneDnn(ConcatOp concat) {
  RankedTensorType out = concat.getType();
  if (!out.getElementType().isF32() || out.getRank() != 4 || concat.getAxis() != 1 ||
      concat.getInputs().size() < 2 ||
      concat.getInputs().size() > KILN_LIBRARY_MAX_CONCAT_INPUTS)
    return false;
  SmallVector<Type> types(concat.getInputs().getTypes());
  types.push_back(out);
  if (hasZeroDim(types))
    return false;
  return llvm::all_of(types, [&](Type t) {
    auto type = cast<RankedTensorType>(t);
    return !type.isDynamicDim(1) && type.getDimSize(0) == out.getDimSize(0) &&
           type.getDimSize(2) == out.getDimSize(2) && type.getDimSize(3) == out.getDimSize(3);
  });
}

/// A global average pool: the mean of an f32 [N,C,H,W] over H and W,
/// kept as [N,C,1,1]; oneDNN pools it with an HxW window (static channels;
/// H and W known when compiling, or a window of -1 there: the input's size
/// at each run).
static bool runsInOneDnn(ReduceMeanOp mean) {
  auto in = cast<RankedTensorType>(mean.getInput().getType());
  if (!in.getElementType().isF32() || in.getRank() != 4 || !mean.getKeepdims() ||
      mean.getAxes() != ArrayRef<int64_t>{2, 3} || hasZeroDim({in}))
    return false;
  return !in.isDynamicDim(1);
}

static LibraryCall describeGlobalPool(ReduceMeanOp mean) {
  LibraryCall call;
  call.kind = LibraryKind::Pool;
  call.input = dimsOf(mean.getInput().getType());
  call.output = dimsOf(mean.getType());
  call.params = {{"algorithm", {static_cast<int64_t>(LibraryPooling::AverageExcludePad)}},
                 {"kernel", {call.input[2], call.input[3]}},
                 {"strides", {1, 1}},
                 {"pads", {0, 0, 0, 0}}};
  return call;
}

static LibraryCall describeConcat(ConcatOp concat) {
  LibraryCall call;
  call.kind = LibraryKind::Concat;
  call.input = dimsOf(concat.getInputs().front().getType());
  for (Value input : llvm::drop_begin(concat.getInputs()))
    call.moreInputs.push_back(dimsOf(input.getType()));
  call.output = dimsOf(concat.getType());
  call.params = {{"axis", {static_cast<int64_t>(concat.getAxis())}}};
  return call;
}

/// A channel scale that oneDNN runs (a binary multiplication): an f32
/// kiln.mul of x [N,C,H,W] (C static) by s [N or 1,C,1,1] (a
/// squeeze-excitation's, or a constant: a batch norm's x * s), where x is
/// the output of another call that is not a matmul (which can hand it over
/// channels-last; a generated mul is as fast on a channels-first x).
/// Returns s's operand number.
static std::optional<unsigned> channelScale(Value lhs, Value rhs, Type result,
                                            const std::vector<LibraryCall> &calls) {
  auto out = cast<RankedTensorType>(result);
  // The batch and the image size may be known only at run time.
  if (!out.getElementType().isF32() || out.getRank() != 4 || hasZeroDim({out}) ||
      out.isDynamicDim(1))
    return std::nullopt;
  for (unsigned k = 0; k < 2; ++k) {
    Value x = k ? rhs : lhs, s = k ? lhs : rhs;
    auto scale = cast<RankedTensorType>(s.getType());
    if (x.getType() != out || scale.getRank() != 4 ||
        scale.getShape().drop_front() != ArrayRef<int64_t>{out.getDimSize(1), 1, 1})
      continue;
    // The scale's batch: 1, or the input's (checked again at run time
    // when both are dynamic).
    if (scale.getDimSize(0) != 1 && scale.getDimSize(0) != out.getDimSize(0))
      continue;
    std::optional<unsigned> from = callIndex(x.getDefiningOp());
    if (from && calls[*from].kind != LibraryKind::Matmul)
      return 1 - k;
  }
  return std::nullopt;
}

/// The call of a channel scale, its operands put in the call's order
/// (the input, then the scale: the mul commutes).
static LibraryCall describeScale(MulOp mul, unsigned scaleOperand) {
  if (scaleOperand == 0)
    mul->setOperands({mul.getRhs(), mul.getLhs()});
  LibraryCall call;
  call.kind = LibraryKind::Scale;
  call.input = dimsOf(mul.getLhs().getType());
  call.weight = dimsOf(mul.getRhs().getType());
  call.output = dimsOf(mul.getType());
  return call;
}

/// What follows a claimed channel scale `mul` as its epilogue: an add of
/// C values ([1,C,1,1] or [C,1,1], the bias: a batch norm's x * s + t),
/// then an activation a post-op runs (ReLU, clip, sigmoid, tanh, GELU),
/// each the only user of the op before. They and the mul become one
/// epilogue kernel that takes the mul's call over, so a DenseNet layer's
/// batch norm and ReLU run in oneDNN on the concatenation's channels-last
/// output and hand the convolution after them channels-last input (no
/// reorder on either side). Nothing changes when nothing follows.
static void takeScaleEpilogue(MulOp mul, std::vector<LibraryCall> &calls) {
  SmallVector<Operation *> chain = {mul};
  auto next = [&]() -> Operation * {
    Operation *last = chain.back();
    if (!last->hasOneUse())
      return nullptr;
    Operation *user = *last->getUsers().begin();
    return user->getBlock() == last->getBlock() && user->getNumResults() == 1 &&
                   user->getResult(0).getType() == mul.getType()
               ? user
               : nullptr;
  };
  int64_t channels = mul.getType().getDimSize(1);
  if (auto add = dyn_cast_or_null<AddOp>(next())) {
    Value bias = add.getLhs() == mul.getResult() ? add.getRhs() : add.getLhs();
    auto type = cast<RankedTensorType>(bias.getType());
    bool perChannel = type.getShape() == ArrayRef<int64_t>{1, channels, 1, 1} ||
                      type.getShape() == ArrayRef<int64_t>{channels, 1, 1};
    // A bias that is x or the scale itself would not be an operand of its own.
    if (perChannel && bias != mul.getResult() && bias != mul.getLhs() && bias != mul.getRhs())
      chain.push_back(add);
  }
  if (Operation *activation = next();
      activation && isa<ReluOp, ClipOp, SigmoidOp, TanhOp, GeluOp>(activation))
    chain.push_back(activation);
  if (chain.size() == 1)
    return;
  unsigned id = *callIndex(mul);
  SmallVector<NamedAttribute> claim;
  for (StringRef name : {kCallAttr, kInputsAttr})
    if (Attribute value = mul->getAttr(name)) {
      claim.push_back(NamedAttribute(name, value));
      mul->removeAttr(name);
    }
  KernelOp kernel = fusion::groupIntoKernel(chain, chain.back(), KernelKind::epilogue);
  for (NamedAttribute attr : claim)
    kernel->setAttr(attr.getName(), attr.getValue());
  LibraryCall described = calls[id];
  // The body is mul, then the chain: the kernel's operands are x, s, then
  // the bias.
  if (failed(describeEpilogue(kernel, described)))
    kernel.emitError("a channel scale's epilogue that no post-op covers");
  calls[id] = described;
}

/// An elementwise kernel kiln-fuse made of a channel scale and its
/// epilogue (a batch norm's x * s + t and its ReLU: a mul of two of the
/// kernel's operands, then at most an add and an activation) whose mul
/// channelScale takes: its ops, bare in its place (the kernel is gone),
/// the mul's operands in the call's order, the mul claimed. Nothing
/// changes otherwise.
static std::optional<MulOp> claimScaleKernel(KernelOp kernel, std::vector<LibraryCall> &calls) {
  auto ops = llvm::to_vector(llvm::map_range(kernel.bodyOps(), [](Operation &op) { return &op; }));
  if (kernel.getKind() != KernelKind::elementwise || ops.empty() || ops.size() > 3 ||
      kernel->getNumResults() != 1 ||
      !llvm::all_of(ops, [](Operation *op) {
        return isa<MulOp, AddOp, ReluOp, ClipOp, SigmoidOp, TanhOp, GeluOp>(op);
      }))
    return std::nullopt;
  auto mul = dyn_cast<MulOp>(ops.front());
  auto outside = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg ? kernel.getInputs()[arg.getArgNumber()] : Value();
  };
  Value lhs = mul ? outside(mul.getLhs()) : Value(), rhs = mul ? outside(mul.getRhs()) : Value();
  std::optional<unsigned> scale =
      lhs && rhs ? channelScale(lhs, rhs, mul.getType(), calls) : std::nullopt;
  if (!scale)
    return std::nullopt;
  // inlineBody clones the body in order just before the kernel: the mul,
  // the body's first op, comes right after the kernel's previous op.
  Operation *previous = kernel->getPrevNode();
  Block *block = kernel->getBlock();
  kernel.inlineBody();
  auto bare = cast<MulOp>(previous ? previous->getNextNode() : &block->front());
  markLibraryCall(bare, describeScale(bare, *scale), calls);
  return bare;
}

/// A reduction kernel that is only a global average pool: its mean.
static ReduceMeanOp globalPoolOf(KernelOp kernel) {
  auto ops = kernel.bodyOps();
  if (kernel.getKind() != KernelKind::reduction || kernel.getInputs().size() != 1 ||
      kernel->getNumResults() != 1 || std::distance(ops.begin(), ops.end()) != 1)
    return {};
  auto mean = dyn_cast<ReduceMeanOp>(*ops.begin());
  if (!mean || mean.getInput() != kernel.getBody().front().getArgument(0) ||
      !runsInOneDnn(mean))
    return {};
  return mean;
}

static bool runsInOneDnn(Operation *root);

/// The activation of several ops (SiLU: a sigmoid, then its mul;
/// HardSwish) that reads `x` and whose result is `end`, in body order;
/// empty otherwise.
static SmallVector<Operation *, 4> activationEndingIn(Operation *end, Value x) {
  if (std::optional<HardActivation> hard = matchHardSwish(dyn_cast_or_null<MulOp>(end));
      hard && hard->input == x)
    return hard->ops;
  auto mul = dyn_cast_or_null<MulOp>(end);
  auto sigmoid = mul ? dyn_cast_or_null<SigmoidOp>(
                           (mul.getLhs() == x ? mul.getRhs() : mul.getLhs()).getDefiningOp())
                     : nullptr;
  if (sigmoid && sigmoid.getInput() == x && llvm::is_contained(mul->getOperands(), x))
    return {sigmoid, mul};
  return {};
}

/// A SiLU or HardSwish that kiln-fuse left as the prologue of a global
/// average pool's row loop (the activation, then the mean over H and W:
/// efficientnet's and mobilenet_v3's last blocks) moves into the epilogue
/// of the convolution that produces its input, when that convolution runs
/// in oneDNN, has no activation and feeds only the pool: the convolution
/// then runs it as its post-op, and the pool, only a mean now, runs in
/// oneDNN on the convolution's channels-last output (no reorder to
/// channels-first for a generated row loop). Returns whether it moved.
static bool takeActivationBeforeGlobalPool(KernelOp pool) {
  Block &body = pool.getBody().front();
  auto mean = body.without_terminator().empty()
                  ? nullptr
                  : dyn_cast<ReduceMeanOp>(*std::prev(body.without_terminator().end()));
  if (pool.getKind() != KernelKind::reduction || pool->getNumResults() != 1 || !mean ||
      !runsInOneDnn(mean))
    return false;
  Value x = body.getArgument(0);
  SmallVector<Operation *, 4> ops = activationEndingIn(mean.getInput().getDefiningOp(), x);
  if (ops.empty() || !llvm::all_of(ops, [](Operation *op) { return op->hasOneUse(); }))
    return false;
  // Nothing else in the row loop: the pool's other operands are the
  // activation's splat constants.
  size_t constants = 0;
  for (Operation &op : body.without_terminator())
    constants += isa<ConstantOp>(op);
  if (ops.size() + constants + 1 != static_cast<size_t>(std::distance(
                                         body.without_terminator().begin(),
                                         body.without_terminator().end())) ||
      !llvm::all_of(llvm::drop_begin(body.getArguments()),
                    [](BlockArgument arg) { return splatValue(arg).has_value(); }))
    return false;
  auto producer = pool.getInputs()[0].getDefiningOp<KernelOp>();
  if (!producer || producer.getKind() != KernelKind::epilogue || producer->getNumResults() != 1 ||
      !producer->getResult(0).hasOneUse() || producer.getBody().front().without_terminator().empty())
    return false;
  Operation *root = &*producer.bodyOps().begin();
  LibraryCall probe;
  if (!isa<ConvOp>(root) || !runsInOneDnn(root) || failed(describeEpilogue(producer, probe)) ||
      probe.epilogue.activation != LibraryActivation::None)
    return false;
  // The producer yields the activation of what it yielded (with copies of
  // its constants); the pool means its input.
  Operation *yield = producer.getBody().front().getTerminator();
  OpBuilder b(yield);
  IRMapping map;
  map.map(x, yield->getOperand(0));
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      if (map.contains(operand))
        continue;
      auto arg = dyn_cast<BlockArgument>(operand);
      Value outer = arg && arg.getOwner() == &body ? pool.getInputs()[arg.getArgNumber()] : operand;
      if (auto constant = outer.getDefiningOp<ConstantOp>())
        map.map(operand, b.clone(*constant)->getResult(0));
    }
    b.clone(*op, map);
  }
  yield->setOperand(0, map.lookup(ops.back()->getResult(0)));
  mean->setOperand(0, x);
  moveLocations(pool, producer,
                llvm::to_vector(llvm::map_range(ops, [](Operation *op) { return op->getLoc(); })));
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    if (isa<ConstantOp>(op) && op.use_empty())
      op.erase();
  for (unsigned i = body.getNumArguments(); i-- > 1;) {
    body.eraseArgument(i);
    pool->eraseOperand(i);
  }
  return true;
}

static bool runsInOneDnn(Operation *root) {
  if (auto conv = dyn_cast<ConvOp>(root))
    return runsInOneDnn(conv);
  if (auto matmul = dyn_cast<MatmulOp>(root))
    return runsInOneDnn(matmul);
  if (auto pool = dyn_cast<MaxPoolOp>(root))
    return runsInOneDnn(pool);
  if (auto pool = dyn_cast<AvgPoolOp>(root))
    return runsInOneDnn(pool);
  if (auto concat = dyn_cast<ConcatOp>(root))
    return runsInOneDnn(concat);
  if (auto mean = dyn_cast<ReduceMeanOp>(root))
    return runsInOneDnn(mean);
  return false;
}





/// The op a report names for `op`: a kernel's root, or the op itself.
static std::string nameForReport(Operation *op) {
  if (auto kernel = dyn_cast<KernelOp>(op))
    if (!kernel.getBody().front().without_terminator().empty())
      op = &*kernel.bodyOps().begin();
  return op->getName().getStringRef().str();
}

/// Whether a call of `kind` can read its operand `operand` channels-last:
/// a convolution its input and its residual, a pool its input, a concat
/// every input, a scale both (its [N,C,1,1] scale the same bytes either
/// way).
static bool readsChannelsLast(LibraryKind kind, Operation *op, unsigned operand) {
  switch (kind) {
  case LibraryKind::Scale:
    return true;
  case LibraryKind::Convolution:
    return operand == 0 || residualOperand(op) == operand;
  case LibraryKind::Pool:
    return operand == 0;
  case LibraryKind::Concat:
    return true;
  case LibraryKind::Matmul:
    return false;
  }
  return false;
}

/// Dims [N,C,1,1] (a global pool's output, a squeeze-excitation's
/// convolutions'): the same bytes in either layout.
static bool isPoint(const std::vector<int64_t> &dims) {
  return dims.size() == 4 && dims[2] == 1 && dims[3] == 1;
}

static bool hasPointOutput(const LibraryCall &call) { return isPoint(call.output); }

/// Chooses the physical layout of every convolution, pool and concat
/// call's operands (the `layouts` parameter). A call's output stays
/// channels-last (oneDNN's layout: no reorder) when every op that reads
/// it is such a call that takes it channels-last (readsChannelsLast); a
/// residual shares its call's output buffer, so both take one layout; an
/// output of [N,C,1,1] is channels-last whatever reads it (the same
/// bytes).
/// Everything else -- graph inputs and outputs, values generated code
/// reads or writes -- stays channels-first, and the device reorders at
/// that edge; each such edge is named in the call's layoutNote (a concat
/// reads and writes each operand in its own layout as it copies: no
/// reorder of its own).
static void assignConvolutionLayouts(ModuleOp module, std::vector<LibraryCall> &calls) {
  std::vector<Operation *> ops(calls.size(), nullptr);
  module.walk([&](Operation *op) {
    if (std::optional<unsigned> id = callIndex(op))
      if (calls[*id].kind != LibraryKind::Matmul)
        ops[*id] = op;
  });
  auto layoutCall = [&](Operation *op) -> std::optional<unsigned> {
    std::optional<unsigned> id = callIndex(op);
    if (!id || !ops[*id])
      return std::nullopt;
    return id;
  };
  auto readsLast = [&](OpOperand &use) {
    std::optional<unsigned> reader = layoutCall(use.getOwner());
    return reader && readsChannelsLast(calls[*reader].kind, use.getOwner(),
                                       use.getOperandNumber());
  };
  // Optimistic start: channels-last where every reader takes it so.
  std::vector<bool> last(calls.size(), false);
  for (auto [id, op] : llvm::enumerate(ops)) {
    if (!op)
      continue;
    Value out = op->getResult(0);
    last[id] = hasPointOutput(calls[id]) ||
               (!out.use_empty() && llvm::all_of(out.getUses(), readsLast));
  }
  // A residual and its call's output share a buffer: one layout for both.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [id, op] : llvm::enumerate(ops)) {
      std::optional<unsigned> residual = op ? residualOperand(op) : std::nullopt;
      if (!residual)
        continue;
      Operation *producer = op->getOperand(*residual).getDefiningOp();
      std::optional<unsigned> from = layoutCall(producer);
      bool residualLast = from && last[*from];
      if (residualLast != last[id]) {
        last[id] = false;
        if (from)
          last[*from] = false;
        changed = true;
      }
    }
  }
  auto layoutOf = [](bool channelsLast) {
    return static_cast<int64_t>(channelsLast ? LibraryLayout::ChannelsLast
                                             : LibraryLayout::ChannelsFirst);
  };
  auto producedLast = [&](Value value) {
    std::optional<unsigned> from = layoutCall(value.getDefiningOp());
    return from && last[*from];
  };
  for (auto [id, op] : llvm::enumerate(ops)) {
    if (!op)
      continue;
    LibraryCall &call = calls[id];
    if (call.kind == LibraryKind::Concat) {
      std::vector<int64_t> layouts;
      for (Value input : op->getOperands())
        layouts.push_back(layoutOf(producedLast(input)));
      layouts.push_back(layoutOf(last[id]));
      call.params.push_back({"layouts", layouts});
      continue;
    }
    Value in = op->getOperand(0);
    bool inLast = producedLast(in);
    call.params.push_back({"layouts", {layoutOf(inLast), layoutOf(last[id])}});
    std::string note;
    if (call.kind == LibraryKind::Pool || call.kind == LibraryKind::Scale) {
      // A pool or a scale runs in its input's layout; only an output in
      // the other layout is reordered (a [N,C,1,1] output is the same
      // either way).
      if (inLast != last[id] && !hasPointOutput(call)) {
        if (!inLast) {
          note = "output: into the convolutions' layout";
        } else {
          note = "output: to a reader in channels-first";
          for (OpOperand &use : op->getResult(0).getUses())
            if (!readsLast(use)) {
              note = "output: to " + nameForReport(use.getOwner());
              break;
            }
        }
      }
      call.layoutNote = note;
      continue;
    }
    if (!inLast && !isPoint(call.input))
      note = "input: from " + (in.getDefiningOp() ? nameForReport(in.getDefiningOp())
                                                   : std::string("a graph input"));
    if (!last[id]) {
      Value out = op->getResult(0);
      std::string reader = "nothing";
      for (OpOperand &use : out.getUses())
        if (!readsLast(use)) {
          reader = nameForReport(use.getOwner());
          break;
        }
      if (reader == "nothing" && !out.use_empty())
        reader = "a residual in another layout";
      note += (note.empty() ? "" : "; ") + std::string("output: to ") + reader;
    }
    call.layoutNote = note;
  }
}

std::vector<LibraryCall> assignLibraryCalls(ModuleOp module, const LibraryCallOptions &options) {
  std::vector<LibraryCall> calls;
  auto mark = [&](Operation *op, LibraryCall call) { markLibraryCall(op, std::move(call), calls); };
  // Without post-ops (for comparison) a convolution kernel is dissolved:
  // oneDNN runs the convolution, the epilogue is generated. A matmul
  // (oneDNN's brgemm) always takes its whole epilogue.
  SmallVector<KernelOp> kernels;
  module.walk([&](KernelOp kernel) {
    if (options.convolutionPostOps)
      return;
    if (kernel.getKind() == KernelKind::epilogue && !kernel.getBody().front().without_terminator().empty())
      kernels.push_back(kernel);
  });
  for (KernelOp kernel : kernels) {
    Operation *root = &*kernel.bodyOps().begin();
    if (!isa<ConvOp>(root) || !runsInOneDnn(root))
      continue;
    kernel.inlineBody();
  }
  if (options.convolutionPostOps && options.channelsLast) {
    SmallVector<KernelOp> reductions;
    module.walk([&](KernelOp kernel) {
      if (kernel.getKind() == KernelKind::reduction)
        reductions.push_back(kernel);
    });
    for (KernelOp kernel : reductions)
      takeActivationBeforeGlobalPool(kernel);
  }
  // In program order: kernels as a whole, bare convolutions and matmuls.
  SmallVector<MulOp> scales;
  SmallVector<KernelOp> scaleKernels;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      if (kernel.getKind() == KernelKind::elementwise && options.channelsLast)
        scaleKernels.push_back(kernel);
      if (ReduceMeanOp mean = globalPoolOf(kernel)) {
        // No longer a row loop.
        kernel->removeAttr(KilnDialect::OuterDimsAttrHelper::getNameStr());
        mark(kernel, describeGlobalPool(mean));
        return WalkResult::skip();
      }
      if (kernel.getKind() != KernelKind::epilogue || kernel.getBody().front().empty())
        return WalkResult::skip();
      Operation *root = &*kernel.bodyOps().begin();
      if (!runsInOneDnn(root))
        return WalkResult::skip();
      LibraryCall call = describeRoot(root);
      if (succeeded(describeEpilogue(kernel, call)))
        mark(kernel, std::move(call));
      else
        kernel->removeAttr(kResidualAttr);
      return WalkResult::skip();
    }
    if (isa<ConvOp, MatmulOp, MaxPoolOp, AvgPoolOp, ConcatOp, ReduceMeanOp>(op) && runsInOneDnn(op))
      mark(op, describeRoot(op));
    if (auto mul = dyn_cast<MulOp>(op); mul && options.channelsLast)
      if (std::optional<unsigned> scale =
              channelScale(mul.getLhs(), mul.getRhs(), mul.getType(), calls)) {
        mark(op, describeScale(mul, *scale));
        scales.push_back(mul);
      }
    return WalkResult::advance();
  });
  // After the walk, so that every call that could produce their input is
  // marked.
  for (KernelOp kernel : scaleKernels)
    if (std::optional<MulOp> mul = claimScaleKernel(kernel, calls))
      scales.push_back(*mul);
  for (MulOp mul : scales)
    takeScaleEpilogue(mul, calls);
  if (options.channelsLast)
    assignConvolutionLayouts(module, calls);
  absorbMatmulTransposes(module, calls, [](const LibraryCall &, int) { return true; });
  return calls;
}


} // namespace kiln::cpu
