//===- ElementwiseToLinalg.cpp - kiln elementwise ops -> linalg.generic ---===//
//
// Every elementwise kiln op becomes one linalg.generic whose body is the
// scalar form of the op (arith / math). Broadcast operands are read
// through indexing maps, never materialised. Integer semantics follow the
// type's signedness (ui* are unsigned); float min / max propagate NaN.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln {
namespace {
bool isUnaryElementwise(Operation *op);
bool isBinaryElementwise(Operation *op);
} // namespace

namespace lowering {

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, FloatAttr::get(f, value));
  auto intType = cast<IntegerType>(type);
  // arith works on signless integers; the bits are the same. Values from
  // 2^63 up (unsigned 64-bit maxima) do not fit an int64_t; for a signed
  // type they saturate (a double cannot hold 2^63 - 1, the i64 maximum a
  // min-reduction starts from, and rounds it to 2^63).
  unsigned width = intType.getWidth();
  Type signless = b.getIntegerType(width);
  bool isUnsigned = intType.isUnsigned();
  double signedLimit = std::ldexp(1.0, width - 1);
  APInt bits = !isUnsigned && value >= signedLimit ? APInt::getSignedMaxValue(width)
               : !isUnsigned && value < -signedLimit ? APInt::getSignedMinValue(width)
               : value >= 0x1p64                     ? APInt::getAllOnes(width)
               : value >= 0x1p63 ? APInt(width, static_cast<uint64_t>(value))
                                 : APInt(width, static_cast<int64_t>(value), /*isSigned=*/true,
                                         /*implicitTrunc=*/true);
  return arith::ConstantOp::create(b, loc, IntegerAttr::get(signless, bits));
}

Value dimOf(OpBuilder &b, Location loc, Value v, int64_t d) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(d))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
  return tensor::DimOp::create(b, loc, v, d);
}

double lowestValue(Type type) {
  if (isa<FloatType>(type))
    return -std::numeric_limits<double>::infinity();
  if (type.isUnsignedInteger())
    return 0;
  return -std::ldexp(1.0, type.getIntOrFloatBitWidth() - 1);
}

Type accumulatorOf(OpBuilder &b, Type element) {
  return element.isF16() || element.isBF16() ? Type(b.getF32Type()) : element;
}

Value roundTo(OpBuilder &b, Location loc, Value wide, RankedTensorType type) {
  if (cast<RankedTensorType>(wide.getType()).getElementType() == type.getElementType())
    return wide;
  return *buildBroadcastGeneric(
      b, loc, type, {wide}, [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::TruncFOp::create(nb, nl, type.getElementType(), a[0]);
      });
}

FailureOr<Value> buildEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                            ValueRange sources) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value size;
    for (Value s : sources) {
      auto st = cast<RankedTensorType>(s.getType());
      int64_t offset = st.getRank() - type.getRank();
      int64_t sd = d + offset;
      if (sd >= 0 && sd < st.getRank() && st.isDynamicDim(sd)) {
        size = tensor::DimOp::create(b, loc, s, sd);
        break;
      }
    }
    if (!size)
      return failure();
    sizes.push_back(size);
  }
  return Value(tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType(), sizes));
}

/// Where the size of dim `d` of `v` comes from, followed back through ops
/// whose result has that dim of an operand: elementwise ops (kiln's, or
/// the linalg ops and tensor.empty they became), a library call (its
/// dynamic output dims are its input's), a tensor.dim. Two dims of the
/// same source have the same size at run time. (The source itself when
/// nothing leads further; an index value's defining op for a size that
/// is computed.)
using SizeSource = std::pair<Value, int64_t>;
using SizeSources = llvm::DenseMap<SizeSource, SizeSource>;

static SizeSource sizeSourceOf(Value v, int64_t d, int depth, SizeSources &known);

/// sizeSourceOf, each (value, dim) followed once (an elementwise op's
/// operands share their producers: x * sigmoid(x) at every layer would
/// otherwise be followed 2^depth times).
static SizeSource sizeSource(Value v, int64_t d, int depth, SizeSources &known) {
  auto found = known.find({v, d});
  if (found != known.end())
    return found->second;
  SizeSource source = sizeSourceOf(v, d, depth, known);
  known[{v, d}] = source;
  return source;
}

