//===- ConvPoolRules.cpp - gradients of convolutions and pools ------------===//
//
// 2-D, NCHW, static shapes.
//   conv (groups 1, or depthwise: groups = channels):
//     dX = conv(pad(zeroStuff(dY, stride)), flip(W) with in/out swapped),
//     dW = conv(X with batch and channels swapped, dY likewise, dilation =
//          stride), cropped to the kernel;
//   max_pool: each window position (a, b) of the kernel routes dY to the
//     element that equals the max, the first in the window's row-major
//     order (as PyTorch's argmax), through strided slices and their
//     scatter back (zeroStuff + pad); windows that tile the input (kernel =
//     stride, no padding) work on the input viewed as [N, C, OH, KH, OW,
//     KW] instead: the least window index among the maxima (a min
//     reduction), then one select;
//   avg_pool: dY / count spread over every window position the same way
//     (count: the window's size, or its unpadded elements without
//     count_include_pad).
//   conv_transpose (any spatial rank): dX = conv(dY, W) with its own
//     stride, pads, dilation and groups; dW as conv's, input and output
//     swapped (groups 1).
// ceil_mode max pools: the last window's overhang is more padding that
// never wins. Dilated convolutions and pools and ceil_mode average pools
// are not supported yet: the rule says so.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "dialects/kiln/Utils/Builders.h"

#include <limits>

using namespace mlir;

namespace kiln::autodiff {
namespace {

using Grads = llvm::SmallVectorImpl<Value>;
constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

Value slice(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
            ArrayRef<int64_t> steps) {
  return SliceOp::create(b, loc, x, b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(ends),
                         b.getDenseI64ArrayAttr(steps));
}

Value pad(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
  llvm::SmallVector<int64_t> pads(low);
  pads.append(high.begin(), high.end());
  return padWith(b, loc, x, pads, 0.0);
}

Value reshape(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, typeOf(x).getElementType());
  return ReshapeOp::create(b, loc, type, x, b.getDenseI64ArrayAttr(shape));
}

Value transpose(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> perm) {
  return TransposeOp::create(b, loc, x, b.getDenseI64ArrayAttr(perm));
}

/// Pads (or crops, for a negative amount) the two spatial dims.
Value padOrCrop(OpBuilder &b, Location loc, Value x, int64_t top, int64_t left, int64_t bottom,
                int64_t right) {
  ArrayRef<int64_t> s = typeOf(x).getShape();
  if (top < 0 || left < 0 || bottom < 0 || right < 0) {
    x = slice(b, loc, x, {0, 0, std::max<int64_t>(-top, 0), std::max<int64_t>(-left, 0)},
              {kEnd, kEnd, s[2] - std::max<int64_t>(-bottom, 0), s[3] - std::max<int64_t>(-right, 0)},
              {1, 1, 1, 1});
    top = std::max<int64_t>(top, 0), left = std::max<int64_t>(left, 0);
    bottom = std::max<int64_t>(bottom, 0), right = std::max<int64_t>(right, 0);
  }
  if (top == 0 && left == 0 && bottom == 0 && right == 0)
    return x;
  return pad(b, loc, x, {0, 0, top, left}, {0, 0, bottom, right});
}

Value conv(OpBuilder &b, Location loc, Value input, Value weight, ArrayRef<int64_t> strides,
           ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations, int64_t groups) {
  return ConvOp::create(b, loc, input, weight, b.getDenseI64ArrayAttr(strides),
                        b.getDenseI64ArrayAttr(pads), b.getDenseI64ArrayAttr(dilations),
                        b.getI64IntegerAttr(groups));
}

LogicalResult ConvOpRule(ConvOp op, OpBuilder &b, ArrayRef<Value> g, Grads &out) {
  Location loc = op.getLoc();
  Value x = op.getInput(), w = op.getWeight(), dy = g[0];
  RankedTensorType xt = typeOf(x), wt = typeOf(w), yt = typeOf(op.getResult());
  if (xt.getRank() != 4 || !xt.hasStaticShape() || !wt.hasStaticShape() || !yt.hasStaticShape())
    return op.emitOpError("gradient of a convolution needs 2-D, static shapes for now");
  if (llvm::any_of(op.getDilations(), [](int64_t d) { return d != 1; }))
    return op.emitOpError("gradient of a dilated convolution is not supported yet");
  int64_t groups = op.getGroups();
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2), wd = xt.getDimSize(3);
  int64_t o = wt.getDimSize(0), kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  bool depthwise = groups == c && o == c && wt.getDimSize(1) == 1;
  if (groups != 1 && !depthwise)
    return op.emitOpError("gradient of a grouped convolution other than depthwise is not "
                          "supported yet");
  ArrayRef<int64_t> s = op.getStrides(), p = op.getPads(); // p: top, left, bottom, right
  // Input rows past the last window (the forward conv skipped them).
  int64_t extraH = (h + p[0] + p[2] - kh) % s[0], extraW = (wd + p[1] + p[3] - kw) % s[1];

