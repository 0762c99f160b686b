//===- KilnElementwiseOps.td - constants and elementwise ops -*- tablegen -*-===//
//
// Constants, unary and binary elementwise ops (numpy broadcasting),
// comparisons, select and cast. Each family is one class: adding an op of an
// existing family is one line here plus its lowering and gradient rule.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ELEMENTWISE_OPS_TD
#define KILN_ELEMENTWISE_OPS_TD

include "dialects/kiln/IR/KilnDialect.td"

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_InferredOp<"constant", [ConstantLike]> {
  let summary = "a tensor constant (small literal or weight resource)";
  let description = [{
    Produces a tensor from an elements attribute. Small values are dense
    literals; model weights are `dense_resource` blobs so that a large tensor
    is held once by the context's resource manager, not uniqued as an
    attribute. The shape must be static.

    ```mlir
    %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %w = kiln.constant dense_resource<conv1_weight> : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasVerifier = 1;
  let hasFolder = 1;
  let inferCall = [{
    inferred.push_back(adaptor.getValue().getType());
    return ::mlir::success();
  }];
}

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, string what, Type operandType,
                   list<Trait> traits = []>
    : Kiln_InferredOp<mnemonic, !listconcat(traits,
          [SameOperandsAndResultElementType])> {
  let summary = "elementwise " # what;
  let description = "Computes " # what # " of every element. The result has "
    # "the operand's type.\n\n```mlir\n%r = kiln." # mnemonic
    # " %x : (tensor<2x?xf32>) -> tensor<2x?xf32>\n```";
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let inferCall = [{
    inferred.push_back(adaptor.getInput().getType());
    return ::mlir::success();
  }];
}

def Kiln_NegOp : Kiln_UnaryOp<"neg", "negation", Kiln_NumericTensor> {
  let hasFolder = 1;
}
def Kiln_AbsOp : Kiln_UnaryOp<"abs", "absolute value", Kiln_NumericTensor>;
def Kiln_SignOp : Kiln_UnaryOp<"sign", "sign (-1, 0 or 1)", Kiln_NumericTensor>;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", "e raised to the element", Kiln_FloatTensor>;
def Kiln_LogOp : Kiln_UnaryOp<"log", "natural logarithm", Kiln_FloatTensor>;
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", "square root", Kiln_FloatTensor>;
def Kiln_RsqrtOp : Kiln_UnaryOp<"rsqrt", "reciprocal square root", Kiln_FloatTensor>;
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", "1 / x", Kiln_FloatTensor>;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", "max(x, 0)", Kiln_NumericTensor>;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", "the logistic function", Kiln_FloatTensor>;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", "hyperbolic tangent", Kiln_FloatTensor>;
def Kiln_ErfOp : Kiln_UnaryOp<"erf", "the error function", Kiln_FloatTensor>;
def Kiln_SinOp : Kiln_UnaryOp<"sin", "sine", Kiln_FloatTensor>;
def Kiln_AtanOp : Kiln_UnaryOp<"atan", "arc tangent", Kiln_FloatTensor>;
def Kiln_CosOp : Kiln_UnaryOp<"cos", "cosine", Kiln_FloatTensor>;
def Kiln_FloorOp : Kiln_UnaryOp<"floor", "rounding toward -inf", Kiln_FloatTensor>;
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", "rounding toward +inf", Kiln_FloatTensor>;
def Kiln_RoundOp : Kiln_UnaryOp<"round", "rounding half to even", Kiln_FloatTensor>;
def Kiln_NotOp : Kiln_UnaryOp<"not", "logical not (bitwise on integers)", Kiln_BitsTensor> {
  let hasFolder = 1;
}
def Kiln_StopGradientOp : Kiln_UnaryOp<"stop_gradient",
    "the element itself, through which no gradient flows", Kiln_Tensor> {
  let description = [{
    The identity for computing values; `kiln-differentiate` sends no
    gradient through it (its operand gets none from this use). The graph
    phase replaces it by its operand.

    ```mlir
    %r = kiln.stop_gradient %x : (tensor<8xf32>) -> tensor<8xf32>
    ```
  }];
}

def Kiln_GeluOp : Kiln_UnaryOp<"gelu", "the Gaussian error linear unit",
                               Kiln_FloatTensor> {
  let description = [{
    `x * 0.5 * (1 + erf(x / sqrt(2)))`, or with `approximation = tanh`
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.

    ```mlir
    %r = kiln.gelu %x approximation tanh : (tensor<8xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
      DefaultValuedAttr<Kiln_GeluApproximation,
                        "::kiln::GeluApproximation::none">:$approximation);
  let assemblyFormat = "$input (`approximation` $approximation^)? attr-dict "
                       "`:` functional-type(operands, results)";
}

def Kiln_ClipOp : Kiln_UnaryOp<"clip", "clamping into [min, max]",
                               Kiln_NumericTensor> {
  let description = [{
    Clamps every element into `[min, max]`. NaN stays NaN. Bounds are held as
    f64 and converted to the element type.

    ```mlir
    %r = kiln.clip %x {min = 0.0, max = 6.0} : (tensor<8xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, F64Attr:$min, F64Attr:$max);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Binary elementwise with numpy broadcasting
//===----------------------------------------------------------------------===//

class Kiln_BinaryOp<string mnemonic, string what, Type operandType,
                    list<Trait> traits = []>
    : Kiln_InferredOp<mnemonic, !listconcat(traits,
          [SameOperandsAndResultElementType])> {
  let summary = "elementwise " # what # " with broadcasting";
  let description = "Computes " # what # " of the broadcast operands. Shapes "
    # "broadcast like numpy: aligned at the trailing dim, a dim of 1 "
    # "stretches.\n\n```mlir\n%r = kiln." # mnemonic
    # " %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>\n```";
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let inferCall = [{
    return ::kiln::inferBroadcastResult(
        location, {adaptor.getLhs().getType(), adaptor.getRhs().getType()},
        ::mlir::cast<::mlir::ShapedType>(adaptor.getLhs().getType())
            .getElementType(),
        inferred);
  }];
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "sum", Kiln_NumericTensor, [Commutative]> {
  let hasFolder = 1;
}
def Kiln_SubOp : Kiln_BinaryOp<"sub", "difference", Kiln_NumericTensor> {
  let hasFolder = 1;
}
def Kiln_MulOp : Kiln_BinaryOp<"mul", "product", Kiln_NumericTensor, [Commutative]> {
  let hasFolder = 1;
}
def Kiln_DivOp : Kiln_BinaryOp<"div", "quotient (integers truncate toward zero; " #
                               "x / 0 is 0, the signed minimum / -1 the minimum)",
                               Kiln_NumericTensor> {
  let hasFolder = 1;
}
def Kiln_RemOp : Kiln_BinaryOp<"rem", "remainder with the sign of the dividend " #
                               "(integers: x % 0 and the signed minimum % -1 are 0)",
                               Kiln_NumericTensor> {
  let hasFolder = 1;
}
def Kiln_PowOp : Kiln_BinaryOp<"pow", "lhs raised to rhs", Kiln_FloatTensor>;
def Kiln_MaxOp : Kiln_BinaryOp<"max", "maximum (NaN propagates)",
                               Kiln_NumericTensor, [Commutative]> {
  let hasFolder = 1;
}
def Kiln_MinOp : Kiln_BinaryOp<"min", "minimum (NaN propagates)",
                               Kiln_NumericTensor, [Commutative]> {
  let hasFolder = 1;
}
def Kiln_AndOp : Kiln_BinaryOp<"and", "logical and (bitwise on integers)", Kiln_BitsTensor,
                               [Commutative]> {
  let hasFolder = 1;
}
def Kiln_OrOp : Kiln_BinaryOp<"or", "logical or (bitwise on integers)", Kiln_BitsTensor,
                              [Commutative]> {
  let hasFolder = 1;
}
def Kiln_XorOp : Kiln_BinaryOp<"xor", "logical exclusive or (bitwise on integers)", Kiln_BitsTensor,
                               [Commutative]> {
  let hasFolder = 1;
}
def Kiln_ShiftLeftOp : Kiln_BinaryOp<"shift_left",
    "lhs shifted left by rhs bits (0 when rhs is negative or >= the bit width)",
    Kiln_IntTensor>;
def Kiln_ShiftRightOp : Kiln_BinaryOp<"shift_right",
    "lhs shifted right by rhs bits, logically for unsigned and arithmetically for "
    "signed lhs (when rhs is negative or >= the bit width: -1 for a negative "
    "signed lhs, else 0)",
    Kiln_IntTensor>;

def Kiln_CompareOp : Kiln_InferredOp<"compare", [SameOperandsElementType]> {
  let summary = "elementwise comparison with broadcasting";
  let description = [{
    Compares the broadcast operands with `predicate` and yields i1. Ordered
    comparisons with NaN are false; `ne` with NaN is true.

    ```mlir
    %r = kiln.compare lt, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_ComparePredicate:$predicate,
                       Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
  let inferCall = [{
    return ::kiln::inferBroadcastResult(
        location, {adaptor.getLhs().getType(), adaptor.getRhs().getType()},
        ::mlir::IntegerType::get(context, 1), inferred);
  }];
}

def Kiln_SelectOp : Kiln_InferredOp<"select"> {
  let summary = "elementwise choice between two tensors, with broadcasting";
  let description = [{
    Yields `on_true` where `condition` holds and `on_false` elsewhere. All
    three operands broadcast together.

    ```mlir
    %r = kiln.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$on_true,
                       Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$condition `,` $on_true `,` $on_false attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
  let hasVerifier = 1;
  let inferCall = [{
    return ::kiln::inferBroadcastResult(
        location,
        {adaptor.getCondition().getType(), adaptor.getOnTrue().getType(),
         adaptor.getOnFalse().getType()},
        ::mlir::cast<::mlir::ShapedType>(adaptor.getOnTrue().getType())
            .getElementType(),
        inferred);
  }];
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts every element to the result's element type. Float to integer
    truncates toward zero; to i1 is `x != 0`; integer narrowing wraps.
    Float to a narrower float rounds to nearest even; a value beyond the
    result type's range becomes infinity (NaN for a type without one), or,
    with `saturate`, the largest finite value of its sign (infinities too;
    NaN stays NaN). To the storage-only types: float to a 4- or 2-bit
    integer gives 0 for a value outside its range (as ONNX's reference);
    to f8E8M0FNU (a bare power of two) rounds up to the next power of two
    and drops the sign; to a type without NaN (f4E2M1FN), NaN becomes -0.

    ```mlir
    %r = kiln.cast %x : tensor<4xf32> to tensor<4xi32>
    %q = kiln.cast %x {saturate} : tensor<4xf32> to tensor<4xf8E4M3FN>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, UnitAttr:$saturate);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

def Kiln_BitcastOp : Kiln_Op<"bitcast", [Pure, SameOperandsAndResultShape]> {
  let summary = "elementwise reinterpretation of the bits as another type";
  let description = [{
    Every element's bits read as the result's element type, which has the
    same width; a bool becomes the 8-bit integer 0 or 1 (ONNX BitCast).

    ```mlir
    %r = kiln.bitcast %x : tensor<4xf32> to tensor<4xi32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

#endif // KILN_ELEMENTWISE_OPS_TD