static SizeSource sizeSourceOf(Value v, int64_t d, int depth, SizeSources &known) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!type || !def || d < 0 || d >= type.getRank() || !type.isDynamicDim(d) || depth > 64)
    return {v, d};
  // An operand of the result's rank, dynamic at `d`.
  auto sameRank = [&](Value operand) {
    auto t = dyn_cast<RankedTensorType>(operand.getType());
    return t && t.getRank() == type.getRank() && t.isDynamicDim(d);
  };
  if (isUnaryElementwise(def) || isa<CastOp, BitcastOp>(def)) {
    if (sameRank(def->getOperand(0)))
      return sizeSource(def->getOperand(0), d, depth + 1, known);
    return {v, d};
  }
  // A library call's batch (dim 0 of rank 3 or more: a transposed operand
  // swaps only the last two dims) is its input's, unless another operand of
  // its rank is dynamic there from elsewhere (a batched matmul broadcasts
  // its operands' batches: a 1 meeting N is N). A static dim 0 (a
  // convolution's filters) does not count: a matmul's static batch other
  // than 1 would have made the result's static.
  if (isa<LibraryCallOp>(def)) {
    if (d != 0 || type.getRank() < 3 || !def->getNumOperands() || !sameRank(def->getOperand(0)))
      return {v, d};
    SizeSource source = sizeSource(def->getOperand(0), d, depth + 1, known);
    for (Value operand : def->getOperands().drop_front())
      if (sameRank(operand) && sizeSource(operand, d, depth + 1, known) != source)
        return {v, d};
    return source;
  }
  if (isBinaryElementwise(def) || isa<CompareOp, SelectOp>(def)) {
    // The result's dim is the operands' (one of size 1 stretches): known
    // when every operand dynamic there has the same source and none is a
    // static size other than 1 (a result type less refined than it could
    // be).
    std::optional<SizeSource> common;
    for (Value operand : def->getOperands()) {
      auto t = cast<RankedTensorType>(operand.getType());
      int64_t i = d - (type.getRank() - t.getRank());
      if (i < 0 || t.getDimSize(i) == 1)
        continue;
      if (!t.isDynamicDim(i))
        return {v, d};
      SizeSource source = sizeSource(operand, i, depth + 1, known);
      if (common && *common != source)
        return {v, d};
      common = source;
    }
    return common ? *common : std::make_pair(v, d);
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
    auto result = cast<OpResult>(v);
    if (result.getResultNumber() < dps.getNumDpsInits())
      return sizeSource(dps.getDpsInits()[result.getResultNumber()], d, depth + 1, known);
    return {v, d};
  }
  if (auto cast = dyn_cast<tensor::CastOp>(def)) {
    if (sameRank(cast.getSource()))
      return sizeSource(cast.getSource(), d, depth + 1, known);
    return {v, d};
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(def)) {
    Value size = empty.getDynamicSize(d);
    if (auto dim = size.getDefiningOp<tensor::DimOp>())
      if (std::optional<int64_t> index = dim.getConstantIndex())
        return sizeSource(dim.getSource(), *index, depth + 1, known);
    return {size, -1};
  }
  return {v, d};
}

RuntimeBroadcast::RuntimeBroadcast(RankedTensorType resultType, ValueRange inputs)
    : resultType(resultType), inputs(inputs), dynamicInputs(resultType.getRank(), 0),
      oneSource(resultType.getRank(), true) {
  int64_t rank = resultType.getRank();
  SmallVector<std::optional<SizeSource>> source(rank);
  SizeSources known;
  for (Value in : inputs) {
    auto type = cast<RankedTensorType>(in.getType());
    int64_t offset = rank - type.getRank();
    if (offset < 0) {
      isValid = false;
      return;
    }
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (!type.isDynamicDim(i))
        continue;
      int64_t j = i + offset;
      dynamicInputs[j] += 1;
      SizeSource from = sizeSource(in, i, 0, known);
      if (source[j] && *source[j] != from)
        oneSource[j] = false;
      source[j] = from;
    }
  }
}

