//===- NN.cpp - ONNX matmul, convolution and pooling ----------------------===//
//
// MatMul and Gemm become kiln.matmul (plus transposes and scaling), Conv
// becomes kiln.conv plus a bias add, ConvTranspose kiln.conv_transpose
// (after auto_pad and output_shape become pads) plus a bias add, and
// pooling maps onto kiln's pools or reductions.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

LogicalResult importMatMul(NodeContext &ctx) {
  return ctx.setOutput(0, numpyMatmul(ctx, ctx.input(0), ctx.input(1)));
}

Value transpose2d(NodeContext &ctx, Value v) {
  if (NodeContext::rankOf(v) != 2) {
    ctx.invalid("Gemm operands must be matrices");
    return {};
  }
  return ctx.make<TransposeOp>(v, ctx.i64s({1, 0}));
}

LogicalResult importGemm(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  // Before opset 7, broadcast = 0 asks C to have Y's shape; kiln.add
  // broadcasts C in either case, and such a C needs none.
  if (ctx.opset < 7)
    ctx.attrsWithoutEffect({"broadcast"});
  if (ctx.intAttr("transA", 0))
    a = transpose2d(ctx, a);
  if (ctx.intAttr("transB", 0))
    b = transpose2d(ctx, b);
  Value y = ctx.make<MatmulOp>(a, b);
  double alpha = ctx.floatAttr("alpha", 1.0f);
  if (alpha != 1.0)
    y = ctx.make<MulOp>(y, ctx.scalarLike(y, alpha));
  if (Value c = ctx.optionalInput(2)) {
    double beta = ctx.floatAttr("beta", 1.0f);
    if (beta != 1.0)
      c = ctx.make<MulOp>(c, ctx.scalarLike(c, beta));
    y = ctx.make<AddOp>(y, c);
  }
  return ctx.setOutput(0, y);
}

/// Adds a per-channel bias [C] to `y` ([N, C, ...]).
Value addChannelBias(NodeContext &ctx, Value y, Value bias) {
  if (!bias)
    return y;
  int64_t rank = NodeContext::rankOf(y);
  SmallVector<int64_t> axes;
  for (int64_t d = 1; d < rank - 1; ++d)
    axes.push_back(d);
  return ctx.make<AddOp>(y, unsqueeze(ctx, bias, axes));
}

LogicalResult importConv(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  RankedTensorType wType = NodeContext::typeOf(w);
  if (!x || !wType)
    return failure();
  if (wType.getRank() < 3)
    return ctx.invalid("weight must have rank >= 3");
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  if (ctx.hasAttr("kernel_shape") && ctx.intsAttr("kernel_shape") != kernel)
    return ctx.invalid("kernel_shape does not match the weight's shape");
  std::optional<Window> window = readWindow(ctx, x, kernel);
  if (!window)
    return failure();
  Value y = ctx.make<ConvOp>(x, w, ctx.i64s(window->strides),
                             ctx.i64s(window->pads), ctx.i64s(window->dilations),
                             ctx.i64(ctx.intAttr("group", 1)));
  return ctx.setOutput(0, addChannelBias(ctx, y, ctx.optionalInput(2)));
}

