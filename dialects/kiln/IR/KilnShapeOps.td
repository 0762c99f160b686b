//===- KilnShapeOps.td - data movement ops -*- tablegen -*-===//
//
// Ops that move data without arithmetic: reshape, transpose, expand
// (broadcast), concat, split, slice, gather and pad.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SHAPE_OPS_TD
#define KILN_SHAPE_OPS_TD

include "dialects/kiln/IR/KilnDialect.td"

def Kiln_ReshapeOp : Kiln_InferredOp<"reshape",
                                     [SameOperandsAndResultElementType]> {
  let summary = "the same elements in row-major order under a new shape";
  let description = [{
    `shape` gives each result dim: a positive size, `0` to copy the input's
    dim at the same index, or `-1` (at most once) for the size that keeps the
    element count. `0` and `-1` let one op serve every batch size when the
    batch dim is dynamic.

    ```mlir
    %r = kiln.reshape %x {shape = array<i64: 0, -1, 12, 64>}
        : (tensor<?x128x768xf32>) -> tensor<?x128x12x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_TransposeOp : Kiln_InferredOp<"transpose",
                                       [SameOperandsAndResultElementType]> {
  let summary = "permutation of dims";
  let description = [{
    Result dim `i` is input dim `permutation[i]`.

    ```mlir
    %r = kiln.transpose %x {permutation = array<i64: 0, 2, 1, 3>}
        : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_ExpandOp : Kiln_InferredOp<"expand",
                                    [SameOperandsAndResultElementType]> {
  let summary = "broadcast to a shape (numpy rules, both ways)";
  let description = [{
    Broadcasts `input` together with `shape` as numpy would: the result shape
    is the broadcast of the two, so a 1 in `shape` keeps the input's dim
    (which is how a dynamic dim survives).

    ```mlir
    %r = kiln.expand %x {shape = array<i64: 4, 1, 3>}
        : (tensor<?x3xf32>) -> tensor<4x?x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_InferredOp<"concat",
                                    [SameOperandsAndResultElementType]> {
  let summary = "join tensors along one axis";
  let description = [{
    All inputs have the same rank and agree on every dim but `axis`.

    ```mlir
    %r = kiln.concat %a, %b {axis = 1 : i64}
        : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_SplitOp : Kiln_InferredOp<"split",
                                   [SameOperandsAndResultElementType]> {
  let summary = "cut a tensor into pieces along one axis";
  let description = [{
    Result `i` takes `sizes[i]` consecutive entries of `axis`; the sizes add
    up to that dim.

    ```mlir
    %q, %k, %v = kiln.split %x {axis = 2 : i64, sizes = array<i64: 768, 768, 768>}
        : (tensor<1x128x2304xf32>) -> (tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>)
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_SliceOp : Kiln_InferredOp<"slice",
                                   [SameOperandsAndResultElementType]> {
  let summary = "strided window of a tensor";
  let description = [{
    For every dim `d`, takes indices `starts[d], starts[d] + steps[d], ...`
    up to but excluding `ends[d]`. Negative starts and ends count from the
    end; both are clamped to the dim as in ONNX Slice (so `ends` may be a
    large sentinel). Steps are non-zero and may be negative.

    ```mlir
    %r = kiln.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 2, 9223372036854775807>,
                        steps = array<i64: 1, 2>} : (tensor<2x10xf32>) -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_GatherOp : Kiln_InferredOp<"gather"> {
  let summary = "take entries along one axis by index";
  let description = [{
    Result shape is `data.shape[:axis] + indices.shape +
    data.shape[axis+1:]`. Negative indices count from the end; an index
    still out of range reads the nearest entry (indices are not checked:
    an importer that must refuse one checks it with its own shape check).
    An axis with no elements has no entry to read: every element is 0.

    ```mlir
    %r = kiln.gather %table, %ids {axis = 0 : i64}
        : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let hasFolder = 1;
  let assemblyFormat = "$data `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
}

def Kiln_PadOp : Kiln_InferredOp<"pad", [SameOperandsAndResultElementType]> {
  let summary = "grow (or, with negative pads, crop) every dim";
  let description = [{
    `pads` holds every dim's low pad, then every high pad. New elements are
    `value` (mode `constant`), a mirror without the edge (`reflect`), a
    copy of the edge (`edge`) or the other end's elements, as if the dim
    repeated (`wrap`, circular padding). `reflect`, `edge` and `wrap` read
    from the input, so an input with no elements and a result with some
    is an error: refused when compiling where the shapes say so, else a
    shape error when the model runs. A crop larger than a dim known only
    at run time is a shape error too.

    ```mlir
    %r = kiln.pad %x mode reflect {pads = array<i64: 0, 1, 0, 1>}
        : (tensor<2x3xf32>) -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<Kiln_PadMode,
                                         "::kiln::PadMode::constant">:$mode,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input (`mode` $mode^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Run-time shapes: a tensor's dims as a tensor, and tensors whose dims are
// read from a tensor when the model runs.
//===----------------------------------------------------------------------===//

def Kiln_ShapeOfOp : Kiln_InferredOp<"shape_of"> {
  let summary = "the dims of a tensor, as a 1-D i64 tensor";
  let description = [{
    ONNX `Shape` of a tensor with dynamic dims: the result is read when the
    model runs. It folds to a constant when every dim is static.

    ```mlir
    %s = kiln.shape_of %x : (tensor<?x3xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_IotaOp : Kiln_InferredOp<"iota"> {
  let summary = "the index along one dim, over a shape given as a tensor";
  let description = [{
    The result's rank is the (static) length of `shape`; its dims are the
    values of `shape`, read when the model runs (a dim is static where
    `shape` is a constant). Each element is its index along `axis`. A
    negative size is a run-time error. Ops whose result dims come from a
    tensor's values (ONNX Range, OneHot with a run-time depth, Expand,
    ConstantOfShape, Slice, Tile, Pad with run-time operands) are built from
    it, broadcasting and `kiln.gather`.

    ```mlir
    %i = kiln.iota %shape {axis = 1 : i64} : (tensor<2xi64>) -> tensor<?x?xi64>
    ```
  }];
  let arguments = (ins Kiln_IndexTensor:$shape, I64Attr:$axis);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_DynamicReshapeOp : Kiln_InferredOp<"dynamic_reshape"> {
  let summary = "kiln.reshape to a shape read when the model runs";
  let description = [{
    As `kiln.reshape`, with the target shape a 1-D tensor (ONNX Reshape,
    Unsqueeze and Squeeze with run-time operands): `0` copies the input's
    dim at that index unless `allow_zero` is set, `-1` (at most once) is the
    size that keeps the element count. A shape that does not keep the
    element count is a run-time error. The result's rank is the length of
    `shape`; a dim is static where `shape` is a constant positive size, or
    where `known_dims` (optional, one entry per result dim, -1 for
    unknown) gives it: what the importer proved or assumed of a shape
    computed from dynamic dims, checked when the model runs (a different
    size is a run-time error, never a wrong result).

    ```mlir
    %r = kiln.dynamic_reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$shape,
                       DefaultValuedAttr<BoolAttr, "false">:$allow_zero,
                       OptionalAttr<DenseI64ArrayAttr>:$known_dims);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

#endif // KILN_SHAPE_OPS_TD