  // dX: the transposed convolution.
  if (isDifferentiable(x)) {
    Value spread = zeroStuff(b, loc, dy, {s[0], s[1]});
    spread = padOrCrop(b, loc, spread, kh - 1 - p[0], kw - 1 - p[1], kh - 1 - p[2] + extraH,
                       kw - 1 - p[3] + extraW);
    Value flipped = slice(b, loc, w, {0, 0, -1, -1},
                          {kEnd, kEnd, std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::min()},
                          {1, 1, -1, -1});
    Value kernel = depthwise ? flipped : transpose(b, loc, flipped, {1, 0, 2, 3});
    out.push_back(conv(b, loc, spread, kernel, {1, 1}, {0, 0, 0, 0}, {1, 1}, groups));
  } else {
    out.push_back(Value());
  }
  // dW: correlate the input with dY over the batch.
  if (isDifferentiable(w)) {
    Value xT = transpose(b, loc, x, {1, 0, 2, 3});   // [C, N, H, W]
    Value dyT = transpose(b, loc, dy, {1, 0, 2, 3}); // [O, N, OH, OW]
    Value dw;
    if (depthwise) {
      Value input = reshape(b, loc, xT, {1, c * n, h, wd});
      dw = conv(b, loc, input, dyT, {1, 1}, p, s, c); // [1, C, kh+e, kw+e]
      dw = reshape(b, loc, dw, {c, 1, kh + extraH, kw + extraW});
    } else {
      dw = conv(b, loc, xT, dyT, {1, 1}, p, s, 1); // [C, O, kh+e, kw+e]
      dw = transpose(b, loc, dw, {1, 0, 2, 3});
    }
    if (extraH || extraW)
      dw = slice(b, loc, dw, {0, 0, 0, 0}, {kEnd, kEnd, kh, kw}, {1, 1, 1, 1});
    out.push_back(dw);
  } else {
    out.push_back(Value());
  }
  return success();
}