/// CausalConvWithState (opset 27): a depthwise causal Conv1d of the input
/// [B, C, L] extended on the left by past_state [B, C, k - 1] (zeros when
/// absent), plus the bias, then SiLU when activation is "silu" or "swish"
/// (convolution and SiLU in float32 for a narrower input, each result
/// rounded to the input's type, as ONNX's reference); present_state
/// is the last k - 1 positions of the extended input.
LogicalResult importCausalConvWithState(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  Value bias = ctx.optionalInput(2), past = ctx.optionalInput(3);
  RankedTensorType xType = NodeContext::typeOf(x), wType = NodeContext::typeOf(w);
  if (!xType || !wType)
    return failure();
  if (xType.getRank() != 3 || wType.getRank() != 3)
    return ctx.invalid("input and weight must have rank 3 ([B, C, L] and [C, 1, k])");
  std::string activation = ctx.stringAttr("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    return ctx.invalid("activation '" + activation + "' is not none, silu or swish");
  std::optional<int64_t> channels = staticDim(ctx, w, 0, "CausalConvWithState's weight");
  std::optional<int64_t> k = staticDim(ctx, w, 2, "CausalConvWithState's weight");
  if (!channels || !k)
    return failure();
  if (*k < 1)
    return ctx.invalid("the kernel size (weight dim 2) must be at least 1");
  Value extended = past ? ctx.make<ConcatOp>(ValueRange{past, x}, ctx.i64(2))
                        : zeroPad(ctx, x, {0, 0, *k - 1, 0, 0, 0});
  // A narrower input convolves in float32, rounded once at the end (as the
  // reference does; accumulating in float16 drifts by an ulp or two).
  Type element = NodeContext::elementTypeOf(x);
  bool narrow = element.getIntOrFloatBitWidth() < 32;
  auto wide = [&](Value v) { return narrow && v ? ctx.cast(v, ctx.b.getF32Type()) : v; };
  Value y = ctx.make<ConvOp>(wide(extended), wide(w), ctx.i64s({1}), ctx.i64s({0, 0}),
                             ctx.i64s({1}), ctx.i64(*channels));
  y = ctx.cast(addChannelBias(ctx, y, wide(bias)), element);
  if (activation != "none") {
    Value v = wide(y);
    y = ctx.cast(ctx.make<MulOp>(v, ctx.make<SigmoidOp>(v)), element);
  }
  // The last k - 1 positions; none when k is 1 (a start past the end).
  int64_t start = *k == 1 ? INT64_MAX : -(*k - 1);
  Value present = ctx.make<SliceOp>(extended, ctx.i64s({0, 0, start}),
                                    ctx.i64s({INT64_MAX, INT64_MAX, INT64_MAX}),
                                    ctx.i64s({1, 1, 1}));
  ctx.bindOutput(1, present);
  return ctx.setOutput(0, y);
}

LogicalResult importConvTranspose(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  RankedTensorType xType = NodeContext::typeOf(x), wType = NodeContext::typeOf(w);
  if (!xType || !wType)
    return failure();
  if (wType.getRank() != xType.getRank() || wType.getRank() < 3)
    return ctx.invalid("weight and input ranks differ");
  size_t spatial = wType.getRank() - 2;
  int64_t group = ctx.intAttr("group", 1);
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  if (ctx.hasAttr("kernel_shape") && ctx.intsAttr("kernel_shape") != kernel)
    return ctx.invalid("kernel_shape does not match the weight's shape");
  auto orDefault = [&](StringRef name, size_t size, int64_t value) {
    SmallVector<int64_t> v = ctx.intsAttr(name);
    return v.empty() ? SmallVector<int64_t>(size, value) : v;
  };
  SmallVector<int64_t> strides = orDefault("strides", spatial, 1);
  SmallVector<int64_t> dilations = orDefault("dilations", spatial, 1);
  SmallVector<int64_t> pads = orDefault("pads", 2 * spatial, 0);
  SmallVector<int64_t> outputPadding = orDefault("output_padding", spatial, 0);
  if (strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial || outputPadding.size() != spatial)
    return ctx.invalid("attributes do not match the spatial rank");
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  SmallVector<int64_t> outputShape = ctx.intsAttr("output_shape");
  if (outputShape.size() > spatial)
    outputShape.erase(outputShape.begin(), outputShape.end() - spatial);
  if (!outputShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) {
      std::optional<int64_t> in = staticDim(ctx, x, i + 2, "ConvTranspose");
      if (!in)
        return failure();
      int64_t out = outputShape.empty() ? *in * strides[i] : outputShape[i];
      int64_t total = strides[i] * (*in - 1) + outputPadding[i] +
                      (kernel[i] - 1) * dilations[i] + 1 - out;
      // Floor division, as ONNX's reference: a negative total (an
      // output_shape beyond the natural size) extends the end.
      bool upper = autoPad == "SAME_UPPER";
      int64_t half = llvm::divideFloorSigned(total, 2);
      pads[i] = upper ? half : total - half;
      pads[i + spatial] = upper ? total - half : half;
    }
  } else if (autoPad == "VALID") {
    pads.assign(2 * spatial, 0);
  }
  // Weights [Cin, Cout/g, K...].
  int64_t cin = wType.getDimSize(0), coutPerGroup = wType.getDimSize(1);
  if (ShapedType::isDynamic(cin) || ShapedType::isDynamic(coutPerGroup)) {
    // A weight whose channels are known only at run time: its input
    // channels are the input's, checked when the model runs.
    std::optional<int64_t> channels = staticDim(ctx, x, 1, "ConvTranspose's input channels");
    if (!channels)
      return failure();
    if (ShapedType::isDynamic(coutPerGroup))
      return ctx.unsupported("ConvTranspose with output channels known only at run time");
    cin = *channels;
    SmallVector<int64_t> known = {cin, coutPerGroup};
    known.append(kernel);
    w = ctx.make<ReshapeOp>(w, ctx.i64s(known));
  }
  if (group <= 0 || cin % group != 0)
    return ctx.invalid("weight channels do not divide into groups");
  for (size_t d = 1; d < spatial + 2; ++d)
    if (!staticDim(ctx, x, d, "ConvTranspose"))
      return failure();
  // kiln-expand-composites writes it out as a convolution.
  Value y = ctx.make<ConvTransposeOp>(x, w, ctx.i64s(strides), ctx.i64s(pads),
                                      ctx.i64s(dilations), ctx.i64s(outputPadding),
                                      ctx.i64(group));
  return ctx.setOutput(0, addChannelBias(ctx, y, ctx.optionalInput(2)));
}

