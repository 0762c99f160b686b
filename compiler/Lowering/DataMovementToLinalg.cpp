//===- DataMovementToLinalg.cpp - kiln data movement -> tensor / linalg ---===//
//
// transpose -> linalg.transpose,
// expand -> a broadcasting generic, concat / split / slice -> tensor
// slices, gather -> a generic that reads with tensor.extract, pad
// (constant mode) -> tensor.pad.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/ShapeMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

using lowering::dimOf;
using lowering::runtimeSizes;

/// Dim `d` of `v` as a slice size: an attribute when static, so that the
/// slice's type stays static.
OpFoldResult sliceSize(OpBuilder &b, Location loc, Value v, int64_t d) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(d))
    return b.getIndexAttr(type.getDimSize(d));
  return Value(tensor::DimOp::create(b, loc, v, d));
}


struct TransposeToLinalg : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ArrayRef<int64_t> perm = op.getPermutation();
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < op.getType().getRank(); ++d)
      if (op.getType().isDynamicDim(d))
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, op.getInput(), perm[d]));
    Value init = tensor::EmptyOp::create(rewriter, loc, op.getType().getShape(),
                                         op.getType().getElementType(), dynamicSizes);
    auto transpose = linalg::TransposeOp::create(rewriter, loc, op.getInput(), init, perm);
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

struct ExpandToGeneric : OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpandOp op, PatternRewriter &rewriter) const override {
    FailureOr<Value> result = lowering::buildBroadcastGeneric(
        rewriter, op.getLoc(), op.getType(), ValueRange{op.getInput()},
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    if (failed(result))
      return kiln::lowering::refuse(rewriter, op, "cannot size the result");
    rewriter.replaceOp(op, *result);
    return success();
  }
};

struct ConcatToInsertSlices : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (op.getInputs().size() > lowering::kMaxInsertSliceChain) {
      rewriter.replaceOpWithNewOp<tensor::ConcatOp>(op, op.getType(), op.getAxis(),
                                                    op.getInputs());
      return success();
    }
    int64_t axis = static_cast<int64_t>(op.getAxis());
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    SmallVector<Value> dynamicSizes;
    Value axisTotal = arith::ConstantIndexOp::create(rewriter, loc, 0);
    for (Value in : op.getInputs())
      axisTotal = arith::AddIOp::create(rewriter, loc, axisTotal, dimOf(rewriter, loc, in, axis));
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(d == axis ? axisTotal
                                         : dimOf(rewriter, loc, op.getInputs().front(), d));
    Value result = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                           type.getElementType(), dynamicSizes);
    // The offset along the axis: a constant while the inputs before are
    // static along it (kiln.output_into names it), then a value.
    int64_t staticOffset = 0;
    Value offset;
    for (Value in : op.getInputs()) {
      int64_t size = cast<RankedTensorType>(in.getType()).getDimSize(axis);
      if (size == 0)
        continue; // nothing to insert (a constant offset there would be out of bounds)
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
          strides(rank, rewriter.getIndexAttr(1));
      offsets[axis] = offset ? OpFoldResult(offset) : rewriter.getIndexAttr(staticOffset);
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(sliceSize(rewriter, loc, in, d));
      result = tensor::InsertSliceOp::create(rewriter, loc, in, result, offsets, sizes, strides);
      if (!offset && !ShapedType::isDynamic(size)) {
        staticOffset += size;
        continue;
      }
      if (!offset)
        offset = arith::ConstantIndexOp::create(rewriter, loc, staticOffset);
      offset = arith::AddIOp::create(rewriter, loc, offset, dimOf(rewriter, loc, in, axis));
    }
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, type, result);
    return success();
  }
};

/// A result without elements needs no data, and slicing it out would name
/// an offset past the end (which tensor.extract_slice rejects).
bool hasNoElements(Type type) {
  auto shaped = cast<RankedTensorType>(type);
  return llvm::is_contained(shaped.getShape(), 0);
}

/// An empty tensor of `type`; its dynamic dims are those of `like` (of the
/// same rank).
Value emptyLike(PatternRewriter &rewriter, Location loc, Type type, Value like) {
  auto shaped = cast<RankedTensorType>(type);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < shaped.getRank(); ++d)
    if (shaped.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(rewriter, loc, like, d));
  return tensor::EmptyOp::create(rewriter, loc, shaped.getShape(), shaped.getElementType(),
                                 sizes);
}

