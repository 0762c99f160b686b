//===- ContractionToLinalg.cpp - matmul, conv, pooling -> linalg.generic --===//
//
// The generic fallback for the compute-heavy ops: one linalg.generic each
// (a contraction for matmul and convolution, a window reduction for
// pooling). A backend that has a library for these (oneDNN, cuDNN) claims
// them before this lowering runs; these loop nests keep every model
// compilable and serve as the reference.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

using lowering::accumulatorOf;
using lowering::dimOf;
using lowering::roundTo;
using lowering::lowestValue;
using lowering::scalarConstant;

Value addOrOr(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType()) ? Value(arith::AddFOp::create(b, loc, x, y))
                                     : Value(arith::AddIOp::create(b, loc, x, y));
}

Value mulOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType()) ? Value(arith::MulFOp::create(b, loc, x, y))
                                     : Value(arith::MulIOp::create(b, loc, x, y));
}

/// A zero-filled tensor of `type`; dynamic dims sized by `dynamicSizes`.
Value zeros(OpBuilder &b, Location loc, RankedTensorType type,
            ValueRange dynamicSizes, double value = 0) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType(), dynamicSizes);
  return linalg::FillOp::create(b, loc, scalarConstant(b, loc, type.getElementType(), value),
                                empty)
      .getResult(0);
}

/// acc + x * y, the operands widened to the accumulator's type.
Value multiplyAdd(OpBuilder &b, Location loc, Value acc, Value x, Value y) {
  Type type = acc.getType();
  auto widen = [&](Value v) {
    return v.getType() == type ? v : Value(arith::ExtFOp::create(b, loc, type, v));
  };
  return addOrOr(b, loc, acc, mulOf(b, loc, widen(x), widen(y)));
}

struct MatmulToGeneric : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &b) const override {
    if (op->hasAttr(KilnDialect::LibraryCallAttrHelper::getNameStr()))
      return b.notifyMatchFailure(op, "claimed by a library");
    Location loc = op.getLoc();
    RankedTensorType lhsType = op.getLhs().getType(), rhsType = op.getRhs().getType();
    RankedTensorType type = op.getType();
    int64_t batch = type.getRank() - 2, rank = type.getRank() + 1; // + k
    auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
    auto operandMap = [&](RankedTensorType t, AffineExpr last2, AffineExpr last1) {
      SmallVector<AffineExpr> exprs;
      int64_t offset = batch - (t.getRank() - 2);
      for (int64_t i = 0; i < t.getRank() - 2; ++i) {
        bool stretched = t.getDimSize(i) == 1 && type.getDimSize(i + offset) != 1;
        exprs.push_back(stretched ? b.getAffineConstantExpr(0) : d(i + offset));
      }
      exprs.push_back(last2);
      exprs.push_back(last1);
      return AffineMap::get(rank, 0, exprs, b.getContext());
    };
    SmallVector<AffineMap> maps = {
        operandMap(lhsType, d(batch), d(batch + 2)),
        operandMap(rhsType, d(batch + 2), d(batch + 1))};
    SmallVector<AffineExpr> out;
    for (int64_t i = 0; i < batch + 2; ++i)
      out.push_back(d(i));
    maps.push_back(AffineMap::get(rank, 0, out, b.getContext()));
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (!type.isDynamicDim(i))
        continue;
      if (i == batch) {
        dynamicSizes.push_back(dimOf(b, loc, op.getLhs(), lhsType.getRank() - 2));
      } else if (i == batch + 1) {
        dynamicSizes.push_back(dimOf(b, loc, op.getRhs(), rhsType.getRank() - 1));
      } else {
        // A batch dim: from whichever operand has it dynamic.
        Value size;
        for (auto [v, t] : {std::pair(op.getLhs(), lhsType), std::pair(op.getRhs(), rhsType)}) {
          int64_t j = i - (batch - (t.getRank() - 2));
          if (j >= 0 && t.isDynamicDim(j)) {
            size = tensor::DimOp::create(b, loc, v, j);
            break;
          }
        }
        if (!size)
          return kiln::lowering::refuse(b, op, "cannot size a batch dim");
        dynamicSizes.push_back(size);
      }
    }
    // The dim summed over: where either operand's is known only at run
    // time, both must agree then (a flattened image of another size: the
    // run stops rather than read past the weight).
    int64_t lhsK = lhsType.getRank() - 1, rhsK = rhsType.getRank() - 2;
    if (lhsType.isDynamicDim(lhsK) || rhsType.isDynamicDim(rhsK)) {
      Value agree = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          dimOf(b, loc, op.getLhs(), lhsK),
                                          dimOf(b, loc, op.getRhs(), rhsK));
      lowering::checkAtRunTime(b, loc, agree, lowering::kContractedDims);
    }
    SmallVector<utils::IteratorType> iterators(rank - 1, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto accType = type.clone(accumulatorOf(b, type.getElementType()));
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{accType}, ValueRange{op.getLhs(), op.getRhs()},
        ValueRange{zeros(b, loc, accType, dynamicSizes)}, maps, iterators,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          linalg::YieldOp::create(nb, nl, multiplyAdd(nb, nl, a[2], a[0], a[1]));
        });
    b.replaceOp(op, roundTo(b, loc, generic.getResult(0), type));
    return success();
  }
};