/// MaxPool's Indices output: for every output element, the flat (NCHW...,
/// spatial dims row-major, or column-major with `columnMajorOrder`) index of
/// the first maximum of its window. Static shapes: each
/// kernel tap is a gather of the input at constant positions (padding
/// reads -inf), and a running strict maximum keeps the first winner.
Value maxPoolIndices(NodeContext &ctx, Value x, const Window &window, RankedTensorType outType,
                     bool columnMajorOrder) {
  RankedTensorType xType = NodeContext::typeOf(x);
  // The batch may be known only at run time; channels and spatial dims not.
  if (!RankedTensorType::get(xType.getShape().drop_front(), xType.getElementType())
           .hasStaticShape() ||
      !RankedTensorType::get(outType.getShape().drop_front(), xType.getElementType())
           .hasStaticShape()) {
    ctx.unsupported("MaxPool's Indices with channels or spatial dims known only at run time");
    return {};
  }
  ArrayRef<int64_t> in = xType.getShape().drop_front(2), out = outType.getShape().drop_front(2);
  size_t spatial = in.size();
  int64_t c = xType.getDimSize(1);
  int64_t inSize = 1, outSize = 1, taps = 1;
  for (size_t i = 0; i < spatial; ++i) {
    inSize *= in[i];
    outSize *= out[i];
    taps *= window.kernel[i];
  }
  Value flat = ctx.make<ReshapeOp>(x, ctx.i64s({0, c, inSize}));
  Value lowest = ctx.scalarLike(x, -std::numeric_limits<double>::infinity());
  Value best, index;
  for (int64_t t = 0; t < taps; ++t) {
    // The tap's offset in each spatial dim (last dim fastest).
    SmallVector<int64_t> offset(spatial);
    for (int64_t rest = t, i = static_cast<int64_t>(spatial) - 1; i >= 0; --i) {
      offset[i] = rest % window.kernel[i];
      rest /= window.kernel[i];
    }
    // Row-major positions to read; the index reported is column-major
    // (first spatial dim fastest) with storage_order = 1.
    SmallVector<int64_t> positions(outSize), reported(outSize);
    SmallVector<bool> valid(outSize);
    for (int64_t o = 0; o < outSize; ++o) {
      SmallVector<int64_t> coordinate(spatial);
      bool inside = true;
      for (int64_t rest = o, i = static_cast<int64_t>(spatial) - 1; i >= 0; --i) {
        int64_t at = (rest % out[i]) * window.strides[i] + offset[i] * window.dilations[i] -
                     window.pads[i];
        rest /= out[i];
        inside &= at >= 0 && at < in[i];
        coordinate[i] = std::clamp<int64_t>(at, 0, in[i] - 1);
      }
      int64_t rowMajor = 0, columnMajor = 0;
      for (size_t i = 0, stride = 1; i < spatial; stride *= in[i], ++i)
        columnMajor += coordinate[i] * stride;
      for (int64_t i = static_cast<int64_t>(spatial) - 1, stride = 1; i >= 0; stride *= in[i], --i)
        rowMajor += coordinate[i] * stride;
      positions[o] = rowMajor;
      reported[o] = columnMajorOrder ? columnMajor : rowMajor;
      valid[o] = inside;
    }
    SmallVector<int64_t> spatialOut(out);
    auto positionsType = RankedTensorType::get(spatialOut, ctx.b.getI64Type());
    Value read = ctx.constant(DenseElementsAttr::get(positionsType, ArrayRef<int64_t>(positions)));
    Value at = ctx.constant(DenseElementsAttr::get(positionsType, ArrayRef<int64_t>(reported)));
    Value inside = ctx.constant(DenseElementsAttr::get(positionsType.clone(ctx.b.getI1Type()),
                                                       ArrayRef<bool>(valid)));
    Value value = ctx.make<SelectOp>(inside, ctx.make<GatherOp>(flat, read, ctx.i64(2)), lowest);
    if (!best) {
      best = value;
      index = at; // broadcasts over N and C
      continue;
    }
    Value better = compare(ctx, ComparePredicate::gt, value, best);
    best = ctx.make<SelectOp>(better, value, best);
    index = ctx.make<SelectOp>(better, at, index);
  }
  // Plus the (n, c) plane's start: (n * C + c) * size.
  int64_t rank = xType.getRank();
  SmallVector<int64_t> channelStarts;
  for (int64_t i = 0; i < c; ++i)
    channelStarts.push_back(i * inSize);
  SmallVector<int64_t> channelShape(rank, 1);
  channelShape[1] = c;
  Value channelStart = ctx.constant(DenseElementsAttr::get(
      RankedTensorType::get(channelShape, ctx.b.getI64Type()), ArrayRef<int64_t>(channelStarts)));
  Value batchStart = ctx.make<MulOp>(iotaOfDim(ctx, x, 0, rank, 0), i64Scalar(ctx, c * inSize));
  return ctx.make<AddOp>(index, ctx.make<AddOp>(batchStart, channelStart));
}