struct SplitToExtractSlices : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    int64_t rank = op.getInput().getType().getRank();
    SmallVector<Value> pieces;
    int64_t offset = 0;
    for (auto [size, result] : llvm::zip(op.getSizes(), op.getResults())) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
          strides(rank, rewriter.getIndexAttr(1));
      offsets[axis] = rewriter.getIndexAttr(offset);
      if (hasNoElements(result.getType())) {
        // Its other dims are the input's.
        pieces.push_back(emptyLike(rewriter, loc, result.getType(), op.getInput()));
        offset += size;
        continue;
      }
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(d == axis ? OpFoldResult(rewriter.getIndexAttr(size))
                                  : sliceSize(rewriter, loc, op.getInput(), d));
      Value slice = tensor::ExtractSliceOp::create(rewriter, loc, op.getInput(), offsets,
                                                   sizes, strides);
      pieces.push_back(tensor::CastOp::create(rewriter, loc, result.getType(), slice));
      offset += size;
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

/// Where a slice of a dim of run-time length `n` starts (`first`) and how
/// many entries it takes (`count`), as shape::sliceExtent computes them for
/// static dims: negative bounds count from the end, then both are clamped
/// to [0, n] (positive step) or [-1, n - 1] (negative step).
struct RuntimeSliceBounds {
  Value first, count;
};

RuntimeSliceBounds runtimeSliceBounds(OpBuilder &b, Location loc, Value n, int64_t start,
                                      int64_t end, int64_t step) {
  auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value lo = constant(step > 0 ? 0 : -1);
  Value hi = step > 0 ? n : arith::SubIOp::create(b, loc, n, constant(1)).getResult();
  auto clampBound = [&](int64_t v) -> Value {
    Value bound;
    if (v <= -int64_t(INT32_MAX))
      bound = constant(-1); // below -n for any real length
    else if (v < 0)
      bound = arith::MaxSIOp::create(b, loc, arith::AddIOp::create(b, loc, n, constant(v)),
                                     constant(-1));
    else
      bound = constant(std::min<int64_t>(v, INT32_MAX));
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, bound, lo), hi);
  };
  Value first = clampBound(start), last = clampBound(end);
  Value span = step > 0 ? arith::SubIOp::create(b, loc, last, first)
                        : arith::SubIOp::create(b, loc, first, last);
  Value count = arith::CeilDivSIOp::create(b, loc, span, constant(step > 0 ? step : -step));
  return {first, arith::MaxSIOp::create(b, loc, count, constant(0))};
}

/// Positive-step slices become tensor.extract_slice (with bounds computed
/// at run time on dims of run-time length); reversals a gathering generic.
struct SliceToTensor : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType();
    int64_t rank = inType.getRank();
    SmallVector<OpFoldResult> offsets, sizes, strides;
    bool reversed = false;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t start = op.getStarts()[d], end = op.getEnds()[d], step = op.getSteps()[d];
      reversed |= step < 0;
      strides.push_back(rewriter.getIndexAttr(step));
      if (inType.isDynamicDim(d)) {
        Value n = dimOf(rewriter, loc, op.getInput(), d);
        if (start == 0 && end >= INT32_MAX && step == 1) {
          offsets.push_back(rewriter.getIndexAttr(0));
          sizes.push_back(n);
          continue;
        }
        RuntimeSliceBounds bounds = runtimeSliceBounds(rewriter, loc, n, start, end, step);
        offsets.push_back(bounds.first);
        if (op.getType().isDynamicDim(d)) {
          sizes.push_back(bounds.count);
          continue;
        }
        // A result dim the IR declares static (kiln IR written by a
        // frontend that knows more, x[0] of a batch): that size, checked
        // when the model runs (a batch of 0 has no row 0).
        int64_t declared = op.getType().getDimSize(d);
        lowering::checkAtRunTime(
            rewriter, loc,
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, bounds.count,
                                  arith::ConstantIndexOp::create(rewriter, loc, declared)),
            lowering::kDeclaredSize);
        sizes.push_back(rewriter.getIndexAttr(declared));
        continue;
      }
      int64_t dim = inType.getDimSize(d);
      if (start < 0)
        start = start < -dim ? -1 : start + dim;
      start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, -1, dim - 1);
      offsets.push_back(rewriter.getIndexAttr(start));
      sizes.push_back(rewriter.getIndexAttr(op.getType().getDimSize(d)));
    }
    // An empty tensor of the result's sizes.
    auto emptyResult = [&]() -> Value {
      SmallVector<Value> dynamicSizes;
      for (int64_t d = 0; d < rank; ++d)
        if (op.getType().isDynamicDim(d))
          dynamicSizes.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, sizes[d]));
      return tensor::EmptyOp::create(rewriter, loc, op.getType().getShape(),
                                     op.getType().getElementType(), dynamicSizes);
    };
    // No elements: that is the slice (its static offsets may lie past the
    // end, which extract_slice refuses).
    if (hasNoElements(op.getType())) {
      rewriter.replaceOp(op, emptyResult());
      return success();
    }
    if (!reversed) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, op.getType(), op.getInput(),
                                                          offsets, sizes, strides);
      return success();
    }
    // Read input[first + i * step] for every result index.
    Value init = emptyResult();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{op.getType()}, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            Value scaled = arith::MulIOp::create(
                b, l, i, arith::ConstantIndexOp::create(b, l, op.getSteps()[d]));
            indices.push_back(arith::AddIOp::create(
                b, l, scaled, getValueOrCreateConstantIndexOp(b, l, offsets[d])));
          }
          linalg::YieldOp::create(b, l, Value(tensor::ExtractOp::create(b, l, op.getInput(), indices)));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// The edge, reflect and wrap pads read each result element from a