bool RuntimeBroadcast::mayStretch(RankedTensorType type, int64_t i) const {
  int64_t j = i + resultType.getRank() - type.getRank();
  if (!isValid || j < 0 || !type.isDynamicDim(i))
    return false;
  return resultType.isDynamicDim(j) ? dynamicInputs[j] > 1 && !oneSource[j]
                                    : resultType.getDimSize(j) != 1;
}

Value RuntimeBroadcast::resultSize(OpBuilder &b, Location loc, int64_t j) const {
  int64_t rank = resultType.getRank();
  Value size;
  bool haveDynamic = false;
  for (Value in : inputs) {
    auto type = cast<RankedTensorType>(in.getType());
    int64_t i = j - (rank - type.getRank());
    if (i < 0 || type.getDimSize(i) == 1)
      continue;
    if (type.isDynamicDim(i)) {
      // Inputs with the same source have the same size: one stands for all.
      if (haveDynamic && oneSource[j])
        continue;
      haveDynamic = true;
    }
    Value dim = dimOf(b, loc, in, i);
    size = size ? Value(arith::MaxUIOp::create(b, loc, size, dim)) : dim;
  }
  return size;
}

FailureOr<Value> buildBroadcastGeneric(
    OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = resultType.getRank();
  RuntimeBroadcast broadcast(resultType, inputs);
  if (!broadcast.valid())
    return failure();
  SmallVector<AffineMap> maps;
  SmallVector<Value> direct;
  SmallVector<bool> isDirect;
  for (Value in : inputs) {
    auto type = cast<RankedTensorType>(in.getType());
    int64_t offset = rank - type.getRank();
    SmallVector<AffineExpr> exprs;
    bool runtimeBroadcast = false;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      int64_t j = i + offset;
      bool stretched = type.getDimSize(i) == 1 && resultType.getDimSize(j) != 1;
      runtimeBroadcast |= broadcast.mayStretch(type, i);
      exprs.push_back(stretched ? b.getAffineConstantExpr(0) : b.getAffineDimExpr(j));
    }
    isDirect.push_back(!runtimeBroadcast);
    if (runtimeBroadcast)
      continue;
    direct.push_back(in);
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  // A dynamic result dim is the largest of the inputs' at that dim.
  SmallVector<Value> sizes;
  for (int64_t j = 0; j < rank; ++j) {
    if (!resultType.isDynamicDim(j))
      continue;
    Value size = broadcast.resultSize(b, loc, j);
    if (!size)
      return failure();
    sizes.push_back(size);
  }
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType(), sizes);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, direct, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> values;
        size_t next = 0;
        for (auto [in, inMap] : llvm::zip(inputs, isDirect)) {
          if (inMap) {
            values.push_back(args[next++]);
            continue;
          }
          auto type = cast<RankedTensorType>(in.getType());
          int64_t offset = rank - type.getRank();
          SmallVector<Value> indices;
          for (int64_t i = 0; i < type.getRank(); ++i) {
            int64_t j = i + offset;
            bool stretched = type.getDimSize(i) == 1 && resultType.getDimSize(j) != 1;
            Value index = stretched ? Value(arith::ConstantIndexOp::create(nb, nl, 0))
                                    : Value(linalg::IndexOp::create(nb, nl, j));
            if (broadcast.mayStretch(type, i)) {
              Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
              Value one = arith::ConstantIndexOp::create(nb, nl, 1);
              Value size = tensor::DimOp::create(nb, nl, in, i);
              Value isOne = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, size, one);
              index = arith::SelectOp::create(nb, nl, isOne, zero, index);
            }
            indices.push_back(index);
          }
          values.push_back(tensor::ExtractOp::create(nb, nl, in, indices));
        }
        Value r = body(nb, nl, values);
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

} // namespace lowering

