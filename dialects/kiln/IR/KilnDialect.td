//===- KilnDialect.td - the kiln dialect and its building blocks -*- tablegen -*-===//
//
// The dialect definition, its enums, the tensor type constraints and the
// base classes every op family builds on. Ops live in Kiln*Ops.td.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Model-level tensor operations with value semantics";
  let description = [{
    The `kiln` dialect is the whole-program form of a neural-network model in
    Kiln. Every value is a ranked tensor with static or dynamic (`?`) dims;
    ops have value semantics and no side effects. The op set is small and
    orthogonal: frontends map richer ops (ONNX Gemm, LeakyRelu, ...) onto
    it, and every op here has a lowering, a fusion rule and a gradient rule.

    Conventions shared by every op:
    - Axes, permutations and pads in attributes are normalised: axes are in
      `[0, rank)`; frontends resolve negative axes before building ops.
    - Binary elementwise ops broadcast like numpy: shapes are aligned at the
      trailing dim and a dim of 1 stretches.
    - Result types may be less refined than what can be inferred (a `?`
      where the size is known); `kiln-infer-shapes` refines them.
    - Integers are signless (`i8` ... `i64`, read as signed) or unsigned
      (`ui8` ... `ui64`, as quantised models and bit operations use them);
      comparisons, division, remainder, max/min and casts follow the
      signedness of the type.
  }];
  let hasConstantMaterializer = 1;
  // Kiln's own attributes on ops of other dialects (and on kiln ops beyond
  // their ODS attributes). Each is declared here once; code reads and
  // writes it through `KilnDialect::<Name>AttrHelper`, and the dialect
  // verifies it wherever it appears.
  let discardableAttrs = (ins
    // On a func argument or result: its name in the model.
    "::mlir::StringAttr":$name,
    // On a kernel, convolution, matmul, pool, concat, mean or mul (a
    // channel scale) a backend claimed: its index in the artifact's
    // library-call table.
    "::mlir::IntegerAttr":$library_call,
    // On a claimed epilogue kernel (and the library_call it becomes): the
    // operand whose buffer the call's output starts as (the residual).
    "::mlir::IntegerAttr":$residual_operand,
    // On a claimed op (and the library_call it becomes): how many leading
    // operands the call reads as its inputs and weight, passed before its
    // output buffer (any after them: the residual, the bias).
    "::mlir::IntegerAttr":$library_inputs,
    // On a claimed convolution (and the library_call it becomes) whose
    // only use is a channel concatenation: the channel at which its output
    // starts there. The linalg phase gives the call the concatenation's
    // tensor as its last operand and result; the call writes its output
    // into that buffer's channels directly (no copy).
    "::mlir::IntegerAttr":$output_into,
    // On a claimed convolution or pool (and the library_call it becomes)
    // whose output's spatial dims are known only at run time: per spatial
    // dim, the window's extent, its stride, its low and its high padding,
    // then the pool's ceil mode (0 or 1): [extent..., stride..., low...,
    // high..., ceil]; the output's size there is max(0, (input + low + high
    // - extent) floordiv stride + 1), or ONNX's ceil-mode count
    // (lowering::windowCount).
    "::mlir::DenseI64ArrayAttr":$output_window,
    // On a `reduction` kernel: the number of leading dims it iterates row
    // by row.
    "::mlir::IntegerAttr":$outer_dims,
    // On a function after kiln-plan-memory: its arena and plan summary.
    "::mlir::DictionaryAttr":$memory_plan,
    // On the memref.alloc of a function's arena.
    "::mlir::UnitAttr":$arena
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Types accepted by kiln ops
//===----------------------------------------------------------------------===//

def Kiln_FloatElement : AnyTypeOf<[F32, F16, BF16, F64]>;
def Kiln_IntElement : AnyTypeOf<[I64, I32, I8]>;
// Storage-only element types (ONNX's float8, float4 and 4- and 2-bit
// integers): tensors of them are moved and converted (kiln.cast), never
// computed on; one element per byte in memory.
def Kiln_LowPrecisionElements {
  list<Type> types = [F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0FNU,
                      F4E2M1FN, I<4>, UI<4>, I<2>, UI<2>];
}
def Kiln_Element : AnyTypeOf<!listconcat([F32, F16, BF16, F64, I64, I32, I16,
                                          I8, UI64, UI32, UI16, UI8, I1],
                                         Kiln_LowPrecisionElements.types)>;

def Kiln_Tensor : RankedTensorOf<!listconcat([F32, F16, BF16, F64, I64, I32,
                                              I16, I8, UI64, UI32, UI16, UI8,
                                              I1],
                                             Kiln_LowPrecisionElements.types)>;
def Kiln_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
def Kiln_NumericTensor : RankedTensorOf<[F32, F16, BF16, F64, I64, I32, I16, I8,
                                         UI64, UI32, UI16, UI8]>;
def Kiln_IntTensor : RankedTensorOf<[I64, I32, I16, I8, UI64, UI32, UI16, UI8]>;
def Kiln_UnsignedTensor : RankedTensorOf<[UI64, UI32, UI16, UI8]>;
def Kiln_BoolTensor : RankedTensorOf<[I1]>;
// Logical on bool, bitwise on integers.
def Kiln_BitsTensor : RankedTensorOf<[I1, I64, I32, I16, I8, UI64, UI32, UI16, UI8]>;
def Kiln_IndexTensor : RankedTensorOf<[I64, I32]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Kiln_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "elementwise comparison predicate", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::kiln";
}

def Kiln_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how gelu is computed", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::kiln";
}

def Kiln_KernelKind : I32EnumAttr<"KernelKind",
    "the pattern a kiln.kernel follows", [
      I32EnumAttrCase<"epilogue", 0>, I32EnumAttrCase<"reduction", 1>,
      I32EnumAttrCase<"elementwise", 2>]> {
  let cppNamespace = "::kiln";
}

def Kiln_PadMode : I32EnumAttr<"PadMode", "how pad fills new elements", [
      I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
      I32EnumAttrCase<"edge", 2>, I32EnumAttrCase<"wrap", 3>]> {
  let cppNamespace = "::kiln";
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

/// An op whose result types are inferred by a C++ function and may be less
/// refined than the inferred ones (compatible shapes), so that IR with `?`
/// dims still verifies before `kiln-infer-shapes` has run. Each op provides
/// `inferReturnTypes(ctx, loc, Adaptor, types)`; `inferCall` is the body of
/// that function when a family shares one.
class Kiln_InferredOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits,
          [Pure, InferTypeOpAdaptorWithIsCompatible])> {
  code inferCall = "";
  let extraClassDefinition = !if(!empty(inferCall), "", [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      }] # inferCall # [{
    }
  }]) # [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange lhs,
                                            ::mlir::TypeRange rhs) {
      return ::kiln::areCompatibleResultTypes(lhs, rhs);
    }
  }];
}

#endif // KILN_DIALECT_TD
