//===- ReshapesToLinalg.cpp - kiln reshapes -> tensor reshapes -----------===//
//
// reshape -> expand into a common refinement of both shapes + collapse (or,
// with none, collapse to 1-D + expand); dynamic_reshape -> its shape
// resolved and checked, then tensor.reshape by a shape tensor.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

using lowering::dimOf;
using lowering::elementCount;
using lowering::extractIndex;

/// `type` collapsed to one dim: dynamic when any dim is (even beside a
/// static 0, which buffers' collapse_shape requires).
RankedTensorType flatType(RankedTensorType type) {
  return RankedTensorType::get({type.hasStaticShape() ? type.getNumElements() : ShapedType::kDynamic},
                               type.getElementType());
}

/// A reshape's -1: `total` / `known` (the product of the other sizes), and 0
/// when that product is 0 (a zero-size tensor, whose -1 nothing decides; an
/// unsigned division by zero would trap).
Value inferredSize(OpBuilder &b, Location loc, Value total, Value known) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value knownZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, known, zero);
  Value quotient = arith::DivUIOp::create(
      b, loc, total, arith::SelectOp::create(b, loc, knownZero, one, known));
  return arith::SelectOp::create(b, loc, knownZero, zero, quotient);
}

/// `input` collapsed to one dim (of flatType); one of rank 0 or 1 as it is.
Value collapseToOneDim(OpBuilder &b, Location loc, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() <= 1)
    return input;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return tensor::CollapseShapeOp::create(b, loc, flatType(type), input, all);
}

/// A reshape as an expansion of the input into a common refinement of both
/// shapes (each input dim the product of consecutive refined dims) and a
/// collapse of that into the result (each result dim so too). Unlike a
/// collapse to one dim, the expansion stays a view of a strided input (a
/// slice of a fused QKV projection), and the collapse can fold into the
/// consumer (a transpose becomes one of more dims), so nothing is copied.
/// Refined dims are static factors where dims are split; a dynamic one is a
/// whole input or result dim. Empty when no such refinement is found (the
/// caller collapses to one dim).
struct Refinement {
  SmallVector<int64_t> shape;
  /// Where a dynamic refined dim's size comes from: input dim d (d >= 0) or
  /// result dim -1 - d.
  SmallVector<int64_t> source;
  SmallVector<ReassociationIndices> inGroups, outGroups;
};

std::optional<Refinement> refineReshape(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                                        ArrayRef<int64_t> spec) {
  constexpr int64_t kDyn = ShapedType::kDynamic;
  int64_t n = in.size(), m = out.size();
  if (n == 0 || m == 0 || llvm::is_contained(in, 0) || llvm::is_contained(out, 0))
    return std::nullopt;
  // The same whole dim: equal static sizes, or a result dim copied (0) from
  // the input dim at its position.
  auto same = [&](int64_t i, int64_t o) {
    if (in[i] != kDyn || out[o] != kDyn)
      return in[i] == out[o];
    return i == o && spec[o] == 0;
  };
  // Refined dims in order, each with its input and result dim.
  struct Factor {
    int64_t size, source, inDim, outDim;
  };
  SmallVector<Factor> front, back;
  int64_t l = 0;
  for (; l < n && l < m && same(l, l); ++l)
    front.push_back({in[l], l, l, l});
  // From the innermost dims: whole dims matched, static ones split.
  int64_t i = n - 1, o = m - 1, restIn = i >= l ? in[i] : 1, restOut = o >= l ? out[o] : 1;
  bool partIn = false, partOut = false;
  while (i >= l && o >= l) {
    if (!partIn && !partOut && same(i, o)) {
      back.push_back({in[i], i, i, o});
      restIn = restOut = 1;
    } else if (restIn != kDyn && restOut != kDyn &&
               (restIn % restOut == 0 || restOut % restIn == 0)) {
      int64_t factor = std::min(restIn, restOut);
      back.push_back({factor, 0, i, o});
      restIn /= factor;
      restOut /= factor;
    } else {
      break;
    }
    // A dim all of whose factors are taken is done.
    partIn = restIn != 1;
    if (!partIn && --i >= l)
      restIn = in[i];
    partOut = restOut != 1;
    if (!partOut && --o >= l)
      restOut = out[o];
  }
  // What is left between: one side a single dim (or the rest of one) made of
  // the other side's dims.
  SmallVector<Factor> middle;
  if (i >= l && o == l) {
    for (int64_t d = l; d <= i; ++d)
      middle.push_back({d == i ? restIn : in[d], d, d, o});
  } else if (i == l && o >= l) {
    for (int64_t d = l; d <= o; ++d)
      middle.push_back({d == o ? restOut : out[d], -1 - d, i, d});
  } else if (i >= l || o >= l) {
    return std::nullopt;
  }
  Refinement r;
  SmallVector<Factor> all(front);
  all.append(middle);
  all.append(back.rbegin(), back.rend());
  r.inGroups.resize(n);
  r.outGroups.resize(m);
  for (auto [k, f] : llvm::enumerate(all)) {
    r.shape.push_back(f.size);
    r.source.push_back(f.source);
    r.inGroups[f.inDim].push_back(k);
    r.outGroups[f.outDim].push_back(k);
  }
  // Each group a run of refined dims, static with the product of its dim's
  // static size, or a dynamic dim of exactly one dynamic factor (of its own
  // size: the expansion's and the collapse's types must be the operands').
  auto consistent = [&](ArrayRef<ReassociationIndices> groups, ArrayRef<int64_t> dims,
                        bool expand) {
    for (auto [d, group] : llvm::enumerate(groups)) {
      if (group.empty())
        return false;
      int64_t product = 1, dynamic = 0;
      for (int64_t k : group) {
        if (r.shape[k] == kDyn)
          ++dynamic;
        else
          product *= r.shape[k];
      }
      if (dims[d] != kDyn ? dynamic != 0 || product != dims[d]
                          : dynamic == 0 || (expand && dynamic > 1))
        return false;
    }
    return true;
  };
  if (!consistent(r.inGroups, in, true) || !consistent(r.outGroups, out, false))
    return std::nullopt;
  return r;
}