namespace {

using lowering::scalarConstant;
using lowering::lowPrecisionToF32;
using lowering::f32ToLowPrecision;

bool isUnsigned(Type t) { return t.isUnsignedInteger(); }

/// The scalar body of a unary op on `x` (element type `t`).
Value unaryScalar(Operation *op, OpBuilder &b, Location loc, Value x, Type t) {
  bool isFloat = isa<FloatType>(t);
  auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](NegOp) -> Value {
        return isFloat ? Value(arith::NegFOp::create(b, loc, x))
                       : Value(arith::SubIOp::create(b, loc, c(0), x));
      })
      .Case([&](AbsOp) -> Value {
        if (isFloat)
          return math::AbsFOp::create(b, loc, x);
        if (isUnsigned(t))
          return x;
        return math::AbsIOp::create(b, loc, x);
      })
      .Case([&](SignOp) -> Value {
        if (isFloat) {
          // copysign(1, x) for non-zero, 0 for 0, NaN stays NaN.
          Value one = math::CopySignOp::create(b, loc, c(1), x);
          Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, c(0));
          Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
          Value s = arith::SelectOp::create(b, loc, isZero, c(0), one);
          return arith::SelectOp::create(b, loc, isNan, x, s);
        }
        Value pos = arith::CmpIOp::create(b, loc,
                                          isUnsigned(t) ? arith::CmpIPredicate::ugt
                                                        : arith::CmpIPredicate::sgt,
                                          x, c(0));
        Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, c(0));
        Value s = arith::SelectOp::create(b, loc, pos, c(1), c(0));
        return isUnsigned(t) ? s : Value(arith::SelectOp::create(b, loc, neg, c(-1), s));
      })
      .Case([&](ExpOp) -> Value { return math::ExpOp::create(b, loc, x); })
      .Case([&](LogOp) -> Value { return math::LogOp::create(b, loc, x); })
      .Case([&](SqrtOp) -> Value { return math::SqrtOp::create(b, loc, x); })
      .Case([&](RsqrtOp) -> Value { return math::RsqrtOp::create(b, loc, x); })
      .Case([&](ReciprocalOp) -> Value { return arith::DivFOp::create(b, loc, c(1), x); })
      .Case([&](ReluOp) -> Value {
        if (isFloat)
          return arith::MaximumFOp::create(b, loc, x, c(0));
        return isUnsigned(t) ? x : Value(arith::MaxSIOp::create(b, loc, x, c(0)));
      })
      .Case([&](SigmoidOp) -> Value {
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
        return arith::DivFOp::create(b, loc, c(1), arith::AddFOp::create(b, loc, c(1), e));
      })
      .Case([&](TanhOp) -> Value { return math::TanhOp::create(b, loc, x); })
      .Case([&](ErfOp) -> Value { return math::ErfOp::create(b, loc, x); })
      .Case([&](SinOp) -> Value { return math::SinOp::create(b, loc, x); })
      .Case([&](CosOp) -> Value { return math::CosOp::create(b, loc, x); })
      .Case([&](AtanOp) -> Value { return math::AtanOp::create(b, loc, x); })
      .Case([&](FloorOp) -> Value { return math::FloorOp::create(b, loc, x); })
      .Case([&](CeilOp) -> Value { return math::CeilOp::create(b, loc, x); })
      .Case([&](RoundOp) -> Value { return math::RoundEvenOp::create(b, loc, x); })
      .Case([&](NotOp) -> Value {
        // x ^ all ones: logical not on i1, bitwise not on integers.
        unsigned width = t.getIntOrFloatBitWidth();
        return arith::XOrIOp::create(
            b, loc, x,
            arith::ConstantOp::create(
                b, loc, IntegerAttr::get(b.getIntegerType(width), APInt::getAllOnes(width))));
      })
      .Case([&](GeluOp gelu) -> Value {
        if (gelu.getApproximation() == GeluApproximation::tanh) {
          // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
          Value x3 = arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
          Value inner = arith::AddFOp::create(
              b, loc, x, arith::MulFOp::create(b, loc, c(0.044715), x3));
          Value t = math::TanhOp::create(
              b, loc, arith::MulFOp::create(b, loc, c(std::sqrt(2.0 / M_PI)), inner));
          Value half = arith::MulFOp::create(b, loc, c(0.5), x);
          return arith::MulFOp::create(b, loc, half, arith::AddFOp::create(b, loc, c(1), t));
        }
        // 0.5 x (1 + erf(x / sqrt(2)))
        Value e = math::ErfOp::create(b, loc, arith::MulFOp::create(b, loc, x, c(M_SQRT1_2)));
        Value half = arith::MulFOp::create(b, loc, c(0.5), x);
        return arith::MulFOp::create(b, loc, half, arith::AddFOp::create(b, loc, c(1), e));
      })
      .Case([&](ClipOp clip) -> Value {
        double lo = clip.getMin().convertToDouble(), hi = clip.getMax().convertToDouble();
        if (isFloat) {
          Value v = arith::MaximumFOp::create(b, loc, x, c(lo));
          return arith::MinimumFOp::create(b, loc, v, c(hi));
        }
        // Bounds beyond the type's range do not clamp.
        unsigned width = t.getIntOrFloatBitWidth();
        double tmin = isUnsigned(t) ? 0 : -std::ldexp(1.0, width - 1);
        double tmax = isUnsigned(t) ? std::ldexp(1.0, width) - 1 : std::ldexp(1.0, width - 1) - 1;
        Value v = x;
        if (lo > tmin)
          v = isUnsigned(t) ? Value(arith::MaxUIOp::create(b, loc, v, c(lo)))
                            : Value(arith::MaxSIOp::create(b, loc, v, c(lo)));
        if (hi < tmax)
          v = isUnsigned(t) ? Value(arith::MinUIOp::create(b, loc, v, c(hi)))
                            : Value(arith::MinSIOp::create(b, loc, v, c(hi)));
        return v;
      })
      .Default([](Operation *) { return Value(); });
}