/// Pads the spatial dims (from 2) of `x` by `low` / `high` with `value`.
/// `x` padded over its spatial dims (from dim 2) by `low` and `high`,
/// each a constant or, for a high padding, a size known at run time.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                 ArrayRef<OpFoldResult> high, double value) {
  auto isZero = [](OpFoldResult p) {
    std::optional<int64_t> c = getConstantIntValue(p);
    return c && *c == 0;
  };
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) && llvm::all_of(high, isZero))
    return x;
  SmallVector<OpFoldResult> lo = {b.getIndexAttr(0), b.getIndexAttr(0)},
                            hi = {b.getIndexAttr(0), b.getIndexAttr(0)};
  for (auto [l, h] : llvm::zip(low, high)) {
    lo.push_back(b.getIndexAttr(l));
    hi.push_back(h);
  }
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  return tensor::PadOp::create(b, loc, Type(), x, lo, hi,
                               scalarConstant(b, loc, element, value));
}

Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high, double value) {
  SmallVector<OpFoldResult> hi;
  for (int64_t h : high)
    hi.push_back(b.getIndexAttr(h));
  return padSpatial(b, loc, x, low, hi, value);
}

/// The number of windows along dim `d` of `padded` (padding applied): of
/// `kernel` taps `dilation` apart, every `stride`; at least 0. For dims
/// known only at run time (a static dim gives a constant).
Value windowCount(OpBuilder &b, Location loc, Value padded, int64_t d, int64_t kernel,
                  int64_t stride, int64_t dilation) {
  return lowering::windowCount(b, loc, dimOf(b, loc, padded, d), 0, 0,
                               (kernel - 1) * dilation + 1, stride, false);
}

