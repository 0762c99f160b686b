//===- Backpropagate.cpp - reverse mode over a run of kiln ops ------------===//

#include "dialects/kiln/Utils/Backpropagate.h"

using namespace mlir;

namespace kiln {

bool carriesGradient(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

LogicalResult accumulateGradient(OpBuilder &b, llvm::DenseMap<Value, Value> &grads, Value v,
                                 Value g, Operation *from) {
  if (!g || !carriesGradient(v))
    return success();
  auto gt = cast<RankedTensorType>(g.getType()), vt = cast<RankedTensorType>(v.getType());
  if (gt.getShape() != vt.getShape() || gt.getElementType() != vt.getElementType())
    return from->emitOpError("gradient rule gave ")
           << g.getType() << " for an operand of type " << v.getType();
  auto [it, inserted] = grads.try_emplace(v, g);
  if (!inserted)
    it->second = AddOp::create(b, from->getLoc(), it->second, g);
  return success();
}

LogicalResult backpropagate(OpBuilder &b, ArrayRef<Operation *> ops,
                            llvm::DenseMap<Value, Value> &grads) {
  for (Operation *op : llvm::reverse(ops)) {
    llvm::SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(grads.lookup(r));
      any |= bool(resultGrads.back());
    }
    if (!any)
      continue;
    auto rule = dyn_cast<DifferentiableOpInterface>(op);
    if (!rule) {
      if (llvm::none_of(op->getOperands(), carriesGradient))
        continue; // a constant, or a value computed from integers
      return op->emitOpError("has no gradient rule; rules are in compiler/Autodiff/*Rules.cpp");
    }
    for (auto [r, g] : llvm::zip(op->getResults(), resultGrads))
      if (!g && carriesGradient(r)) {
        auto type = cast<RankedTensorType>(r.getType());
        g = ConstantOp::create(
            b, op->getLoc(),
            DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0.0)));
      }
    llvm::SmallVector<Value> operandGrads;
    if (failed(rule.buildGradients(b, resultGrads, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitOpError("gradient rule gave ")
             << operandGrads.size() << " gradients for " << op->getNumOperands() << " operands";
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads))
      if (failed(accumulateGradient(b, grads, operand, g, op)))
        return failure();
  }
  return success();
}

} // namespace kiln