/// Integer x / y or x % y, defined for every divisor: a zero divisor gives
/// 0 (as NumPy does), and the signed INT_MIN / -1 gives INT_MIN (the
/// wrapped quotient) with remainder 0. The instructions trap there (the
/// process dies of SIGFPE on a CPU) and LLVM calls both undefined.
Value integerDivision(OpBuilder &b, Location loc, Value x, Value y, Type t, bool remainder) {
  auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
  auto eq = [&](Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, l, r);
  };
  Value zero = c(0);
  Value byZero = eq(y, zero);
  Value replaced = byZero;
  bool u = isUnsigned(t);
  if (!u) {
    unsigned width = t.getIntOrFloatBitWidth();
    Value overflow = arith::AndIOp::create(b, loc, eq(x, c(-std::ldexp(1.0, width - 1))),
                                           eq(y, c(-1)));
    replaced = arith::OrIOp::create(b, loc, byZero, overflow);
  }
  Value divisor = arith::SelectOp::create(b, loc, replaced, c(1), y);
  Value result = remainder ? (u ? Value(arith::RemUIOp::create(b, loc, x, divisor))
                                : Value(arith::RemSIOp::create(b, loc, x, divisor)))
                           : (u ? Value(arith::DivUIOp::create(b, loc, x, divisor))
                                : Value(arith::DivSIOp::create(b, loc, x, divisor)));
  return arith::SelectOp::create(b, loc, byZero, zero, result);
}