struct ReshapeToTensor : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    RankedTensorType inType = op.getInput().getType(), outType = op.getType();
    // Result sizes: static, copied (0) or inferred (-1) from the count.
    SmallVector<OpFoldResult> sizes;
    Value total = elementCount(rewriter, loc, input);
    Value known = arith::ConstantIndexOp::create(rewriter, loc, 1);
    int64_t inferred = -1;
    ArrayRef<int64_t> spec = op.getShape();
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      if (!outType.isDynamicDim(d)) {
        sizes.push_back(rewriter.getIndexAttr(outType.getDimSize(d)));
        known = arith::MulIOp::create(rewriter, loc, known,
                                      arith::ConstantIndexOp::create(rewriter, loc, outType.getDimSize(d)));
      } else if (spec[d] == 0) {
        Value size = dimOf(rewriter, loc, input, d);
        sizes.push_back(size);
        known = arith::MulIOp::create(rewriter, loc, known, size);
      } else {
        inferred = d;
        sizes.push_back(OpFoldResult());
      }
    }
    if (inferred >= 0)
      sizes[inferred] = inferredSize(rewriter, loc, total, known);
    // Through a common refinement where there is one (a dynamic input of a
    // static result has its count checked below instead).
    if (inType.hasStaticShape() || !outType.hasStaticShape()) {
      if (std::optional<Refinement> r =
              refineReshape(inType.getShape(), outType.getShape(), spec)) {
        Value refined = input;
        if (r->shape.size() != size_t(inType.getRank())) {
          SmallVector<OpFoldResult> refinedSizes;
          for (auto [size, source] : llvm::zip(r->shape, r->source))
            refinedSizes.push_back(size != ShapedType::kDynamic ? rewriter.getIndexAttr(size)
                                   : source >= 0 ? OpFoldResult(dimOf(rewriter, loc, input, source))
                                                 : sizes[-1 - source]);
          refined = tensor::ExpandShapeOp::create(
              rewriter, loc, RankedTensorType::get(r->shape, inType.getElementType()), input,
              r->inGroups, refinedSizes);
        }
        if (r->shape.size() != size_t(outType.getRank()))
          rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, outType, refined,
                                                               r->outGroups);
        else
          rewriter.replaceOp(op, refined);
        return success();
      }
    }
    // Collapse to one dim, then expand into the result.
    Value flat = collapseToOneDim(rewriter, loc, input);
    // A static result of a dynamic input: its element count is checked when
    // the model runs (a mismatch stops the run with a shape error), then the
    // flat tensor is known to hold exactly that many.
    if (!inType.hasStaticShape() && outType.hasStaticShape()) {
      Value want = arith::ConstantIndexOp::create(rewriter, loc, outType.getNumElements());
      lowering::checkAtRunTime(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, total, want),
          lowering::kReshapeCount);
      flat = tensor::CastOp::create(
          rewriter, loc, RankedTensorType::get({outType.getNumElements()}, inType.getElementType()),
          flat);
    }
    if (outType.getRank() == 0) {
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, outType, flat,
                                                           ArrayRef<ReassociationIndices>{});
      return success();
    }
    SmallVector<ReassociationIndices> groups(1);
    if (inType.getRank() == 0)
      groups.clear();
    else
      for (int64_t d = 0; d < outType.getRank(); ++d)
        groups[0].push_back(d);
    if (outType.getRank() == 1 && inType.getRank() == 1) {
      rewriter.replaceOpWithNewOp<tensor::CastOp>(op, outType, flat);
      return success();
    }
    if (outType.getNumDynamicDims() <= 1) {
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, outType, flat, groups, sizes);
      return success();
    }
    // Several dynamic dims in one expanded group are beyond what memref
    // lowering handles (it needs their product's strides): reshape by a
    // shape tensor instead.
    SmallVector<Value> extents;
    for (OpFoldResult size : sizes)
      extents.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, size));
    Value shape = tensor::FromElementsOp::create(
        rewriter, loc, RankedTensorType::get({outType.getRank()}, rewriter.getIndexType()),
        extents);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, outType, flat, shape);
    return success();
  }
};