LogicalResult importMaxPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool indices = ctx.hasOutput(1) && ctx.outputUsed(1);
  bool ceilMode = ctx.intAttr("ceil_mode", 0) != 0;
  std::optional<Window> window = readWindow(ctx, x, {}, ceilMode);
  if (!window)
    return failure();
  Value y = ctx.make<MaxPoolOp>(x, ctx.i64s(window->kernel), ctx.i64s(window->strides),
                                ctx.i64s(window->pads), ctx.i64s(window->dilations),
                                ctx.b.getBoolAttr(ceilMode));
  if (indices && y)
    ctx.bindOutput(1, maxPoolIndices(ctx, x, *window, NodeContext::typeOf(y),
                                     ctx.intAttr("storage_order", 0) != 0));
  return ctx.setOutput(0, y);
}

LogicalResult importAveragePool(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool ceilMode = ctx.intAttr("ceil_mode", 0) != 0;
  std::optional<Window> window = readWindow(ctx, x, {}, ceilMode);
  if (!window)
    return failure();
  bool countPad = ctx.intAttr("count_include_pad", 0) != 0;
  return ctx.setOutput(
      0, ctx.make<AvgPoolOp>(x, ctx.i64s(window->kernel),
                             ctx.i64s(window->strides), ctx.i64s(window->pads),
                             ctx.i64s(window->dilations),
                             ctx.b.getBoolAttr(ceilMode),
                             ctx.b.getBoolAttr(countPad)));
}

