//===- LowPrecision.cpp - float8 / float4 conversions in software ---------===//
//
// LLVM has no float8 or float4 types: their elements live as bytes (the
// LLVM type converter maps them to integers of their width) and kiln.cast
// converts them with integer arithmetic on the float32 encoding, in the
// body of the elementwise loop, so the conversion vectorises like any
// other. Widening is exact; narrowing rounds to nearest even and handles
// overflow as kiln.cast says (saturate, or infinity / NaN).
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace lowering {
namespace {

/// The encoding of a float8 / float4 type (not f8E8M0FNU, which is a bare
/// exponent and handled apart).
struct Format {
  unsigned width, exponentBits, mantissaBits;
  int bias;
  bool hasInfinity;  // E5M2: exponent all ones, mantissa 0
  bool unsignedZero; // FNUZ: 0x80 is the one NaN, no -0
  bool hasNaN;       // f4E2M1FN has none
  int64_t nan;       // the bits a NaN becomes
  int64_t maxFinite; // magnitude bits of the largest finite value
};

Format formatOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return {8, 4, 3, 7, false, false, true, 0x7F, 0x7E};
  if (isa<Float8E4M3FNUZType>(t))
    return {8, 4, 3, 8, false, true, true, 0x80, 0x7F};
  if (isa<Float8E5M2Type>(t))
    return {8, 5, 2, 15, true, false, true, 0x7F, 0x7B};
  if (isa<Float8E5M2FNUZType>(t))
    return {8, 5, 2, 16, false, true, true, 0x80, 0x7F};
  // Float4E2M1FN: no infinity, no NaN (NaN becomes -0, as ONNX's
  // reference writes it; overflow always saturates).
  return {4, 2, 1, 1, false, false, false, 0x8, 0x7};
}

/// Scalar i32 / f32 arithmetic, spelled briefly.
struct Bits {
  OpBuilder &b;
  Location loc;
  Type i32 = b.getI32Type();

  Value c(int64_t v) { return arith::ConstantIntOp::create(b, loc, i32, v); }
  Value f(double v) { return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, loc, x, c(n)); }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, loc, x, c(n)); }
  Value band(Value x, int64_t m) { return arith::AndIOp::create(b, loc, x, c(m)); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value eq(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c(v));
  }
  Value ugt(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, x, c(v));
  }
  Value sel(Value p, Value x, Value y) { return arith::SelectOp::create(b, loc, p, x, y); }
  Value asF32(Value x) { return arith::BitcastOp::create(b, loc, b.getF32Type(), x); }
  Value asI32(Value x) { return arith::BitcastOp::create(b, loc, i32, x); }
};

} // namespace

Value lowPrecisionToF32(OpBuilder &b, Location loc, Value x) {
  Type from = x.getType();
  unsigned width = from.getIntOrFloatBitWidth();
  Bits k{b, loc};
  Value narrow = arith::BitcastOp::create(b, loc, b.getIntegerType(width), x);
  Value u = arith::ExtUIOp::create(b, loc, k.i32, narrow);
  if (isa<Float8E8M0FNUType>(from)) {
    // 2^(u - 127); u = 0 is 2^-127, a float32 subnormal; 0xFF is NaN.
    Value bits = k.sel(k.eq(u, 0), k.c(0x00400000), k.shl(u, 23));
    return k.sel(k.eq(u, 0xFF), k.f(NAN), k.asF32(bits));
  }
  Format fmt = formatOf(from);
  unsigned m = fmt.mantissaBits;
  Value sign = k.shl(k.shr(u, width - 1), 31);
  Value exponent = k.band(k.shr(u, m), (1 << fmt.exponentBits) - 1);
  Value mantissa = k.band(u, (1 << m) - 1);
  Value normal = k.bor(sign, k.bor(k.shl(k.add(exponent, k.c(127 - fmt.bias)), 23),
                                   k.shl(mantissa, 23 - m)));
  // Subnormal: mantissa * 2^(1 - bias - m), exact in float32.
  Value magnitude = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), mantissa),
      k.f(std::ldexp(1.0, 1 - fmt.bias - static_cast<int>(m))));
  Value subnormal = k.bor(sign, k.asI32(magnitude));
  Value result = k.asF32(k.sel(k.eq(exponent, 0), subnormal, normal));
  if (fmt.hasInfinity) {
    Value special = k.eq(exponent, (1 << fmt.exponentBits) - 1);
    Value infinity = k.asF32(k.bor(sign, k.c(0x7F800000)));
    result = k.sel(special, k.sel(k.eq(mantissa, 0), infinity, k.f(NAN)), result);
  } else if (fmt.unsignedZero) {
    result = k.sel(k.eq(u, 0x80), k.f(NAN), result);
  } else if (fmt.hasNaN) { // E4M3FN: S.1111.111
    result = k.sel(k.eq(k.band(u, 0x7F), 0x7F), k.f(NAN), result);
  }
  return result;
}