/// source at an index they clamp, mirror or wrap into range; a
/// source with no elements has none in range (a clamp would read past its
/// buffer, a wrap divide by 0). Whether the static shapes rule such a read
/// out (false) or make it certain (true: the lowering refuses the op);
/// std::nullopt when only the run can tell (it checks, kReadFromEmpty).
std::optional<bool> readsFromEmpty(ArrayRef<int64_t> sourceShape, RankedTensorType result) {
  bool sourceEmpty = llvm::is_contained(sourceShape, 0);
  bool sourceStatic = llvm::none_of(sourceShape, ShapedType::isDynamic);
  if ((sourceStatic && !sourceEmpty) || (result.hasStaticShape() && result.getNumElements() == 0))
    return false;
  if (sourceStatic && result.hasStaticShape())
    return true; // an empty source, a result with elements
  return std::nullopt;
}

constexpr llvm::StringLiteral kReadsFromEmpty =
    "reads its result from a tensor with no elements (an edge, reflect or wrap pad of an empty "
    "dim)";

/// At run time: stops the run (KILN_ERROR_SHAPE) when `source` has no
/// elements and `result` (sized) has some.
void checkNotReadingEmpty(OpBuilder &b, Location loc, Value source, Value result) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value sourceHas = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          lowering::elementCount(b, loc, source), zero);
  Value resultHasNone = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              lowering::elementCount(b, loc, result), zero);
  Value ok = arith::OrIOp::create(b, loc, sourceHas, resultHasNone);
  lowering::checkAtRunTime(b, loc, ok, lowering::kReadFromEmpty);
}