/// LpPool: (sum over each window of |x|^p)^(1/p), padded positions zero:
/// an average pool that counts them, times the window's size.
LogicalResult importLpPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool ceilMode = ctx.intAttr("ceil_mode", 0) != 0;
  std::optional<Window> window = readWindow(ctx, x, {}, ceilMode);
  if (!window)
    return failure();
  if (ceilMode)
    return ctx.unsupported("LpPool with ceil_mode");
  double p = ctx.intAttr("p", 2);
  if (p <= 0)
    return ctx.invalid("p must be positive");
  Value magnitude = ctx.make<AbsOp>(x);
  Value powered = p == 1   ? magnitude
                  : p == 2 ? ctx.make<MulOp>(x, x)
                           : ctx.make<PowOp>(magnitude, ctx.scalarLike(x, p));
  int64_t size = 1;
  for (int64_t k : window->kernel)
    size *= k;
  Value mean = ctx.make<AvgPoolOp>(powered, ctx.i64s(window->kernel), ctx.i64s(window->strides),
                                   ctx.i64s(window->pads), ctx.i64s(window->dilations),
                                   ctx.b.getBoolAttr(false), ctx.b.getBoolAttr(true));
  Value sum = ctx.make<MulOp>(mean, ctx.scalarLike(mean, static_cast<double>(size)));
  Value y = p == 1   ? sum
            : p == 2 ? ctx.make<SqrtOp>(sum)
                     : ctx.make<PowOp>(sum, ctx.scalarLike(sum, 1.0 / p));
  return ctx.setOutput(0, y);
}

template <typename ReduceOpTy> LogicalResult importGlobalPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = NodeContext::rankOf(x);
  if (x && rank < 3)
    return ctx.invalid("input must be [N, C, D...]");
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  return ctx.setOutput(0, ctx.make<ReduceOpTy>(x, ctx.i64s(axes),
                                               ctx.b.getBoolAttr(true)));
}

LogicalResult importDropout(NodeContext &ctx) {
  Value x = ctx.input(0);
  // A seed for the mask's draw: ONNX leaves the generator to the runtime,
  // and inference draws nothing.
  ctx.attrsWithoutEffect({"seed"});
  if (ctx.training()) {
    // A training step draws the mask (kiln.dropout), whatever its
    // training_mode (input 2); the ratio is an attribute before opset 12,
    // a constant input from it (default 0.5).
    ctx.inputWithoutEffect(2);
    double ratio = 0.5;
    if (ctx.opset < 12) {
      ratio = ctx.floatAttr("ratio", 0.5f);
    } else if (ctx.hasInput(1)) {
      std::optional<SmallVector<double>> given = ctx.floatsInput(1, "ratio");
      if (!given)
        return failure();
      if (given->size() != 1)
        return ctx.invalid("ratio must be a scalar");
      ratio = (*given)[0];
    }
    if (!(ratio >= 0 && ratio < 1))
      return ctx.invalid("ratio must be in [0, 1)");
    if (ctx.outputUsed(1))
      return ctx.unsupported("the mask output of a Dropout in a training step");
    if (!x || ratio == 0)
      return ctx.setOutput(0, x);
    return ctx.setOutput(0, ctx.make<DropoutOp>(x, ctx.b.getF64FloatAttr(ratio)));
  }
  // Inference keeps every element, whatever the ratio (an attribute before
  // opset 12, input 1 from it); before opset 7, is_test = 0 asks for the
  // training form.
  if (ctx.opset < 12)
    ctx.attrsWithoutEffect({"ratio"});
  else
    ctx.inputWithoutEffect(1);
  if (ctx.opset < 7 && ctx.hasAttr("is_test") && ctx.intAttr("is_test", 0) == 0)
    return ctx.unsupported("is_test = 0 (Kiln compiles inference; kiln compile --train "
                           "compiles the training step)");
  // Training mode with a ratio of 0 drops nothing: the same as inference
  // (torch exports F.dropout(x, p=0.0) in eval mode that way).
  auto zeroRatio = [&] {
    if (!ctx.hasInput(1) || !ctx.isKnownInput(1) || !ctx.constantOf(ctx.optionalInput(1)))
      return false;
    std::optional<SmallVector<double>> ratio = ctx.floatsInput(1, "ratio");
    return ratio && ratio->size() == 1 && (*ratio)[0] == 0;
  };
  if (ctx.opset >= 12 && ctx.hasInput(2) && !ctx.isKnownInput(2)) {
    if (!zeroRatio())
      return ctx.unsupported("training_mode read at run time (Kiln compiles inference; a "
                             "Dropout that may train draws random masks)");
  } else if (ctx.opset >= 12 && ctx.hasInput(2)) {
    std::optional<SmallVector<int64_t>> training =
        ctx.intsInput(2, "training_mode");
    if (!training)
      return failure();
    if (!training->empty() && (*training)[0] != 0 && !zeroRatio())
      return ctx.unsupported("training_mode = true (Kiln compiles inference)");
  }
  if (ctx.hasOutput(1) && ctx.outputUsed(1)) {
    RankedTensorType type = NodeContext::typeOf(x);
    if (type && type.hasStaticShape()) {
      ctx.bindOutput(1, ctx.constant(DenseElementsAttr::get(
                           type.clone(ctx.b.getI1Type()), true)));
    } else if (type) {
      // All true over dims read at run time: one true row per dim, anded
      // (each broadcasts along its own dim).
      Value mask;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        Value row = compare(ctx, ComparePredicate::ge, iotaOfDim(ctx, x, d, type.getRank(), d),
                            i64Scalar(ctx, 0));
        mask = mask ? ctx.make<AndOp>(mask, row) : row;
      }
      ctx.bindOutput(1, mask);
    }
  }
  return ctx.setOutput(0, x);
}