/// A transposed convolution is the adjoint of a convolution of its result
/// (stride, pads, dilation and groups its own, its weight [C, O/g, K...]
/// read as [C, O/g, K...] = [out, in/g, K...]), so dX is that convolution
/// of dY; dW correlates dY with X over the batch as ConvOpRule's dW, the
/// roles of input and output swapped. Any spatial rank; dW of a grouped
/// one is not supported yet.
LogicalResult ConvTransposeOpRule(ConvTransposeOp op, OpBuilder &b, ArrayRef<Value> g,
                                  Grads &out) {
  Location loc = op.getLoc();
  Value x = op.getInput(), w = op.getWeight(), dy = g[0];
  RankedTensorType xt = typeOf(x), wt = typeOf(w), yt = typeOf(op.getResult());
  if (!xt.hasStaticShape() || !yt.hasStaticShape())
    return op.emitOpError("gradient of a transposed convolution needs static shapes");
  int64_t groups = op.getGroups();
  ArrayRef<int64_t> s = op.getStrides(), p = op.getPads(), d = op.getDilations();
  if (isDifferentiable(x)) {
    Value dx = conv(b, loc, dy, w, s, p, d, groups);
    if (dx.getType() != xt)
      return op.emitOpError("gradient of a transposed convolution whose output padding is "
                            "not below its stride is not supported");
    out.push_back(dx);
  } else {
    out.push_back(Value());
  }
  if (isDifferentiable(w)) {
    if (groups != 1)
      return op.emitOpError("gradient of a grouped transposed convolution's weight is not "
                            "supported yet");
    int64_t rank = xt.getRank();
    llvm::SmallVector<int64_t> swap = {1, 0};
    for (int64_t i = 2; i < rank; ++i)
      swap.push_back(i);
    Value dyT = transpose(b, loc, dy, swap); // [O, N, E...]
    Value xT = transpose(b, loc, x, swap);   // [C, N, D...]
    // dW[c, o, k] = sum over n, i of X[n, c, i] dY[n, o, i * s + k * d - p]:
    // [O, C, K + extra...] (windows of dY at stride d, dilation s).
    Value dw = transpose(b, loc, conv(b, loc, dyT, xT, d, p, s, 1), swap);
    llvm::SmallVector<int64_t> zeros(rank, 0), ends(wt.getShape()), ones(rank, 1);
    if (typeOf(dw).getShape() != wt.getShape())
      dw = slice(b, loc, dw, zeros, ends, ones);
    out.push_back(dw);
  } else {
    out.push_back(Value());
  }
  return success();
}

/// What a pool's rule shares: checks, the padded input and the windows.
struct PoolGeometry {
  Location loc;
  Type elementType;
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw;
  llvm::SmallVector<int64_t> pads; // top, left, bottom, right
};

template <typename Op>
FailureOr<PoolGeometry> poolGeometry(Op op) {
  RankedTensorType xt = typeOf(op.getInput()), yt = typeOf(op.getResult());
  if (xt.getRank() != 4 || !xt.hasStaticShape() || !yt.hasStaticShape())
    return op.emitOpError("gradient of a pool needs 2-D, static shapes for now");
  if (llvm::any_of(op.getDilations(), [](int64_t d) { return d != 1; }))
    return op.emitOpError("gradient of a pool with dilations is not supported yet");
  // ceil_mode's last window reaches past the high padding: for a max pool
  // that is more padding no element of which wins; an average pool would
  // have to leave it out of its count.
  if (op.getCeilMode() && !isa<MaxPoolOp>(op.getOperation()))
    return op.emitOpError("gradient of an average pool with ceil_mode is not supported yet");
  PoolGeometry geo{op.getLoc(), xt.getElementType()};
  geo.n = xt.getDimSize(0), geo.c = xt.getDimSize(1), geo.h = xt.getDimSize(2);
  geo.w = xt.getDimSize(3), geo.oh = yt.getDimSize(2), geo.ow = yt.getDimSize(3);
  geo.kh = op.getKernelShape()[0], geo.kw = op.getKernelShape()[1];
  geo.sh = op.getStrides()[0], geo.sw = op.getStrides()[1];
  geo.pads.assign(op.getPads().begin(), op.getPads().end());
  if (op.getCeilMode()) {
    geo.pads[2] = std::max(geo.pads[2], (geo.oh - 1) * geo.sh + geo.kh - geo.h - geo.pads[0]);
    geo.pads[3] = std::max(geo.pads[3], (geo.ow - 1) * geo.sw + geo.kw - geo.w - geo.pads[1]);
  }
  return geo;
}

