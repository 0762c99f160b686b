//===- KilnKernelOps.cpp - kiln.kernel and kiln.yield ---------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace kiln;

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("has ") << getInputs().size() << " operands but its body takes "
                               << body.getNumArguments();
  for (auto [i, operand, argument] : llvm::enumerate(getInputs(), body.getArguments()))
    if (operand.getType() != argument.getType())
      return emitOpError("operand ") << i << " is " << operand.getType()
                                     << " but the body takes " << argument.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ") << yield.getValues().getTypes() << " but returns "
                                  << getResultTypes();
  return success();
}

void KernelOp::inlineBody() {
  OpBuilder b(*this);
  IRMapping map;
  for (auto [arg, input] : llvm::zip(getBody().getArguments(), getInputs()))
    map.map(arg, input);
  for (Operation &op : bodyOps())
    b.clone(op, map);
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  for (auto [result, value] : llvm::zip(getResults(), yield.getValues()))
    result.replaceAllUsesWith(map.lookupOrDefault(value));
  erase();
}
