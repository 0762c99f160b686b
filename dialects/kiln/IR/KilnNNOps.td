//===- KilnNNOps.td - contractions, windows, normalisation, reductions -*- tablegen -*-===//
//
// The ops that carry a model's arithmetic weight: batched matmul,
// convolution and pooling (channels-first, 1-3 spatial dims), batch and
// layer normalisation, softmax and reductions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_NN_OPS_TD
#define KILN_NN_OPS_TD

include "dialects/kiln/IR/KilnDialect.td"

def Kiln_MatmulOp : Kiln_InferredOp<"matmul", [SameOperandsAndResultElementType]> {
  let summary = "batched matrix product with broadcast batch dims";
  let description = [{
    `[..., M, K] x [..., K, N] -> [..., M, N]`. Both operands have rank >= 2;
    their leading (batch) dims broadcast like numpy. Frontends turn vectors
    into matrices and transposes into `kiln.transpose`.

    ```mlir
    %r = kiln.matmul %a, %b : (tensor<8x128x64xf32>, tensor<64x32xf32>) -> tensor<8x128x32xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Kiln_ConvOp : Kiln_InferredOp<"conv", [SameOperandsAndResultElementType]> {
  let summary = "grouped convolution, channels first, 1 to 3 spatial dims";
  let description = [{
    Input `[N, C, D...]`, weight `[O, C / groups, K...]`, result
    `[N, O, E...]` with `E = floor((D + pad_lo + pad_hi - dilation * (K - 1)
    - 1) / stride) + 1`. `pads` holds every spatial dim's low pad, then every
    high pad. Bias is a separate `kiln.add` (fusion folds it back in).

    ```mlir
    %r = kiln.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>,
                           dilations = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` "
                       "functional-type(operands, results)";
}

def Kiln_ConvTransposeOp : Kiln_InferredOp<"conv_transpose",
                                             [SameOperandsAndResultElementType]> {
  let summary = "grouped transposed convolution, channels first, 1 to 3 spatial dims";
  let description = [{
    The gradient of `kiln.conv` with respect to its input (ONNX
    ConvTranspose, PyTorch's conv_transpose). Input `[N, C, D...]`, weight
    `[C, O / groups, K...]`, result `[N, O, E...]` with `E = (D - 1) *
    stride - pad_lo - pad_hi + dilation * (K - 1) + 1 + output_padding`.
    `pads` holds every spatial dim's low pad, then every high pad (an
    auto_pad resolved by the frontend). The channels, the input's spatial
    dims and the weight are static; the batch may not be. Bias is a
    separate `kiln.add`.

    kiln-expand-composites rewrites it, first thing in the graph phase, as
    a `kiln.conv`. A stride above 1 with groups 1 and no dilation: by
    output phase, one stride-1 convolution of the input to `s^d O`
    channels (each phase's taps of the weight, flipped), interleaved and
    cropped by the pads. Otherwise a convolution of the input zero-stuffed
    by the stride and padded by `dilation * (K - 1) - pad` on each side
    (plus `output_padding` at the end), with the weights regrouped to
    `[O, C / groups, K...]` and flipped spatially.

    ```mlir
    %r = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>,
                                     dilations = array<i64: 1, 1>,
                                     output_padding = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<1x8x4x4xf32>, tensor<8x3x3x3xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$output_padding,
                       I64Attr:$groups);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` "
                       "functional-type(operands, results)";
}

class Kiln_PoolOp<string mnemonic, string what, Type tensorType, dag extraArgs>
    : Kiln_InferredOp<mnemonic, [SameOperandsAndResultElementType]> {
  let summary = what # " pooling, channels first, 1 to 3 spatial dims";
  let arguments = !con((ins tensorType:$input,
                           DenseI64ArrayAttr:$kernel_shape,
                           DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                           DenseI64ArrayAttr:$dilations,
                           DefaultValuedAttr<BoolAttr, "false">:$ceil_mode),
                       extraArgs);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_MaxPoolOp : Kiln_PoolOp<"max_pool", "max", Kiln_NumericTensor, (ins)> {
  let description = [{
    Maximum over each window; padding never wins. Output size as for
    `kiln.conv`, rounded up with `ceil_mode` (a window that would start in
    the high padding is dropped).

    ```mlir
    %r = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                           pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
}

def Kiln_AvgPoolOp : Kiln_PoolOp<"avg_pool", "average", Kiln_FloatTensor,
    (ins DefaultValuedAttr<BoolAttr, "false">:$count_include_pad)> {
  let description = [{
    Mean over each window. With `count_include_pad` the divisor counts
    padded positions, otherwise only real ones (a dilated window counts
    the positions it reads).

    ```mlir
    %r = kiln.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                           pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
    ```
  }];
}

def Kiln_BatchNormOp : Kiln_InferredOp<"batch_norm",
                                       [SameOperandsAndResultElementType]> {
  let summary = "batch normalisation, inference form";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias` with the four vectors
    of length C indexed along dim 1 of `input` (`[N, C, ...]`).

    ```mlir
    %r = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32}
        : (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Kiln_FloatTensor:$bias, Kiln_FloatTensor:$mean,
                       Kiln_FloatTensor:$variance, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $variance "
                       "attr-dict `:` functional-type(operands, results)";
  let inferCall = [{
    inferred.push_back(adaptor.getInput().getType());
    return ::mlir::success();
  }];
}

def Kiln_LayerNormOp : Kiln_InferredOp<"layer_norm",
                                       [SameOperandsAndResultElementType]> {
  let summary = "layer normalisation over the trailing dims from `axis`";
  let description = [{
    Normalises `input` over dims `[axis, rank)` to zero mean and unit
    variance (`1 / sqrt(var + epsilon)`), then applies `scale` and `bias`,
    which broadcast against those trailing dims.

    ```mlir
    %r = kiln.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32}
        : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Kiln_FloatTensor:$bias, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = "$input `,` $scale `,` $bias attr-dict `:` "
                       "functional-type(operands, results)";
  let inferCall = [{
    inferred.push_back(adaptor.getInput().getType());
    return ::mlir::success();
  }];
}

class Kiln_SoftmaxFamilyOp<string mnemonic, string what>
    : Kiln_InferredOp<mnemonic, [SameOperandsAndResultElementType]> {
  let summary = what # " along one axis";
  let description = "Computes " # what # " of `input` along `axis` (in [0, "
    # "rank)), subtracting the maximum first for stability.\n\n```mlir\n%r = "
    # "kiln." # mnemonic # " %x {axis = 1 : i64} : (tensor<2x10xf32>) -> "
    # "tensor<2x10xf32>\n```";
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let inferCall = [{
    inferred.push_back(adaptor.getInput().getType());
    return ::mlir::success();
  }];
}

def Kiln_SoftmaxOp : Kiln_SoftmaxFamilyOp<"softmax", "softmax">;
def Kiln_LogSoftmaxOp : Kiln_SoftmaxFamilyOp<"log_softmax", "log of softmax">;

class Kiln_ReduceOp<string mnemonic, string what>
    : Kiln_InferredOp<mnemonic, [SameOperandsAndResultElementType]> {
  let summary = what # " over a set of axes";
  let description = "Reduces `input` with " # what # " over `axes` (sorted, "
    # "unique, in [0, rank); empty means no reduction). With `keepdims` the "
    # "reduced dims stay as 1. The reduction of an empty extent is the "
    # "operation's identity.\n\n```mlir\n%r = kiln." # mnemonic
    # " %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x10xf32>) -> "
    # "tensor<2x1xf32>\n```";
  let arguments = (ins Kiln_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let inferCall = [{
    return ::kiln::inferReduceResult(location, adaptor.getInput().getType(),
                                     adaptor.getAxes(), adaptor.getKeepdims(),
                                     ::mlir::cast<::mlir::ShapedType>(
                                         adaptor.getInput().getType())
                                         .getElementType(),
                                     inferred);
  }];
}

def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", "sum">;
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", "the mean">;
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", "the maximum">;
def Kiln_ReduceMinOp : Kiln_ReduceOp<"reduce_min", "the minimum">;
def Kiln_ReduceProdOp : Kiln_ReduceOp<"reduce_prod", "the product">;

class Kiln_ArgReduceOp<string mnemonic, string what>
    : Kiln_InferredOp<mnemonic> {
  let summary = "index of the " # what # " along one axis";
  let description = "Yields the i64 index of the " # what # " along `axis`; "
    # "ties pick the first index, or the last with `select_last_index`."
    # "\n\n```mlir\n%r = kiln." # mnemonic
    # " %x {axis = 1 : i64, keepdims = false} : (tensor<2x10xf32>) -> "
    # "tensor<2xi64>\n```";
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let inferCall = [{
    return ::kiln::inferReduceResult(
        location, adaptor.getInput().getType(),
        {static_cast<int64_t>(adaptor.getAxis())}, adaptor.getKeepdims(),
        ::mlir::IntegerType::get(context, 64), inferred);
  }];
}

def Kiln_ArgMaxOp : Kiln_ArgReduceOp<"argmax", "maximum">;
def Kiln_ArgMinOp : Kiln_ArgReduceOp<"argmin", "minimum">;

def Kiln_TopKOp : Kiln_InferredOp<"topk"> {
  let summary = "the k largest (or smallest) entries along one axis, best first";
  let description = [{
    The `k` best entries along `axis` (the largest, or the smallest with
    `largest = false`) in order, best first, and their i64 indices along
    `axis`; equal values go in index order (a stable sort when `k` is the
    axis' length). `k` is the attribute, or the one-element operand `count`
    read when the model runs (the result's dim is then dynamic). A k past
    the axis' length is an error, when the model runs where either is
    known only then.

    NaN orders above every number (PyTorch's order): first for the largest,
    last for the smallest. kiln-convert-to-linalg lowers it to one scan of
    every row, in index order, keeping the k best so far sorted (an
    insertion sort that stops at k, in registers for a k of at most 16;
    compiler/Lowering/TopKToLoops.cpp): any axis length, any k.

    ```mlir
    %v, %i = kiln.topk %x {axis = 1 : i64, k = 3 : i64, largest = true}
        : (tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input,
                       Optional<1DTensorOf<[I64]>>:$count, I64Attr:$axis,
                       OptionalAttr<I64Attr>:$k,
                       DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs Kiln_NumericTensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input (`,` $count^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Dropout and its random numbers (training steps)
//===----------------------------------------------------------------------===//

def Kiln_DropoutOp : Kiln_InferredOp<"dropout", [SameOperandsAndResultElementType]> {
  let summary = "dropout: the identity, except in a training step";
  let description = [{
    A model's dropout with probability `ratio`, as the ONNX importer keeps
    it for `kiln compile --train`: the training step replaces it by
    `input * (u >= ratio) / (1 - ratio)` with `u` from
    `kiln.random_uniform` (docs/Training.md). Anywhere else it is the
    identity (canonicalisation replaces it by its input; it has no folder,
    so that the importer's folding keeps it for the training step), as a
    model in inference computes it.

    ```mlir
    %r = kiln.dropout %x {ratio = 1.000000e-01 : f64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, F64Attr:$ratio);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let inferCall = [{
    inferred.push_back(adaptor.getInput().getType());
    return ::mlir::success();
  }];
}

def Kiln_RandomUniformOp : Kiln_InferredOp<"random_uniform"> {
  let summary = "counter-based uniform random numbers in [0, 1)";
  let description = [{
    A float32 tensor of static `shape` whose element at row-major index
    `i` is a function of `seed`, the scalar `counter` and `i` only
    (SplitMix64's mix of `seed * 0xD1B54A32D192ED03 + counter *
    0x9E3779B97F4A7C15 + i`, modulo 2^64, its top 24 bits times 2^-24), so
    that a training step's dropout masks are the same for the same seed and
    step on every machine and thread count (docs/Training.md gives the
    function to reproduce them).

    ```mlir
    %u = kiln.random_uniform %step {seed = 7 : i64, shape = array<i64: 8, 64>}
        : (tensor<i64>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$counter, I64Attr:$seed,
                       DenseI64ArrayAttr:$shape);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$counter attr-dict `:` functional-type(operands, results)";
  let inferCall = [{
    for (int64_t d : adaptor.getShape())
      if (d < 0)
        return ::mlir::emitOptionalError(location, "random_uniform: shape has a negative dim");
    inferred.push_back(::mlir::RankedTensorType::get(
        adaptor.getShape(), ::mlir::Float32Type::get(context)));
    return ::mlir::success();
  }];
}

#endif // KILN_NN_OPS_TD
