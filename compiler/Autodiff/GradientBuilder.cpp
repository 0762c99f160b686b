//===- GradientBuilder.cpp - helpers of the gradient rules ----------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "dialects/kiln/Utils/Backpropagate.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace kiln::autodiff {

Value scalar(OpBuilder &b, Location loc, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  return ConstantOp::create(b, loc,
                            DenseElementsAttr::get(type, b.getFloatAttr(elementType, value)));
}

Value filled(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), value)));
}

Value padWith(OpBuilder &b, Location loc, Value x, llvm::ArrayRef<int64_t> pads, double value) {
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < rank; ++d)
    shape[d] += pads[d] + pads[rank + d];
  return PadOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), x,
                       b.getDenseI64ArrayAttr(pads), PadModeAttr::get(b.getContext(), PadMode::constant),
                       b.getF64FloatAttr(value));
}

bool isDifferentiable(Value v) { return carriesGradient(v); }

FailureOr<Value> unbroadcast(OpBuilder &b, Location loc, Value grad, RankedTensorType type) {
  RankedTensorType from = typeOf(grad);
  if (from.getShape() == type.getShape())
    return grad;
  int64_t lead = from.getRank() - type.getRank();
  if (lead < 0) {
    emitError(loc) << "gradient of rank " << from.getRank() << " for an operand of rank "
                   << type.getRank();
    return failure();
  }
  // Dims broadcasting added in front, and dims of 1 it stretched.
  llvm::SmallVector<int64_t> axes;
  for (int64_t d = 0; d < from.getRank(); ++d) {
    if (d < lead) {
      axes.push_back(d);
      continue;
    }
    int64_t want = type.getDimSize(d - lead), have = from.getDimSize(d);
    if (want == have)
      continue;
    if (want == 1) {
      axes.push_back(d);
      continue;
    }
    emitError(loc) << "cannot undo broadcasting from " << from << " to " << type
                   << " (dynamic dims: differentiate after kiln-infer-shapes, with static "
                      "shapes)";
    return failure();
  }
  Value summed = grad;
  if (!axes.empty())
    summed = ReduceSumOp::create(b, loc, grad, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  if (typeOf(summed).getShape() != type.getShape())
    summed = ReshapeOp::create(b, loc, type, summed, b.getDenseI64ArrayAttr(type.getShape()));
  return summed;
}

LogicalResult pushUnbroadcast(OpBuilder &b, Location loc,
                              llvm::ArrayRef<std::pair<Value, Value>> pairs,
                              llvm::SmallVectorImpl<Value> &out) {
  for (auto [grad, operand] : pairs) {
    if (!grad || !isDifferentiable(operand)) {
      out.push_back(Value());
      continue;
    }
    FailureOr<Value> g = unbroadcast(b, loc, grad, typeOf(operand));
    if (failed(g))
      return failure();
    out.push_back(*g);
  }
  return success();
}

FailureOr<Value> spread(OpBuilder &b, Location loc, Value grad, llvm::ArrayRef<int64_t> axes,
                        bool keepDims, RankedTensorType type) {
  if (!type.hasStaticShape()) {
    emitError(loc) << "the gradient of a reduction over " << type
                   << " needs static shapes (differentiate after kiln-infer-shapes)";
    return failure();
  }
  Value g = grad;
  if (!keepDims) {
    llvm::SmallVector<int64_t> kept(type.getShape());
    for (int64_t a : axes)
      kept[a < 0 ? a + type.getRank() : a] = 1;
    auto keptType = RankedTensorType::get(kept, type.getElementType());
    g = ReshapeOp::create(b, loc, keptType, g, b.getDenseI64ArrayAttr(kept));
  }
  return Value(ExpandOp::create(b, loc, type, g, b.getDenseI64ArrayAttr(type.getShape())));
}

void registerGradientRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, KilnDialect *) {
    registerElementwiseRules(context);
    registerNNRules(context);
    registerShapeRules(context);
    registerConvPoolRules(context);
  });
}

} // namespace kiln::autodiff