/// result[..., j..., ...] = data[..., wrap(indices[j...]), ...]. An index
/// outside the dim is clamped into it. A gathered axis with no elements has
/// no index to clamp into: every element is then 0 and nothing is read.
/// Such gathers are not errors: the importer's reductions over axes known
/// only at run time gather from an empty axis in a branch they discard.
struct GatherToGeneric : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = op.getData(), indices = op.getIndices();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    int64_t dataRank = op.getData().getType().getRank();
    int64_t indexRank = op.getIndices().getType().getRank();
    int64_t rank = op.getType().getRank();
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!op.getType().isDynamicDim(d))
        continue;
      if (d < axis)
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, data, d));
      else if (d < axis + indexRank)
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, indices, d - axis));
      else
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, data, d - indexRank + 1));
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, op.getType().getShape(),
                                         op.getType().getElementType(), dynamicSizes);
    SmallVector<AffineExpr> indexExprs;
    for (int64_t k = 0; k < indexRank; ++k)
      indexExprs.push_back(rewriter.getAffineDimExpr(axis + k));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, indexExprs, rewriter.getContext()),
                                   rewriter.getMultiDimIdentityMap(rank)};
    Value axisSize = dimOf(rewriter, loc, data, axis);
    int64_t staticAxis = op.getData().getType().getDimSize(axis);
    bool mayBeEmpty = ShapedType::isDynamic(staticAxis) || staticAxis == 0;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{op.getType()}, ValueRange{indices}, ValueRange{init}, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value i = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
          i = arith::SelectOp::create(b, l, negative, arith::AddIOp::create(b, l, i, axisSize), i);
          Value maxIndex = arith::SubIOp::create(b, l, axisSize,
                                                 arith::ConstantIndexOp::create(b, l, 1));
          i = arith::MaxSIOp::create(b, l, arith::MinSIOp::create(b, l, i, maxIndex), zero);
          SmallVector<Value> coords;
          for (int64_t d = 0; d < dataRank; ++d) {
            if (d < axis)
              coords.push_back(linalg::IndexOp::create(b, l, d));
            else if (d == axis)
              coords.push_back(i);
            else
              coords.push_back(linalg::IndexOp::create(b, l, d + indexRank - 1));
          }
          if (!mayBeEmpty) {
            linalg::YieldOp::create(b, l, Value(tensor::ExtractOp::create(b, l, data, coords)));
            return;
          }
          Value hasElements = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, axisSize,
                                                    zero);
          auto read = scf::IfOp::create(
              b, l, hasElements,
              [&](OpBuilder &nb, Location nl) {
                scf::YieldOp::create(nb, nl,
                                     Value(tensor::ExtractOp::create(nb, nl, data, coords)));
              },
              [&](OpBuilder &nb, Location nl) {
                // (E8M0 has no zero: its elements keep what the result held.)
                Type element = op.getType().getElementType();
                auto f = dyn_cast<FloatType>(element);
                Value none = args[1];
                if (!f || APFloat::semanticsHasZero(f.getFloatSemantics()))
                  none = arith::ConstantOp::create(nb, nl,
                                                   cast<TypedAttr>(nb.getZeroAttr(element)));
                scf::YieldOp::create(nb, nl, none);
              });
          linalg::YieldOp::create(b, l, read.getResult(0));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct PadToTensorPad : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;

  /// reflect / edge / wrap: every result element reads the source at its
  /// index minus the low pad, mirrored (without repeating the edge),
  /// clamped into range or taken modulo the dim. `checkEmpty`: whether
  /// only the run can tell that the source has elements to read.
  static LogicalResult mirrorOrEdge(PadOp op, Value source, bool checkEmpty,
                                    PatternRewriter &rewriter) {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    ArrayRef<int64_t> pads = op.getPads();
    bool reflect = op.getMode() == PadMode::reflect;
    bool wrap = op.getMode() == PadMode::wrap;
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(arith::AddIOp::create(
            rewriter, loc, dimOf(rewriter, loc, source, d),
            arith::ConstantIndexOp::create(rewriter, loc,
                                           std::max<int64_t>(0, pads[d]) +
                                               std::max<int64_t>(0, pads[d + rank]))));
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType(), dynamicSizes);
    if (checkEmpty)
      checkNotReadingEmpty(rewriter, loc, source, init);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(dimOf(rewriter, loc, source, d));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = arith::SubIOp::create(
                b, l, linalg::IndexOp::create(b, l, d),
                arith::ConstantIndexOp::create(b, l, std::max<int64_t>(0, pads[d])));
            Value last = arith::SubIOp::create(b, l, sizes[d], one);
            if (reflect) {
              // -i below the start, 2 * last - i past the end.
              Value below = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
              i = arith::SelectOp::create(b, l, below, arith::SubIOp::create(b, l, zero, i), i);
              Value above = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, i, last);
              Value mirrored = arith::SubIOp::create(
                  b, l, arith::AddIOp::create(b, l, last, last), i);
              i = arith::SelectOp::create(b, l, above, mirrored, i);
            }
            if (wrap) {
              // ((i mod size) + size) mod size: non-negative for any i.
              Value rem = arith::RemSIOp::create(b, l, i, sizes[d]);
              i = arith::RemSIOp::create(b, l, arith::AddIOp::create(b, l, rem, sizes[d]),
                                         sizes[d]);
            }
            // Clamp: the edge mode itself, and a guard for reflect pads
            // larger than the dim.
            i = arith::MaxSIOp::create(b, l, arith::MinSIOp::create(b, l, i, last), zero);
            indices.push_back(i);
          }
          linalg::YieldOp::create(b, l, Value(tensor::ExtractOp::create(b, l, source, indices)));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

  LogicalResult matchAndRewrite(PadOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType();
    int64_t rank = inType.getRank();
    ArrayRef<int64_t> pads = op.getPads();
    Value source = op.getInput();
    std::optional<bool> readsEmpty = false;
    if (op.getMode() != PadMode::constant) {
      // The shape left after the crops below.
      SmallVector<int64_t> cropped(inType.getShape());
      for (int64_t d = 0; d < rank; ++d)
        if (!ShapedType::isDynamic(cropped[d]))
          cropped[d] -= std::max<int64_t>(0, -pads[d]) + std::max<int64_t>(0, -pads[d + rank]);
      readsEmpty = readsFromEmpty(cropped, op.getType());
      if (readsEmpty && *readsEmpty)
        return kiln::lowering::refuse(rewriter, op, kReadsFromEmpty);
    }
    // Negative pads crop first.
    if (llvm::any_of(pads, [](int64_t p) { return p < 0; })) {
      SmallVector<OpFoldResult> offsets, sizes, strides(rank, rewriter.getIndexAttr(1));
      for (int64_t d = 0; d < rank; ++d) {
        int64_t lo = std::max<int64_t>(0, -pads[d]), hi = std::max<int64_t>(0, -pads[d + rank]);
        offsets.push_back(rewriter.getIndexAttr(lo));
        Value size = dimOf(rewriter, loc, source, d);
        Value crop = arith::ConstantIndexOp::create(rewriter, loc, lo + hi);
        // A dim known only at run time must hold what is cropped from it
        // (a negative size would reach the allocator).
        if (lo + hi > 0 && inType.isDynamicDim(d))
          lowering::checkAtRunTime(
              rewriter, loc,
              arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, size, crop),
              lowering::kNegativeSize);
        sizes.push_back(Value(arith::SubIOp::create(rewriter, loc, size, crop)));
      }
      source = tensor::ExtractSliceOp::create(rewriter, loc, source, offsets, sizes, strides);
    }
    if (op.getMode() != PadMode::constant)
      return mirrorOrEdge(op, source, !readsEmpty.has_value(), rewriter);
    SmallVector<OpFoldResult> low, high;
    for (int64_t d = 0; d < rank; ++d) {
      low.push_back(rewriter.getIndexAttr(std::max<int64_t>(0, pads[d])));
      high.push_back(rewriter.getIndexAttr(std::max<int64_t>(0, pads[d + rank])));
    }
    Type element = inType.getElementType();
    Value value = lowering::scalarConstant(rewriter, loc, element,
                                           op.getValue().convertToDouble());
    if (element.isInteger(1))
      value = arith::ConstantOp::create(rewriter, loc,
                                        rewriter.getBoolAttr(op.getValue().convertToDouble() != 0));
    auto pad = tensor::PadOp::create(rewriter, loc, Type(), source, low, high, value);
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, op.getType(), pad.getResult());
    return success();
  }
};


