//===- RecognizeGelu.cpp - erf-form GELU into kiln.gelu -------------------===//
//
// Implements kiln-recognize-gelu (see compiler/Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_RECOGNIZEGELU
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Whether `value` is a splat float constant within 1e-6 relative of
/// `expected`.
bool isSplat(Value value, double expected) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return false;
  double got = dense.getSplatValue<APFloat>().convertToDouble();
  return std::fabs(got - expected) <= 1e-6 * std::fabs(expected);
}

/// The operand of binary `op` that is not a splat of `constant`, when the
/// other one is.
template <typename Op>
Value otherThanSplat(Op op, double constant) {
  if (isSplat(op.getRhs(), constant))
    return op.getLhs();
  if (isSplat(op.getLhs(), constant))
    return op.getRhs();
  return nullptr;
}

/// x when `value` is x / sqrt(2) or x * (1 / sqrt(2)).
Value scaledInput(Value value) {
  if (auto div = value.getDefiningOp<DivOp>())
    return isSplat(div.getRhs(), std::sqrt(2.0)) ? div.getLhs() : nullptr;
  if (auto mul = value.getDefiningOp<MulOp>())
    return otherThanSplat(mul, 1.0 / std::sqrt(2.0));
  return nullptr;
}

/// x when `value` is erf(x / sqrt(2)) + 1.
Value erfPlusOne(Value value) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add || !add->hasOneUse())
    return nullptr;
  Value erfValue = otherThanSplat(add, 1.0);
  auto erf = erfValue ? erfValue.getDefiningOp<ErfOp>() : nullptr;
  if (!erf || !erf->hasOneUse())
    return nullptr;
  Operation *scale = erf.getInput().getDefiningOp();
  if (!scale || !scale->hasOneUse())
    return nullptr;
  return scaledInput(erf.getInput());
}

/// mul(mul(x, erf(x / sqrt 2) + 1), 0.5), either product's operands in
/// either order; also mul(x, mul(erf(...) + 1, 0.5)).
struct RecognizeErfGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root, PatternRewriter &b) const override {
    auto type = dyn_cast<RankedTensorType>(root.getType());
    if (!type || !isa<FloatType>(type.getElementType()))
      return failure();
    // The product that is not the 0.5 splat.
    Value product = otherThanSplat(root, 0.5);
    Value x;
    if (product) {
      auto inner = product.getDefiningOp<MulOp>();
      if (!inner || !inner->hasOneUse())
        return failure();
      for (auto [a, c] : {std::pair(inner.getLhs(), inner.getRhs()),
                          std::pair(inner.getRhs(), inner.getLhs())})
        if (Value from = erfPlusOne(c); from && from == a)
          x = a;
    } else {
      // x * ((erf(x / sqrt 2) + 1) * 0.5)
      for (auto [a, c] : {std::pair(root.getLhs(), root.getRhs()),
                          std::pair(root.getRhs(), root.getLhs())}) {
        auto half = c.getDefiningOp<MulOp>();
        if (!half || !half->hasOneUse())
          continue;
        Value sum = otherThanSplat(half, 0.5);
        if (Value from = sum ? erfPlusOne(sum) : nullptr; from && from == a)
          x = a;
      }
    }
    if (!x || x.getType() != root.getType())
      return failure();
    b.replaceOpWithNewOp<GeluOp>(root, root.getType(), x, GeluApproximation::none);
    return success();
  }
};

struct RecognizeGeluPass : kiln::impl::RecognizeGeluBase<RecognizeGeluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RecognizeErfGelu>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
