//===- ConvertKilnToLinalg.cpp - the kiln-convert-to-linalg pass ----------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct ConvertKilnToLinalgPass
    : kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    kiln::populateElementwiseToLinalgPatterns(patterns);
    kiln::populateReductionToLinalgPatterns(patterns);
    kiln::populateDataMovementToLinalgPatterns(patterns);
    kiln::populateContractionToLinalgPatterns(patterns);
    ConversionTarget target(*context);
    target.addIllegalDialect<kiln::KilnDialect>();
    // A backend that runs a convolution in a library marks it; it is
    // bufferised into a call instead of lowered here.
    target.addDynamicallyLegalOp<kiln::ConvOp, kiln::MatmulOp>(
        [](Operation *op) { return op->hasAttr("kiln.library_call"); });
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           func::FuncDialect>();
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