struct ShapeOfToTensor : OpRewritePattern<ShapeOfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShapeOfOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> dims;
    for (int64_t d = 0; d < op.getInput().getType().getRank(); ++d)
      dims.push_back(arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                                dimOf(rewriter, loc, op.getInput(), d)));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(), dims);
    return success();
  }
};

struct IotaToGeneric : OpRewritePattern<IotaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IotaOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    SmallVector<Value> sizes = runtimeSizes(rewriter, loc, type, op.getShape());
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType(),
                                         sizes);
    int64_t axis = static_cast<int64_t>(op.getAxis());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(type.getRank())},
        SmallVector<utils::IteratorType>(type.getRank(), utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = linalg::IndexOp::create(b, l, axis);
          linalg::YieldOp::create(b, l, Value(arith::IndexCastOp::create(b, l, b.getI64Type(), i)));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};


} // namespace

namespace lowering {

Value elementCount(OpBuilder &b, Location loc, Value input) {
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 0; d < cast<RankedTensorType>(input.getType()).getRank(); ++d)
    total = arith::MulIOp::create(b, loc, total, dimOf(b, loc, input, d));
  return total;
}

void checkAtRunTime(OpBuilder &b, Location loc, Value ok, int32_t code) {
  if (auto constant = ok.getDefiningOp<arith::ConstantOp>())
    if (auto value = dyn_cast<BoolAttr>(constant.getValue()); value && value.getValue())
      return;
  Value failed = arith::XOrIOp::create(b, loc, ok, arith::ConstantIntOp::create(b, loc, 1, 1));
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &nb, Location nl) {
    Value c = arith::ConstantIntOp::create(nb, nl, code, 32);
    func::CallOp::create(nb, nl, kShapeErrorFunction, TypeRange{}, ValueRange{c});
    scf::YieldOp::create(nb, nl);
  });
}

} // namespace lowering

void populateDataMovementToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<TransposeToLinalg, ExpandToGeneric,
               ConcatToInsertSlices, SplitToExtractSlices, SliceToTensor,
               GatherToGeneric, PadToTensorPad, ShapeOfToTensor, IotaToGeneric>(patterns.getContext());
}

} // namespace kiln