/// The target shape resolved (0 copies an input dim unless allow_zero, -1
/// takes what keeps the count) and checked, then a collapse to 1-D and a
/// tensor.reshape by a shape tensor.
struct DynamicReshapeToTensor : OpRewritePattern<DynamicReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DynamicReshapeOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    RankedTensorType inType = op.getInput().getType(), outType = op.getType();
    auto cmp = [&](arith::CmpIPredicate p, Value a, Value b) {
      return Value(arith::CmpIOp::create(rewriter, loc, p, a, b));
    };
    auto index = [&](int64_t v) { return Value(arith::ConstantIndexOp::create(rewriter, loc, v)); };
    Value zero = index(0), one = index(1), minusOne = index(-1);
    Value total = elementCount(rewriter, loc, input);
    // Each entry with 0 resolved; -1 stays -1 for now.
    SmallVector<Value> entries;
    Value known = one, inferredCount = zero;
    Value valid = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      Value s = extractIndex(rewriter, loc, op.getShape(), d);
      if (!op.getAllowZero() && d < inType.getRank())
        s = arith::SelectOp::create(rewriter, loc, cmp(arith::CmpIPredicate::eq, s, zero),
                                    dimOf(rewriter, loc, input, d), s);
      Value isInferred = cmp(arith::CmpIPredicate::eq, s, minusOne);
      valid = arith::AndIOp::create(rewriter, loc, valid,
                                    cmp(arith::CmpIPredicate::sge, s, minusOne));
      inferredCount =
          arith::AddIOp::create(rewriter, loc, inferredCount,
                                arith::SelectOp::create(rewriter, loc, isInferred, one, zero));
      known = arith::MulIOp::create(rewriter, loc, known,
                                    arith::SelectOp::create(rewriter, loc, isInferred, one, s));
      entries.push_back(s);
    }
    Value inferred = inferredSize(rewriter, loc, total, known);
    SmallVector<Value> extents;
    Value product = one;
    for (Value s : entries) {
      Value size = arith::SelectOp::create(
          rewriter, loc, cmp(arith::CmpIPredicate::eq, s, minusOne), inferred, s);
      product = arith::MulIOp::create(rewriter, loc, product, size);
      extents.push_back(size);
    }
    valid = arith::AndIOp::create(rewriter, loc, valid,
                                  cmp(arith::CmpIPredicate::ule, inferredCount, one));
    // A static result dim (known_dims) must be what the shape says.
    for (int64_t d = 0; d < outType.getRank(); ++d)
      if (!outType.isDynamicDim(d))
        valid = arith::AndIOp::create(
            rewriter, loc, valid,
            cmp(arith::CmpIPredicate::eq, extents[d], index(outType.getDimSize(d))));
    valid = arith::AndIOp::create(rewriter, loc, valid,
                                  cmp(arith::CmpIPredicate::eq, product, total));
    lowering::checkAtRunTime(rewriter, loc, valid, lowering::kReshapeCount);
    // (A scalar becomes one element.)
    Value flat = inType.getRank() == 0
                     ? Value(tensor::ExpandShapeOp::create(
                           rewriter, loc, RankedTensorType::get({1}, inType.getElementType()),
                           input, ArrayRef<ReassociationIndices>{}))
                     : collapseToOneDim(rewriter, loc, input);
    if (outType.getNumDynamicDims() > 1 || outType.getRank() == 0 ||
        llvm::is_contained(outType.getShape(), 0)) {
      Value shape = tensor::FromElementsOp::create(
          rewriter, loc, RankedTensorType::get({outType.getRank()}, rewriter.getIndexType()),
          extents);
      rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, outType, flat, shape);
      return success();
    }
    // The flat data expanded into the result's dims, which are values here:
    // no shape buffer that a later size would be loaded from (on a GPU, a
    // read back from device memory). (Not with two dynamic dims or more:
    // MLIR 22's expand-strided-metadata crashes on such an expansion; nor
    // with a static 0 beside the dynamic dim: folding it leaves ub.poison,
    // which LLVM translation refuses.)
    // (expand_shape wants the flat dim dynamic exactly when a result dim
    // is; the count was checked above.)
    auto flatOf = RankedTensorType::get(
        {outType.hasStaticShape() ? outType.getNumElements() : ShapedType::kDynamic},
        outType.getElementType());
    if (flat.getType() != flatOf)
      flat = tensor::CastOp::create(rewriter, loc, flatOf, flat);
    SmallVector<ReassociationIndices> group(1);
    SmallVector<OpFoldResult> outputShape;
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      group[0].push_back(d);
      outputShape.push_back(outType.isDynamicDim(d) ? OpFoldResult(extents[d])
                                                     : rewriter.getIndexAttr(outType.getDimSize(d)));
    }
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, outType, flat, group, outputShape);
    return success();
  }
};

} // namespace

void populateReshapesToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeToTensor, DynamicReshapeToTensor>(patterns.getContext());
}

} // namespace kiln
