//===- KilnInterfaces.td - interfaces of kiln ops -*- tablegen -*-===//
//
// Declared by the dialect, implemented elsewhere: the gradient rules live in
// compiler/Autodiff and attach to the ops as external models, so the
// dialect does not depend on the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_INTERFACES_TD
#define KILN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Kiln_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::kiln";
  let description = [{
    The op's reverse-mode rule (vector-Jacobian product): given the
    gradients of its results (a null Value where a result gets none),
    builds the gradients of its operands at the builder's insertion point,
    one per operand, a null Value for an operand that carries none (an
    integer or boolean operand, an index, a shape). Gradients have the
    operand's type: broadcasting is undone by summing. `kiln-differentiate`
    calls it; an op without the interface that a gradient must cross is
    reported by name.
  }];
  let methods = [
    InterfaceMethod<
      "Builds the operands' gradients from the results'.",
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGradients,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>
  ];
}

#endif // KILN_INTERFACES_TD