struct ConvToGeneric : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op, PatternRewriter &b) const override {
    if (op->hasAttr(KilnDialect::LibraryCallAttrHelper::getNameStr()))
      return b.notifyMatchFailure(op, "claimed by a library");
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType(), wType = op.getWeight().getType();
    RankedTensorType type = op.getType();
    int64_t spatial = inType.getRank() - 2;
    int64_t groups = static_cast<int64_t>(op.getGroups());
    int64_t channels = inType.getDimSize(1), outChannels = wType.getDimSize(0);
    // The output channels (weight dim 0) may be known only at run time.
    if (ShapedType::isDynamic(channels) ||
        llvm::any_of(wType.getShape().drop_front(), ShapedType::isDynamic))
      return kiln::lowering::refuse(b, op, "input channels or a kernel size known only at run time are not lowered yet");
    int64_t groupOut = ShapedType::isDynamic(outChannels) ? outChannels : outChannels / groups;
    // Then each group's: weight dim 0 / groups.
    Value groupOutSize;
    if (ShapedType::isDynamic(outChannels)) {
      groupOutSize = dimOf(b, loc, op.getWeight(), 0);
      if (groups != 1)
        groupOutSize = arith::DivUIOp::create(
            b, loc, groupOutSize, arith::ConstantIndexOp::create(b, loc, groups));
    }
    ArrayRef<int64_t> pads = op.getPads();
    Value padded = padSpatial(b, loc, op.getInput(), pads.take_front(spatial),
                              pads.drop_front(spatial), 0);
    // Spatial dims known only at run time: the output's counted from the
    // padded input's.
    SmallVector<Value> spatialSizes;
    for (int64_t i = 0; i < spatial; ++i)
      if (type.isDynamicDim(i + 2))
        spatialSizes.push_back(windowCount(b, loc, padded, i + 2, wType.getDimSize(i + 2),
                                           op.getStrides()[i], op.getDilations()[i]));
    // [N, C, D...] -> [N, G, C/G, D...]; [O, C/G, K...] -> [G, O/G, C/G, K...].
    auto paddedType = cast<RankedTensorType>(padded.getType());
    SmallVector<int64_t> inShape = {paddedType.getDimSize(0), groups, channels / groups};
    SmallVector<int64_t> wShape = {groups, groupOut, wType.getDimSize(1)};
    SmallVector<int64_t> outShape = {type.getDimSize(0), groups, groupOut};
    SmallVector<ReassociationIndices> split = {{0}, {1, 2}};
    SmallVector<ReassociationIndices> wSplit = {{0, 1}, {2}};
    for (int64_t i = 0; i < spatial; ++i) {
      inShape.push_back(paddedType.getDimSize(i + 2));
      wShape.push_back(wType.getDimSize(i + 2));
      outShape.push_back(type.getDimSize(i + 2));
      split.push_back({3 + i});
      wSplit.push_back({3 + i});
    }
    SmallVector<OpFoldResult> inSizes;
    for (int64_t i = 0; i < (int64_t)inShape.size(); ++i)
      inSizes.push_back(!ShapedType::isDynamic(inShape[i])
                            ? OpFoldResult(b.getIndexAttr(inShape[i]))
                            : OpFoldResult(dimOf(b, loc, padded, i == 0 ? 0 : i - 1)));
    auto inGrouped = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(inShape, inType.getElementType()), padded, split, inSizes);
    SmallVector<OpFoldResult> wSizes;
    for (int64_t i = 0; i < (int64_t)wShape.size(); ++i)
      wSizes.push_back(ShapedType::isDynamic(wShape[i]) ? OpFoldResult(groupOutSize)
                                                        : OpFoldResult(b.getIndexAttr(wShape[i])));
    auto wGrouped = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(wShape, wType.getElementType()), op.getWeight(), wSplit,
        wSizes);
    // Iteration: n, g, o', e..., c', k...
    int64_t rank = 3 + 2 * spatial + 1;
    auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
    SmallVector<AffineExpr> inExprs = {d(0), d(1), d(3 + spatial)};
    SmallVector<AffineExpr> wExprs = {d(1), d(2), d(3 + spatial)};
    SmallVector<AffineExpr> outExprs = {d(0), d(1), d(2)};
    for (int64_t i = 0; i < spatial; ++i) {
      AffineExpr e = d(3 + i), k = d(4 + spatial + i);
      inExprs.push_back(e * op.getStrides()[i] + k * op.getDilations()[i]);
      wExprs.push_back(k);
      outExprs.push_back(e);
    }
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, inExprs, b.getContext()),
                                   AffineMap::get(rank, 0, wExprs, b.getContext()),
                                   AffineMap::get(rank, 0, outExprs, b.getContext())};
    SmallVector<utils::IteratorType> iterators(3 + spatial, utils::IteratorType::parallel);
    iterators.append(1 + spatial, utils::IteratorType::reduction);
    auto outGroupedType = RankedTensorType::get(outShape, type.getElementType());
    auto accType = outGroupedType.clone(accumulatorOf(b, type.getElementType()));
    SmallVector<Value> dynamicSizes;
    if (outGroupedType.isDynamicDim(0))
      dynamicSizes.push_back(dimOf(b, loc, op.getInput(), 0));
    if (outGroupedType.isDynamicDim(2))
      dynamicSizes.push_back(groupOutSize);
    dynamicSizes.append(spatialSizes);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{accType}, ValueRange{inGrouped, wGrouped},
        ValueRange{zeros(b, loc, accType, dynamicSizes)}, maps, iterators,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          linalg::YieldOp::create(nb, nl, multiplyAdd(nb, nl, a[2], a[0], a[1]));
        });
    SmallVector<ReassociationIndices> merge = {{0}, {1, 2}};
    for (int64_t i = 0; i < spatial; ++i)
      merge.push_back({3 + i});
    b.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, type, roundTo(b, loc, generic.getResult(0), outGroupedType), merge);
    return success();
  }
};