/// (x op y) for a binary op on element type `t`.
Value binaryScalar(Operation *op, OpBuilder &b, Location loc, Value x, Value y, Type t) {
  bool isFloat = isa<FloatType>(t);
  bool u = isUnsigned(t);
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](AddOp) -> Value {
        return isFloat ? Value(arith::AddFOp::create(b, loc, x, y))
                       : Value(arith::AddIOp::create(b, loc, x, y));
      })
      .Case([&](SubOp) -> Value {
        return isFloat ? Value(arith::SubFOp::create(b, loc, x, y))
                       : Value(arith::SubIOp::create(b, loc, x, y));
      })
      .Case([&](MulOp) -> Value {
        return isFloat ? Value(arith::MulFOp::create(b, loc, x, y))
                       : Value(arith::MulIOp::create(b, loc, x, y));
      })
      .Case([&](DivOp) -> Value {
        if (isFloat)
          return arith::DivFOp::create(b, loc, x, y);
        return integerDivision(b, loc, x, y, t, /*remainder=*/false);
      })
      .Case([&](RemOp) -> Value {
        if (isFloat)
          return arith::RemFOp::create(b, loc, x, y);
        return integerDivision(b, loc, x, y, t, /*remainder=*/true);
      })
      .Case([&](PowOp) -> Value { return math::PowFOp::create(b, loc, x, y); })
      .Case([&](MaxOp) -> Value {
        if (isFloat)
          return arith::MaximumFOp::create(b, loc, x, y);
        return u ? Value(arith::MaxUIOp::create(b, loc, x, y))
                 : Value(arith::MaxSIOp::create(b, loc, x, y));
      })
      .Case([&](MinOp) -> Value {
        if (isFloat)
          return arith::MinimumFOp::create(b, loc, x, y);
        return u ? Value(arith::MinUIOp::create(b, loc, x, y))
                 : Value(arith::MinSIOp::create(b, loc, x, y));
      })
      .Case([&](AndOp) -> Value { return arith::AndIOp::create(b, loc, x, y); })
      .Case([&](OrOp) -> Value { return arith::OrIOp::create(b, loc, x, y); })
      .Case([&](XorOp) -> Value { return arith::XOrIOp::create(b, loc, x, y); })
      .Case<ShiftLeftOp, ShiftRightOp>([&](Operation *shift) -> Value {
        // Shifting by the bit width or more, or (signed) by a negative
        // amount, gives what the sign fill alone gives: 0, or -1 for an
        // arithmetic right shift of a negative value (LLVM would give
        // poison). A negative amount compares as >= the width unsigned.
        unsigned width = t.getIntOrFloatBitWidth();
        bool isSigned = !t.isUnsignedInteger();
        bool left = isa<ShiftLeftOp>(shift);
        Value shifted = left ? Value(arith::ShLIOp::create(b, loc, x, y))
                             : isSigned ? Value(arith::ShRSIOp::create(b, loc, x, y))
                                        : Value(arith::ShRUIOp::create(b, loc, x, y));
        Value tooFar = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, y,
                                             scalarConstant(b, loc, t, width));
        Value fill = left || !isSigned
                         ? scalarConstant(b, loc, t, 0)
                         : Value(arith::ShRSIOp::create(b, loc, x,
                                                        scalarConstant(b, loc, t, width - 1)));
        return arith::SelectOp::create(b, loc, tooFar, fill, shifted);
      })
      .Default([](Operation *) { return Value(); });
}

Value compareScalar(ComparePredicate p, OpBuilder &b, Location loc, Value x, Value y,
                    Type t) {
  if (isa<FloatType>(t)) {
    // Ordered comparisons: false with NaN; ne is unordered: true with NaN.
    arith::CmpFPredicate fp = arith::CmpFPredicate::OEQ;
    switch (p) {
    case ComparePredicate::eq: fp = arith::CmpFPredicate::OEQ; break;
    case ComparePredicate::ne: fp = arith::CmpFPredicate::UNE; break;
    case ComparePredicate::lt: fp = arith::CmpFPredicate::OLT; break;
    case ComparePredicate::le: fp = arith::CmpFPredicate::OLE; break;
    case ComparePredicate::gt: fp = arith::CmpFPredicate::OGT; break;
    case ComparePredicate::ge: fp = arith::CmpFPredicate::OGE; break;
    }
    return arith::CmpFOp::create(b, loc, fp, x, y);
  }
  bool u = isUnsigned(t) || t.isInteger(1);
  arith::CmpIPredicate ip = arith::CmpIPredicate::eq;
  switch (p) {
  case ComparePredicate::eq: ip = arith::CmpIPredicate::eq; break;
  case ComparePredicate::ne: ip = arith::CmpIPredicate::ne; break;
  case ComparePredicate::lt: ip = u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt; break;
  case ComparePredicate::le: ip = u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle; break;
  case ComparePredicate::gt: ip = u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt; break;
  case ComparePredicate::ge: ip = u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge; break;
  }
  return arith::CmpIOp::create(b, loc, ip, x, y);
}