/// Elements of the (padded) input at window position (a, b) of every
/// window: [N, C, OH, OW].
Value windowElements(OpBuilder &b, Location loc, Value padded, const PoolGeometry &g, int64_t a,
                     int64_t bb) {
  return slice(b, loc, padded, {0, 0, a, bb},
               {kEnd, kEnd, a + (g.oh - 1) * g.sh + 1, bb + (g.ow - 1) * g.sw + 1},
               {1, 1, g.sh, g.sw});
}

/// `v` ([N, C, OH, OW], one value per window) put back at window position
/// (a, b) of the unpadded input: [N, C, H, W].
Value scatterBack(OpBuilder &b, Location loc, Value v, const PoolGeometry &g, int64_t a,
                  int64_t bb) {
  Value spread = zeroStuff(b, loc, v, {g.sh, g.sw});
  int64_t hp = g.h + g.pads[0] + g.pads[2], wp = g.w + g.pads[1] + g.pads[3];
  int64_t rows = (g.oh - 1) * g.sh + 1, cols = (g.ow - 1) * g.sw + 1;
  return padOrCrop(b, loc, spread, a - g.pads[0], bb - g.pads[1],
                   hp - a - rows - g.pads[2], wp - bb - cols - g.pads[3]);
}

Value sum(OpBuilder &b, Location loc, Value acc, Value v) {
  return acc ? Value(AddOp::create(b, loc, acc, v)) : v;
}

/// Windows that tile the input exactly (kernel = stride, no padding): the
/// input viewed as [N, C, OH, KH, OW, KW] has each window in dims 3 and 5.
bool tiles(const PoolGeometry &g) {
  return g.kh == g.sh && g.kw == g.sw && llvm::all_of(g.pads, [](int64_t p) { return p == 0; }) &&
         g.h == g.oh * g.kh && g.w == g.ow * g.kw;
}

LogicalResult MaxPoolOpRule(MaxPoolOp op, OpBuilder &b, ArrayRef<Value> grads, Grads &out) {
  FailureOr<PoolGeometry> geo = poolGeometry(op);
  if (failed(geo))
    return failure();
  const PoolGeometry &g = *geo;
  Location loc = g.loc;
  if (tiles(g)) {
    // On the input viewed as [N, C, OH, KH, OW, KW] (a reshape: no copy),
    // with each window position's row-major index p = a * KW + b: the
    // first maximum's index is the least p whose element equals the max,
    // and that element alone gets the window's gradient. Two broadcasting
    // elementwise passes and a reduction, no strided slices.
    RankedTensorType xt = typeOf(op.getInput());
    Value x6 = reshape(b, loc, op.getInput(), {g.n, g.c, g.oh, g.kh, g.ow, g.kw});
    Value y6 = reshape(b, loc, op.getResult(), {g.n, g.c, g.oh, 1, g.ow, 1});
    Value g6 = reshape(b, loc, grads[0], {g.n, g.c, g.oh, 1, g.ow, 1});
    llvm::SmallVector<Attribute> positions;
    for (int64_t a = 0; a < g.kh; ++a)
      for (int64_t bb = 0; bb < g.kw; ++bb)
        positions.push_back(b.getFloatAttr(g.elementType, double(a * g.kw + bb)));
    Value index = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({1, 1, 1, g.kh, 1, g.kw}, g.elementType),
                               positions));
    Value candidate = SelectOp::create(
        b, loc, CompareOp::create(b, loc, ComparePredicate::eq, x6, y6), index,
        scalar(b, loc, g.elementType, double(g.kh * g.kw)));
    Value first = ReduceMinOp::create(b, loc, candidate, b.getDenseI64ArrayAttr({3, 5}),
                                      b.getBoolAttr(true));
    Value dx6 = SelectOp::create(b, loc, CompareOp::create(b, loc, ComparePredicate::eq, index, first),
                                 g6, scalar(b, loc, g.elementType, 0.0));
    out.push_back(reshape(b, loc, dx6, xt.getShape()));
    return success();
  }
  // Padding never wins: pad with the lowest value.
  double lowest = -std::numeric_limits<double>::infinity();
  llvm::SmallVector<int64_t> pads = {0, 0, g.pads[0], g.pads[1], 0, 0, g.pads[2], g.pads[3]};
  Value padded = padWith(b, loc, op.getInput(), pads, lowest);
  Value y = op.getResult();
  Value one = scalar(b, loc, g.elementType, 1.0);
  Value taken; // windows whose max is already routed (float 0/1)
  Value dx;
  for (int64_t a = 0; a < g.kh; ++a)
    for (int64_t bb = 0; bb < g.kw; ++bb) {
      Value element = windowElements(b, loc, padded, g, a, bb);
      Value isMax = CastOp::create(
          b, loc, typeOf(y), CompareOp::create(b, loc, ComparePredicate::eq, element, y));
      // The first max of each window only.
      Value route = taken ? Value(MulOp::create(b, loc, isMax, SubOp::create(b, loc, one, taken)))
                          : isMax;
      taken = taken ? Value(MaxOp::create(b, loc, taken, isMax)) : isMax;
      dx = sum(b, loc, dx, scatterBack(b, loc, MulOp::create(b, loc, route, grads[0]), g, a, bb));
    }
  out.push_back(dx);
  return success();
}