LogicalResult importLRN(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  int64_t size = ctx.intAttr("size", 0);
  if (size <= 0)
    return ctx.invalid("size must be positive");
  double alpha = ctx.floatAttr("alpha", 1e-4f), beta = ctx.floatAttr("beta", 0.75f);
  double bias = ctx.floatAttr("bias", 1.0f);
  // Sum of squares over a channel window = size * avg_pool over channels.
  int64_t spatialSize = 1;
  for (int64_t d = 2; d < type.getRank(); ++d) {
    std::optional<int64_t> s = staticDim(ctx, x, d, "LRN");
    if (!s)
      return failure();
    spatialSize *= *s;
  }
  SmallVector<int64_t> originalShape = {0};
  for (int64_t d = 1; d < type.getRank(); ++d)
    originalShape.push_back(type.getDimSize(d));
  Value squares = ctx.make<MulOp>(x, x);
  Value planes = ctx.make<ReshapeOp>(
      squares, ctx.i64s({0, 1, type.getDimSize(1), spatialSize}));
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  Value mean = ctx.make<AvgPoolOp>(planes, ctx.i64s({size, 1}), ctx.i64s({1, 1}),
                                   ctx.i64s({lo, 0, hi, 0}), ctx.i64s({1, 1}),
                                   ctx.b.getBoolAttr(false),
                                   ctx.b.getBoolAttr(true));
  Value windowMean = ctx.make<ReshapeOp>(mean, ctx.i64s(originalShape));
  Value scale = ctx.make<AddOp>(
      ctx.make<MulOp>(windowMean, ctx.scalarLike(x, alpha)),
      ctx.scalarLike(x, bias));
  Value denominator = ctx.make<PowOp>(scale, ctx.scalarLike(x, beta));
  return ctx.setOutput(0, ctx.make<DivOp>(x, denominator));
}

} // namespace

void registerNNOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("MatMul", 1, any, importMatMul);
  r.add("Gemm", 1, any, importGemm);
  r.add("Conv", 1, any, importConv);
  r.add("ConvTranspose", 1, any, importConvTranspose);
  r.add("CausalConvWithState", 27, any, importCausalConvWithState);
  r.add("MaxPool", 1, any, importMaxPool);
  r.add("AveragePool", 1, any, importAveragePool);
  r.add("LpPool", 1, any, importLpPool);
  r.add("GlobalAveragePool", 1, any, importGlobalPool<ReduceMeanOp>);
  r.add("GlobalMaxPool", 1, any, importGlobalPool<ReduceMaxOp>);
  r.add("Dropout", 1, any, importDropout);
  r.add("LRN", 1, any, importLRN);
}

} // namespace kiln::onnx_frontend
