//===- GradientBuilder.h - what gradient rules build with -------*- C++ -*-===//
//
// Helpers the gradient rules share (constants, undoing broadcasting) and
// the registration of every rule as an external model of the dialect's
// DifferentiableOpInterface. Rules live by op family next to each other:
// ElementwiseRules.cpp, NNRules.cpp (contractions, reductions, softmax),
// ConvPoolRules.cpp, ShapeRules.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_AUTODIFF_GRADIENTBUILDER_H
#define KILN_COMPILER_AUTODIFF_GRADIENTBUILDER_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"

namespace kiln::autodiff {

/// A rank-0 tensor holding `value` of element type `elementType` (it
/// broadcasts against any tensor in kiln's binary ops).
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elementType, double value);

/// A tensor of `type` filled with `value`.
mlir::Value filled(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                   double value);

/// `grad` (of a broadcast result) summed over the dims broadcasting added
/// or stretched, so that it has `type` (the operand's). Fails, with a
/// diagnostic on `loc`, on dynamic dims it cannot resolve.
mlir::FailureOr<mlir::Value> unbroadcast(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::Value grad, mlir::RankedTensorType type);

/// Appends unbroadcast(grad, operand's type) to `out` for each (grad,
/// operand) pair; a null grad, or an operand that carries no gradient,
/// appends a null Value.
mlir::LogicalResult pushUnbroadcast(mlir::OpBuilder &b, mlir::Location loc,
                                   llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> pairs,
                                   llvm::SmallVectorImpl<mlir::Value> &out);

/// `grad` of a reduction's result (over `axes`, `keepDims`) spread back to
/// every element of the input's `type`.
mlir::FailureOr<mlir::Value> spread(mlir::OpBuilder &b, mlir::Location loc, mlir::Value grad,
                                    llvm::ArrayRef<int64_t> axes, bool keepDims,
                                    mlir::RankedTensorType type);

/// `x` padded with `value` (`pads`: every dim's low amount, then every
/// dim's high amount, as kiln.pad), static shapes.
mlir::Value padWith(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    llvm::ArrayRef<int64_t> pads, double value);

/// The tensor type of a value.
inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// Whether `v` can carry a gradient (a floating-point tensor).
bool isDifferentiable(mlir::Value v);

/// A rule: the operands' gradients of `op` from its results'.
template <typename Op>
using Rule = llvm::LogicalResult (*)(Op op, mlir::OpBuilder &b,
                                     llvm::ArrayRef<mlir::Value> resultGrads,
                                     llvm::SmallVectorImpl<mlir::Value> &operandGrads);

/// Attaches `rule` to `Op` as its DifferentiableOpInterface.
template <typename Op, Rule<Op> rule>
struct RuleModel : DifferentiableOpInterface::ExternalModel<RuleModel<Op, rule>, Op> {
  llvm::LogicalResult buildGradients(mlir::Operation *op, mlir::OpBuilder &b,
                                     llvm::ArrayRef<mlir::Value> resultGrads,
                                     llvm::SmallVectorImpl<mlir::Value> &operandGrads) const {
    return rule(mlir::cast<Op>(op), b, resultGrads, operandGrads);
  }
};

void registerElementwiseRules(mlir::MLIRContext *context);
void registerNNRules(mlir::MLIRContext *context);
void registerShapeRules(mlir::MLIRContext *context);
void registerConvPoolRules(mlir::MLIRContext *context);

/// kiln-differentiate's rewrite of `f` into its VJP (with respect to the
/// arguments `wrt`; empty: every float one).
mlir::LogicalResult differentiate(mlir::func::FuncOp f, llvm::ArrayRef<int64_t> wrt);

/// kiln-rematerialize on `f`: how many forward values the backward pass
/// now recomputes instead of reading, and their bytes.
struct RematSummary {
  int64_t values = 0, bytes = 0;
};
RematSummary rematerialize(mlir::func::FuncOp f);
/// Where kiln-rematerialize leaves its summary on the function: an i64
/// array [values, bytes].
inline constexpr llvm::StringLiteral kRematAttr = "kiln_rematerialized";

/// Every gradient rule, attached when the kiln dialect loads.
void registerGradientRules(mlir::DialectRegistry &registry);

} // namespace kiln::autodiff

#endif // KILN_COMPILER_AUTODIFF_GRADIENTBUILDER_H
