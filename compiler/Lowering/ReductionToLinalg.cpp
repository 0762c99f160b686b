//===- ReductionToLinalg.cpp - kiln reductions -> linalg.generic ----------===//
//
// A reduction is one linalg.generic with reduction iterators over a
// filled accumulator; mean divides the sum by the reduced element count,
// arg-reductions carry (value, index) pairs. Sums and products of 16-bit
// floats accumulate in float32 and round once (lowering::accumulatorOf),
// as contractions do.
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

using lowering::scalarConstant;

enum class Combine { Sum, Prod, Max, Min };

/// tensor.empty for a reduction's result: result dim i is input dim
/// `sourceDims[i]` (or a kept 1).
Value reductionInit(OpBuilder &b, Location loc, Value input,
                    RankedTensorType resultType, ArrayRef<int64_t> sourceDims) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    if (resultType.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, input, sourceDims[d]));
  return tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                 resultType.getElementType(), sizes);
}

/// Maps, iterators and result-dim sources of reducing `rank` dims over
/// `axes`.
struct ReductionShape {
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators;
  SmallVector<int64_t> sourceDims;
};

ReductionShape reductionShape(OpBuilder &b, int64_t rank, ArrayRef<int64_t> axes,
                              bool keepDims) {
  ReductionShape s;
  SmallVector<AffineExpr> out;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    s.iterators.push_back(reduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
    if (!reduced) {
      out.push_back(b.getAffineDimExpr(d));
      s.sourceDims.push_back(d);
    } else if (keepDims) {
      out.push_back(b.getAffineConstantExpr(0));
      s.sourceDims.push_back(d);
    }
  }
  s.maps = {b.getMultiDimIdentityMap(rank), AffineMap::get(rank, 0, out, b.getContext())};
  return s;
}

double identityOf(Combine c, Type t) {
  switch (c) {
  case Combine::Sum:
    return 0;
  case Combine::Prod:
    return 1;
  case Combine::Max:
    return lowering::lowestValue(t);
  case Combine::Min:
    if (isa<FloatType>(t))
      return std::numeric_limits<double>::infinity();
    return t.isUnsignedInteger() ? std::ldexp(1.0, t.getIntOrFloatBitWidth()) - 1
                                 : std::ldexp(1.0, t.getIntOrFloatBitWidth() - 1) - 1;
  }
  return 0;
}

Value combine(OpBuilder &b, Location loc, Combine c, Value acc, Value x) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (c) {
  case Combine::Sum:
    return isFloat ? Value(arith::AddFOp::create(b, loc, acc, x))
                   : Value(arith::AddIOp::create(b, loc, acc, x));
  case Combine::Prod:
    return isFloat ? Value(arith::MulFOp::create(b, loc, acc, x))
                   : Value(arith::MulIOp::create(b, loc, acc, x));
  case Combine::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, acc, x);
    return x.getType().isUnsignedInteger() ? Value(arith::MaxUIOp::create(b, loc, acc, x))
                                           : Value(arith::MaxSIOp::create(b, loc, acc, x));
  case Combine::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, acc, x);
    return x.getType().isUnsignedInteger() ? Value(arith::MinUIOp::create(b, loc, acc, x))
                                           : Value(arith::MinSIOp::create(b, loc, acc, x));
  }
  return {};
}

/// The reduction of `input` into `resultType`'s shape, in the type it
/// accumulates in (resultType's element type, or float32 for sums and
/// products of 16-bit floats).
Value buildWideReduction(OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
                         ArrayRef<int64_t> axes, bool keepDims, Combine c) {
  auto inType = cast<RankedTensorType>(input.getType());
  Type element = inType.getElementType();
  bool exact = c == Combine::Max || c == Combine::Min;
  Type acc = exact ? element : lowering::accumulatorOf(b, element);
  auto accType = resultType.clone(acc);
  ReductionShape shape = reductionShape(b, inType.getRank(), axes, keepDims);
  Value empty = reductionInit(b, loc, input, accType, shape.sourceDims);
  Value init =
      linalg::FillOp::create(b, loc, scalarConstant(b, loc, acc, identityOf(c, acc)), empty)
          .getResult(0);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{accType}, ValueRange{input}, ValueRange{init}, shape.maps,
      shape.iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = args[0];
        if (x.getType() != acc)
          x = arith::ExtFOp::create(nb, nl, acc, x);
        linalg::YieldOp::create(nb, nl, combine(nb, nl, c, args[1], x));
      });
  return generic.getResult(0);
}