/// Sums (or maxes) every window of `x` ([N, C, D...] already padded) into
/// a tensor of `type`.
Value windowReduce(OpBuilder &b, Location loc, Value x, RankedTensorType type,
                   ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                   ArrayRef<int64_t> dilations, bool isMax, Value outSource) {
  int64_t spatial = kernel.size();
  int64_t rank = 2 + 2 * spatial;
  auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs = {d(0), d(1)}, outExprs = {d(0), d(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(d(2 + i) * strides[i] + d(2 + spatial + i) * dilations[i]);
    outExprs.push_back(d(2 + i));
  }
  // The kernel's extent comes from a shape-only operand (the window).
  Type element = type.getElementType();
  Value window = tensor::EmptyOp::create(b, loc, kernel, element);
  SmallVector<AffineExpr> kExprs;
  for (int64_t i = 0; i < spatial; ++i)
    kExprs.push_back(d(2 + spatial + i));
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, inExprs, b.getContext()),
                                 AffineMap::get(rank, 0, kExprs, b.getContext()),
                                 AffineMap::get(rank, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(2 + spatial, utils::IteratorType::parallel);
  iterators.append(spatial, utils::IteratorType::reduction);
  double init = isMax ? lowestValue(element) : 0;
  SmallVector<Value> dynamicSizes;
  for (int64_t i = 0; i < 2; ++i)
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, outSource, i));
  for (int64_t i = 0; i < spatial; ++i)
    if (type.isDynamicDim(i + 2))
      dynamicSizes.push_back(windowCount(b, loc, x, i + 2, kernel[i], strides[i], dilations[i]));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{x, window},
      ValueRange{zeros(b, loc, type, dynamicSizes, init)}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value r;
        if (!isMax)
          r = addOrOr(nb, nl, a[2], a[0]);
        else if (isa<FloatType>(element))
          r = arith::MaximumFOp::create(nb, nl, a[2], a[0]);
        else if (element.isUnsignedInteger())
          r = arith::MaxUIOp::create(nb, nl, a[2], a[0]);
        else
          r = arith::MaxSIOp::create(nb, nl, a[2], a[0]);
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

/// Extra high padding so that ceil-mode windows stay inside the input.
/// (The explicit high pads plus this extra are the pads a pool applies.)
/// Over a dim known only at run time the extra is computed then from
/// ONNX's ceil-mode count (lowering::windowCount): what the last window
/// reaches beyond the padded input. Without
/// ceil mode the windows never pass the padded input.
SmallVector<OpFoldResult> ceilExtra(OpBuilder &b, Location loc, Value input,
                                    RankedTensorType out, ArrayRef<int64_t> kernel,
                                    ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                                    ArrayRef<int64_t> dilations, bool ceilMode) {
  auto in = cast<RankedTensorType>(input.getType());
  int64_t spatial = kernel.size();
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  SmallVector<OpFoldResult> extra;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t extent = (kernel[i] - 1) * dilations[i] + 1, padding = pads[i] + pads[i + spatial];
    if (!in.isDynamicDim(i + 2) && !out.isDynamicDim(i + 2)) {
      int64_t needed = (out.getDimSize(i + 2) - 1) * strides[i] + extent;
      extra.push_back(b.getIndexAttr(
          std::max<int64_t>(0, needed - in.getDimSize(i + 2) - padding)));
      continue;
    }
    if (!ceilMode) {
      extra.push_back(b.getIndexAttr(0));
      continue;
    }
    Value size = dimOf(b, loc, input, i + 2);
    Value count = lowering::windowCount(b, loc, size, pads[i], pads[i + spatial], extent,
                                        strides[i], true);
    Value have = arith::AddIOp::create(b, loc, size, index(padding));
    Value needed = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, count, index(1)),
                              index(strides[i])),
        index(extent));
    extra.push_back(arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, needed, have),
                                           index(0))
                        .getResult());
  }
  return extra;
}

/// Explicit pads `pads` plus extra pads `extra`, each a constant or a
/// size known at run time.
SmallVector<OpFoldResult> plus(OpBuilder &b, Location loc, ArrayRef<int64_t> pads,
                               ArrayRef<OpFoldResult> extra) {
  SmallVector<OpFoldResult> sum;
  for (auto [p, e] : llvm::zip(pads, extra)) {
    if (std::optional<int64_t> c = getConstantIntValue(e)) {
      sum.push_back(b.getIndexAttr(p + *c));
      continue;
    }
    sum.push_back(arith::AddIOp::create(b, loc, cast<Value>(e),
                                        arith::ConstantIndexOp::create(b, loc, p))
                      .getResult());
  }
  return sum;
}