/// Converts one element from `from` to `to` with kiln.cast's semantics.
Value castScalar(OpBuilder &b, Location loc, Value x, Type from, Type to, bool saturate) {
  if (from == to)
    return x;
  // float8 / float4 through float32, converted in software (a float64
  // source is rounded twice: to float32, then to the narrow type).
  Type f32 = b.getF32Type();
  if (isLowPrecisionFloat(from))
    return castScalar(b, loc, lowPrecisionToF32(b, loc, x), f32, to, saturate);
  if (isLowPrecisionFloat(to))
    return f32ToLowPrecision(b, loc, castScalar(b, loc, x, from, f32, false), to, saturate);
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  if (fromFloat && isLowPrecision(to)) {
    // To a 4- or 2-bit integer: a value outside its range becomes 0 (as
    // ONNX's reference, ml_dtypes, converts), NaN too.
    unsigned w = to.getIntOrFloatBitWidth();
    double lo = isUnsigned(to) ? 0 : -std::ldexp(1.0, w - 1);
    double hi = isUnsigned(to) ? std::ldexp(1.0, w) - 1 : std::ldexp(1.0, w - 1) - 1;
    Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                        scalarConstant(b, loc, from, lo - 1));
    Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                        scalarConstant(b, loc, from, hi + 1));
    Value inRange = arith::AndIOp::create(b, loc, above, below);
    Value safe = arith::SelectOp::create(b, loc, inRange, x, scalarConstant(b, loc, from, 0));
    Value wide = arith::FPToSIOp::create(b, loc, b.getI32Type(), safe);
    return arith::TruncIOp::create(b, loc, b.getIntegerType(w), wide);
  }
  Type toStorage = toFloat ? to : b.getIntegerType(to.getIntOrFloatBitWidth());
  if (to.isInteger(1)) {
    // x != 0 (NaN is non-zero).
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                   scalarConstant(b, loc, from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                 scalarConstant(b, loc, from, 0));
  }
  bool fromUnsigned = isUnsigned(from) || from.isInteger(1);
  if (fromFloat && toFloat) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, to, x);
    Value narrow = arith::TruncFOp::create(b, loc, to, x);
    if (!saturate)
      return narrow;
    // Out of range (infinities too): the largest finite value of its sign.
    auto type = cast<FloatType>(to);
    Value largest = arith::ConstantOp::create(
        b, loc, FloatAttr::get(type, APFloat::getLargest(type.getFloatSemantics())));
    Value isInf = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, narrow),
        arith::ConstantOp::create(b, loc, FloatAttr::get(type, APFloat::getInf(type.getFloatSemantics()))));
    return arith::SelectOp::create(b, loc, isInf, math::CopySignOp::create(b, loc, largest, narrow),
                                   narrow);
  }
  if (!fromFloat && toFloat)
    return fromUnsigned ? Value(arith::UIToFPOp::create(b, loc, to, x))
                        : Value(arith::SIToFPOp::create(b, loc, to, x));
  if (fromFloat && !toFloat)
    return isUnsigned(to) ? Value(arith::FPToUIOp::create(b, loc, toStorage, x))
                          : Value(arith::FPToSIOp::create(b, loc, toStorage, x));
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw == tw)
    return x;
  if (fw > tw)
    return arith::TruncIOp::create(b, loc, toStorage, x);
  return fromUnsigned ? Value(arith::ExtUIOp::create(b, loc, toStorage, x))
                      : Value(arith::ExtSIOp::create(b, loc, toStorage, x));
}

bool isUnaryElementwise(Operation *op) {
  return isa<NegOp, AbsOp, SignOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp,
             ReluOp, SigmoidOp, TanhOp, ErfOp, SinOp, CosOp, AtanOp, FloorOp,
             CeilOp, RoundOp, NotOp, GeluOp, ClipOp>(op);
}

bool isBinaryElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, RemOp, PowOp, MaxOp, MinOp, AndOp, OrOp,
             XorOp, ShiftLeftOp, ShiftRightOp>(op);
}

