//===- KilnKernelOps.td - fusion groups -*- tablegen -*-===//
//
// A kernel is a group of kiln ops that code generation treats as one unit
// (kiln-fuse builds them). It is isolated from above: its operands are the
// group's inputs, its body the ops, its yield the group's result.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_KERNEL_OPS_TD
#define KILN_KERNEL_OPS_TD

include "dialects/kiln/IR/KilnDialect.td"

def Kiln_KernelOp : Kiln_Op<"kernel", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "a group of kiln ops run as one kernel";
  let description = [{
    `kind` names the pattern the group follows: `epilogue` is a convolution
    or matmul followed by its elementwise epilogue (bias, residual add,
    activation), which a backend may run as one library call with
    post-ops; `reduction` is a reduction over trailing dims with its
    elementwise prologue and epilogue, computed row by row over the first
    `kiln.outer_dims` dims; `elementwise` is a tree of elementwise ops.
    The body's block arguments are the operands, in order; its
    `kiln.yield` gives the results. Code generation that has no better way
    inlines the body.

    ```mlir
    %y = kiln.kernel epilogue (%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>,
                                               tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
    ^bb0(%a: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>, %c: tensor<4x1x1xf32>):
      %0 = kiln.conv %a, %k {...} : (...) -> tensor<1x4x6x6xf32>
      %1 = kiln.add %0, %c : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
      %2 = kiln.relu %1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
      kiln.yield %2 : tensor<1x4x6x6xf32>
    }
    ```
  }];
  let arguments = (ins Kiln_KernelKind:$kind, Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ops of the body, without the terminator.
    auto bodyOps() { return getBody().front().without_terminator(); }
    /// Puts the body's ops in place of the kernel (on its operands), gives
    /// the kernel's users the yielded values, and erases the kernel.
    void inlineBody();
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, Terminator, HasParent<"KernelOp">]> {
  let summary = "the results of a kernel";
  let description = [{
    Ends a `kiln.kernel` body; its operands become the kernel's results.

    ```mlir
    kiln.yield %2 : tensor<1x4x6x6xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def Kiln_LibraryCallOp : Kiln_Op<"library_call", []> {
  let summary = "an operation a backend runs in a library";
  let description = [{
    Call `id` of the artifact's library-call table (a oneDNN convolution
    or matmul on CPU, with its fused epilogue) on `operands`: the input,
    the weight, then the epilogue's bias and residual when the call has
    them. What the call computes is in the table, not in the IR: this op
    is what a convolution, matmul or epilogue kernel the backend claimed
    (`kiln.library_call = id`) becomes in the linalg phase, and it
    bufferises into a call of the runtime.

    ```mlir
    %y = kiln.library_call 3 (%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>,
                                             tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
    ```
  }];
  let arguments = (ins I32Attr:$id, Variadic<AnyRankedTensor>:$operands);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $id `(` $operands `)` attr-dict `:` functional-type($operands, $result)
  }];
}

#endif // KILN_KERNEL_OPS_TD