struct MaxPoolToGeneric : OpRewritePattern<MaxPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPoolOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    int64_t spatial = op.getKernelShape().size();
    ArrayRef<int64_t> pads = op.getPads();
    SmallVector<OpFoldResult> extra =
        ceilExtra(b, loc, op.getInput(), op.getType(), op.getKernelShape(), op.getStrides(),
                  pads, op.getDilations(), op.getCeilMode());
    SmallVector<OpFoldResult> high = plus(b, loc, pads.drop_front(spatial), extra);
    Value padded = padSpatial(b, loc, op.getInput(), pads.take_front(spatial), high,
                              lowestValue(op.getType().getElementType()));
    b.replaceOp(op, windowReduce(b, loc, padded, op.getType(), op.getKernelShape(),
                                 op.getStrides(), op.getDilations(), true, op.getInput()));
    return success();
  }
};

struct AvgPoolToGeneric : OpRewritePattern<AvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    RankedTensorType in = op.getInput().getType();
    int64_t spatial = op.getKernelShape().size();
    ArrayRef<int64_t> pads = op.getPads();
    SmallVector<OpFoldResult> extra =
        ceilExtra(b, loc, op.getInput(), op.getType(), op.getKernelShape(), op.getStrides(),
                  pads, op.getDilations(), op.getCeilMode());
    SmallVector<int64_t> low(pads.take_front(spatial)), high(pads.drop_front(spatial));
    SmallVector<OpFoldResult> highAll = plus(b, loc, high, extra);
    Value padded = padSpatial(b, loc, op.getInput(), low, highAll, 0);
    Value sums = windowReduce(b, loc, padded, op.getType(), op.getKernelShape(),
                              op.getStrides(), op.getDilations(), false, op.getInput());
    // The divisor of every window: count the positions that are real input
    // (or explicit padding, with count_include_pad), never the ceil-mode
    // overflow.
    Type element = in.getElementType();
    SmallVector<int64_t> ones = {1, 1};
    for (int64_t i = 0; i < spatial; ++i)
      ones.push_back(in.getDimSize(i + 2));
    auto onesType = RankedTensorType::get(ones, element);
    SmallVector<Value> inSizes;
    for (int64_t i = 0; i < spatial; ++i)
      if (in.isDynamicDim(i + 2))
        inSizes.push_back(dimOf(b, loc, op.getInput(), i + 2));
    Value mask = zeros(b, loc, onesType, inSizes, 1);
    double padValue = op.getCountIncludePad() ? 1 : 0;
    mask = padSpatial(b, loc, mask, low, high, padValue);
    mask = padSpatial(b, loc, mask, SmallVector<int64_t>(spatial, 0), extra, 0);
    SmallVector<int64_t> countShape = {1, 1};
    for (int64_t i = 0; i < spatial; ++i)
      countShape.push_back(op.getType().getDimSize(i + 2));
    Value counts = windowReduce(b, loc, mask, RankedTensorType::get(countShape, element),
                                op.getKernelShape(), op.getStrides(), op.getDilations(),
                                false, mask);
    FailureOr<Value> mean = lowering::buildBroadcastGeneric(
        b, loc, op.getType(), ValueRange{sums, counts},
        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::DivFOp::create(nb, nl, a[0], a[1]);
        });
    if (failed(mean))
      return failure();
    b.replaceOp(op, *mean);
    return success();
  }
};

} // namespace

Value lowering::windowCount(OpBuilder &b, Location loc, Value size, int64_t low, int64_t high,
                            int64_t extent, int64_t stride, bool ceil) {
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  int64_t padding = low + high;
  Value padded = padding ? arith::AddIOp::create(b, loc, size, index(padding)).getResult() : size;
  Value reach = arith::SubIOp::create(b, loc, padded, index(extent));
  Value steps = ceil ? arith::CeilDivSIOp::create(b, loc, reach, index(stride)).getResult()
                     : arith::FloorDivSIOp::create(b, loc, reach, index(stride)).getResult();
  Value count = arith::AddIOp::create(b, loc, steps, index(1));
  if (ceil) {
    // The last window starts at (count - 1) * stride: inside the input or
    // the low padding, or it is dropped.
    Value lastStart = arith::MulIOp::create(
        b, loc, arith::SubIOp::create(b, loc, count, index(1)), index(stride));
    Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lastStart,
                                       arith::AddIOp::create(b, loc, size, index(low)));
    count = arith::SelectOp::create(b, loc, past,
                                    arith::SubIOp::create(b, loc, count, index(1)), count);
  }
  return arith::MaxSIOp::create(b, loc, count, index(0));
}

void populateContractionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulToGeneric, ConvToGeneric, MaxPoolToGeneric, AvgPoolToGeneric>(
      patterns.getContext());
}

} // namespace kiln