Value f32ToLowPrecision(OpBuilder &b, Location loc, Value x, Type to, bool saturate) {
  unsigned width = to.getIntOrFloatBitWidth();
  Bits k{b, loc};
  Value u = k.asI32(x);
  Value encoded;
  if (isa<Float8E8M0FNUType>(to)) {
    // The float32 exponent, plus one when a fraction is left (ONNX's
    // default round_mode "up"); NaN and infinities become NaN (0xFF);
    // saturation keeps 2^127 from rounding up into NaN.
    Value exponent = k.band(k.shr(u, 23), 0xFF);
    Value up = arith::ExtUIOp::create(b, loc, k.i32, k.ugt(k.band(u, 0x7FFFFF), 0));
    if (saturate)
      up = k.sel(k.eq(exponent, 0xFE), k.c(0), up);
    encoded = k.sel(k.eq(exponent, 0xFF), k.c(0xFF), k.add(exponent, up));
  } else {
    Format fmt = formatOf(to);
    unsigned m = fmt.mantissaBits;
    Value sign = k.shr(u, 31);
    Value a = k.band(u, 0x7FFFFFFF);
    Value isNaN = k.ugt(a, 0x7F800000);
    // Normal range: round the float32 encoding to m mantissa bits (nearest
    // even) and rebias the exponent.
    unsigned shift = 23 - m;
    Value odd = k.band(k.shr(a, shift), 1);
    Value rounded = k.shr(k.add(k.add(a, k.c((1 << (shift - 1)) - 1)), odd), shift);
    Value normal = k.sub(rounded, k.c(static_cast<int64_t>(127 - fmt.bias) << m));
    // Below the smallest normal: a count of subnormal steps, rounded to
    // nearest even (2^m steps is the smallest normal's encoding).
    Value absolute = k.asF32(a);
    double minNormal = std::ldexp(1.0, 1 - fmt.bias);
    Value scaled = arith::MulFOp::create(
        b, loc, absolute, k.f(std::ldexp(1.0, fmt.bias - 1 + static_cast<int>(m))));
    Value steps = arith::FPToUIOp::create(b, loc, k.i32,
                                          math::RoundEvenOp::create(b, loc, scaled));
    Value isSubnormal =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, absolute, k.f(minNormal));
    Value magnitude = k.sel(isSubnormal, steps, normal);
    int64_t overflow = saturate || !fmt.hasNaN ? fmt.maxFinite
                       : fmt.hasInfinity           ? (((1 << fmt.exponentBits) - 1) << m)
                                                   : fmt.nan;
    // Subnormal step counts never pass the largest finite value; the
    // normal path's unsigned compare sees infinities as huge.
    Value over = k.ugt(magnitude, fmt.maxFinite);
    Value signBit = k.shl(sign, width - 1);
    Value finite = k.bor(signBit, magnitude);
    if (fmt.unsignedZero)
      finite = k.sel(k.eq(magnitude, 0), k.c(0), finite);
    Value overflowed = fmt.unsignedZero && overflow == fmt.nan ? k.c(fmt.nan)
                                                     : k.bor(signBit, k.c(overflow));
    encoded = k.sel(isNaN, k.c(fmt.nan), k.sel(over, overflowed, finite));
  }
  Value narrow = arith::TruncIOp::create(b, loc, b.getIntegerType(width), encoded);
  return arith::BitcastOp::create(b, loc, to, narrow);
}

} // namespace lowering
} // namespace kiln