Value buildReduction(OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
                     ArrayRef<int64_t> axes, bool keepDims, Combine c) {
  return lowering::roundTo(b, loc,
                           buildWideReduction(b, loc, input, resultType, axes, keepDims, c),
                           resultType);
}

template <typename OpTy, Combine c>
struct ReduceToGeneric : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildReduction(rewriter, op.getLoc(), op.getInput(),
                                          op.getType(), op.getAxes(),
                                          op.getKeepdims(), c));
    return success();
  }
};

struct ReduceMeanToGeneric : OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMeanOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType();
    Type element = inType.getElementType();
    if (!isa<FloatType>(element))
      return kiln::lowering::refuse(rewriter, op, "integer means are not lowered yet");
    // The sum and the division in the accumulator's type, rounded once.
    Value sum = buildWideReduction(rewriter, loc, op.getInput(), op.getType(), op.getAxes(),
                                   op.getKeepdims(), Combine::Sum);
    Type wide = cast<RankedTensorType>(sum.getType()).getElementType();
    // The element count of the reduced dims, known or computed.
    Value count = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (int64_t axis : op.getAxes())
      count = arith::MulIOp::create(rewriter, loc, count,
                                    tensor::DimOp::create(rewriter, loc, op.getInput(), axis));
    Value countInt = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), count);
    Value countF = arith::SIToFPOp::create(rewriter, loc, wide, countInt);
    FailureOr<Value> mean = lowering::buildBroadcastGeneric(
        rewriter, loc, op.getType().clone(wide), ValueRange{sum},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::DivFOp::create(b, l, a[0], countF);
        });
    if (failed(mean))
      return failure();
    rewriter.replaceOp(op, lowering::roundTo(rewriter, loc, *mean, op.getType()));
    return success();
  }
};

template <typename OpTy, bool isMax>
struct ArgReduceToGeneric : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    Type element = inType.getElementType();
    bool isFloat = isa<FloatType>(element);
    int64_t axis = static_cast<int64_t>(op.getAxis());
    bool last = op.getSelectLastIndex();
    ReductionShape shape = reductionShape(rewriter, inType.getRank(), {axis}, op.getKeepdims());
    shape.maps.push_back(shape.maps[1]);
    RankedTensorType resultType = op.getType();
    auto valueType = resultType.clone(element);
    Value valueInit = linalg::FillOp::create(
        rewriter, loc,
        scalarConstant(rewriter, loc, element,
                       identityOf(isMax ? Combine::Max : Combine::Min, element)),
        reductionInit(rewriter, loc, input, valueType, shape.sourceDims)).getResult(0);
    Value indexInit = linalg::FillOp::create(
        rewriter, loc, scalarConstant(rewriter, loc, rewriter.getI64Type(), 0),
        reductionInit(rewriter, loc, input, resultType, shape.sourceDims)).getResult(0);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valueType, resultType}, ValueRange{input},
        ValueRange{valueInit, indexInit}, shape.maps, shape.iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[1], bestIndex = args[2];
          Value i = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                               linalg::IndexOp::create(b, l, axis));
          Value better;
          if (isFloat) {
            auto p = isMax ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                           : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT);
            better = arith::CmpFOp::create(b, l, p, x, best);
          } else {
            bool u = x.getType().isUnsignedInteger();
            auto p = isMax ? (last ? (u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
                                   : (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt))
                           : (last ? (u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle)
                                   : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt));
            better = arith::CmpIOp::create(b, l, p, x, best);
          }
          // The first element always counts (it may equal the identity).
          Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, i,
                                              scalarConstant(b, l, b.getI64Type(), 0));
          better = arith::OrIOp::create(b, l, better, first);
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, better, x, best),
                         arith::SelectOp::create(b, l, better, i, bestIndex)});
        });
    rewriter.replaceOp(op, generic.getResult(1));
    return success();
  }
};

} // namespace

void populateReductionToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ReduceToGeneric<ReduceSumOp, Combine::Sum>,
               ReduceToGeneric<ReduceProdOp, Combine::Prod>,
               ReduceToGeneric<ReduceMaxOp, Combine::Max>,
               ReduceToGeneric<ReduceMinOp, Combine::Min>, ReduceMeanToGeneric,
               ArgReduceToGeneric<ArgMaxOp, true>, ArgReduceToGeneric<ArgMinOp, false>>(
      context);
}

} // namespace kiln
