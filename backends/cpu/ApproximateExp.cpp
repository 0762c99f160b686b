//===- ApproximateExp.cpp - f32 exp as a vectorisable polynomial ----------===//
//
// math.exp on f32 becomes MLIR's polynomial approximation (arith and
// math.fma on the same scalar or vector type), so a row kernel's exp stays
// in vector registers instead of one libm `expf` call per lane.
//
//===----------------------------------------------------------------------===//

#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln::cpu {
#define GEN_PASS_DEF_APPROXIMATEEXP
#include "backends/cpu/Passes.h.inc"
} // namespace kiln::cpu

using namespace mlir;

namespace {

struct ApproximateExp : kiln::cpu::impl::ApproximateExpBase<ApproximateExp> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return name == math::ExpOp::getOperationName(); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
