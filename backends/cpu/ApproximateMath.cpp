//===- ApproximateMath.cpp - f32 math functions as vectorisable polynomials ===//
//
// math.exp, math.tanh, math.erf and math.log on f32 become MLIR's polynomial
// approximations (arith and math.fma on the same scalar or vector type), so
// an elementwise or row kernel stays in vector registers instead of making
// one libm call (`expf`, `tanhf`, `erff`, `logf`) per lane.
//
//===----------------------------------------------------------------------===//

#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln::cpu {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "backends/cpu/Passes.h.inc"
} // namespace kiln::cpu

using namespace mlir;

namespace {

// The functions approximated: each checked against numpy on special and
// extreme values (test/lit/tools/math-values.test). The others (sin, cos,
// atan, pow, ...) stay libm calls.
bool approximated(StringRef name) {
  return name == math::ExpOp::getOperationName() || name == math::TanhOp::getOperationName() ||
         name == math::ErfOp::getOperationName() || name == math::LogOp::getOperationName();
}

// MLIR's log polynomial reads a denormal input as the smallest normal float
// (log(1e-40) came out -87.34, not -92.10). A denormal x is scaled by 2^24
// first and 24 log(2) taken off the result, so the polynomial only sees
// normal numbers; zero, negatives, inf and nan go through unchanged.
void guardDenormalLogs(Operation *root) {
  SmallVector<math::LogOp> logs;
  root->walk([&](math::LogOp op) {
    if (getElementTypeOrSelf(op.getType()).isF32())
      logs.push_back(op);
  });
  for (math::LogOp op : logs) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type type = op.getType();
    auto constant = [&](float value) {
      return createScalarOrSplatConstant(b, loc, type, APFloat(value));
    };
    Value x = op.getOperand();
    Value denormal =
        arith::AndIOp::create(b, loc,
                              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                                    constant(0.0f)),
                              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                                    constant(0x1p-126f)));
    Value scaled = arith::SelectOp::create(
        b, loc, denormal, arith::MulFOp::create(b, loc, x, constant(0x1p24f)), x);
    Value log = math::LogOp::create(b, loc, scaled);
    Value shifted = arith::SubFOp::create(b, loc, log, constant(24.0f * float(M_LN2)));
    op.replaceAllUsesWith(arith::SelectOp::create(b, loc, denormal, shifted, log).getResult());
    op.erase();
  }
}

struct ApproximateMath : kiln::cpu::impl::ApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    guardDenormalLogs(getOperation());
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