/// Lowers every elementwise op through buildBroadcastGeneric.
struct ElementwiseToGeneric : RewritePattern {
  ElementwiseToGeneric(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    bool unary = isUnaryElementwise(op), binary = isBinaryElementwise(op);
    if (!unary && !binary && !isa<CompareOp, SelectOp, CastOp, BitcastOp>(op))
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Type inType = cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
    Type outType = resultType.getElementType();
    FailureOr<Value> result = lowering::buildBroadcastGeneric(
        rewriter, op->getLoc(), resultType, op->getOperands(),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          if (auto cmp = dyn_cast<CompareOp>(op))
            return compareScalar(cmp.getPredicate(), b, l, a[0], a[1], inType);
          if (isa<SelectOp>(op))
            return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
          if (isa<CastOp>(op))
            return castScalar(b, l, a[0], inType, outType, cast<CastOp>(op).getSaturate());
          if (isa<BitcastOp>(op)) {
            // arith works on signless integers: the same bits.
            auto bits = [&](Type t) -> Type {
              return isa<IntegerType>(t) ? Type(b.getIntegerType(t.getIntOrFloatBitWidth())) : t;
            };
            if (inType.isInteger(1))
              return arith::ExtUIOp::create(b, l, bits(outType), a[0]);
            if (bits(inType) == bits(outType))
              return a[0];
            return arith::BitcastOp::create(b, l, bits(outType), a[0]);
          }
          if (unary)
            return unaryScalar(op, b, l, a[0], inType);
          return binaryScalar(op, b, l, a[0], a[1], inType);
        });
    if (failed(result))
      return kiln::lowering::refuse(rewriter, op, "cannot size the result");
    rewriter.replaceOp(op, *result);
    return success();
  }
};

struct ConstantToArith : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getType(),
                                                   cast<TypedAttr>(op.getValue()));
    return success();
  }
};

/// kiln.random_uniform: a generic over the result's indices hashing
/// (seed, counter, row-major index) with SplitMix64's mix (the op's
/// description; docs/Training.md).
struct RandomUniformToGeneric : OpRewritePattern<RandomUniformOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RandomUniformOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    if (!type.hasStaticShape())
      return kiln::lowering::refuse(rewriter, op, "random values of a shape known only at run time are not lowered yet");
    Location loc = op.getLoc();
    int64_t rank = type.getRank();
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, {}, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    uint64_t seed = static_cast<uint64_t>(op.getSeed());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{op.getCounter()}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Type i64 = b.getI64Type();
          auto c = [&](uint64_t v) {
            return arith::ConstantOp::create(b, l, IntegerAttr::get(i64, APInt(64, v)));
          };
          // The row-major index.
          Value index = c(0);
          for (int64_t d = 0; d < rank; ++d) {
            Value at = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, d));
            index = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, index, c(type.getDimSize(d))), at);
          }
          Value x = arith::AddIOp::create(
              b, l,
              arith::AddIOp::create(b, l, c(seed * 0xD1B54A32D192ED03ull),
                                    arith::MulIOp::create(b, l, args[0], c(0x9E3779B97F4A7C15ull))),
              index);
          auto mix = [&](Value v, uint64_t shift, uint64_t multiplier) {
            Value xored = arith::XOrIOp::create(b, l, v, arith::ShRUIOp::create(b, l, v, c(shift)));
            return multiplier ? Value(arith::MulIOp::create(b, l, xored, c(multiplier))) : xored;
          };
          x = mix(x, 30, 0xBF58476D1CE4E5B9ull);
          x = mix(x, 27, 0x94D049BB133111EBull);
          x = mix(x, 31, 0);
          Value top = arith::ShRUIOp::create(b, l, x, c(40));
          Value f = arith::UIToFPOp::create(b, l, b.getF32Type(), top);
          Value u = arith::MulFOp::create(
              b, l, f, arith::ConstantOp::create(b, l, b.getF32FloatAttr(0x1p-24f)));
          linalg::YieldOp::create(b, l, u);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseToGeneric, ConstantToArith, RandomUniformToGeneric>(
      patterns.getContext());
}

} // namespace kiln