LogicalResult AvgPoolOpRule(AvgPoolOp op, OpBuilder &b, ArrayRef<Value> grads, Grads &out) {
  FailureOr<PoolGeometry> geo = poolGeometry(op);
  if (failed(geo))
    return failure();
  const PoolGeometry &g = *geo;
  Location loc = g.loc;
  Value share;
  bool anyPad = llvm::any_of(g.pads, [](int64_t p) { return p != 0; });
  if (op.getCountIncludePad() || !anyPad) {
    share = MulOp::create(b, loc, grads[0],
                          scalar(b, loc, g.elementType, 1.0 / (g.kh * g.kw)));
  } else {
    // Each window's count of real elements: the same windows over ones
    // padded with zeros.
    Value ones = filled(b, loc, typeOf(op.getInput()), 1.0);
    Value padded = pad(b, loc, ones, {0, 0, g.pads[0], g.pads[1]}, {0, 0, g.pads[2], g.pads[3]});
    Value count;
    for (int64_t a = 0; a < g.kh; ++a)
      for (int64_t bb = 0; bb < g.kw; ++bb)
        count = sum(b, loc, count, windowElements(b, loc, padded, g, a, bb));
    share = DivOp::create(b, loc, grads[0], count);
  }
  if (tiles(g)) {
    Value share6 = reshape(b, loc, share, {g.n, g.c, g.oh, 1, g.ow, 1});
    auto type = RankedTensorType::get({g.n, g.c, g.oh, g.kh, g.ow, g.kw}, g.elementType);
    Value spread6 = ExpandOp::create(b, loc, type, share6, b.getDenseI64ArrayAttr(type.getShape()));
    out.push_back(reshape(b, loc, spread6, {g.n, g.c, g.h, g.w}));
    return success();
  }
  Value dx;
  for (int64_t a = 0; a < g.kh; ++a)
    for (int64_t bb = 0; bb < g.kw; ++bb)
      dx = sum(b, loc, dx, scatterBack(b, loc, share, g, a, bb));
  out.push_back(dx);
  return success();
}

} // namespace

void registerConvPoolRules(MLIRContext *context) {
  ConvOp::attachInterface<RuleModel<ConvOp, ConvOpRule>>(*context);
  ConvTransposeOp::attachInterface<RuleModel<ConvTransposeOp, ConvTransposeOpRule>>(*context);
  MaxPoolOp::attachInterface<RuleModel<MaxPoolOp, MaxPoolOpRule>>(*context);
  AvgPoolOp::attachInterface<RuleModel<AvgPoolOp, AvgPoolOpRule>>(*context);
}

} // namespace kiln::autodiff
