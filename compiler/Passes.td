//===- Passes.td - every Kiln compiler pass -*- tablegen -*-===//
//
// The only place Kiln passes are declared. Implementations use the
// generated GEN_PASS_DEF_* base classes; pass order lives in Pipelines/.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PASSES_TD
#define KILN_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Graph phase
//===----------------------------------------------------------------------===//

def ExpandComposites : Pass<"kiln-expand-composites", "mlir::func::FuncOp"> {
  let summary = "Rewrite kiln.conv_transpose into primitive kiln ops";
  let description = [{
    The graph phase's first pass. A transposed convolution becomes a
    stride-1 `kiln.conv`: for a stride above 1, groups 1 and no dilation,
    of the input itself by output phase (the `s^d` phases' sub-kernels one
    weight of `s^d O` output channels, the result interleaved and cropped
    by the pads: 1 / s^d of the multiplications); otherwise of the input
    zero-stuffed by the stride and padded by `dilation * (K - 1) - pad`,
    with its weights regrouped and flipped (kiln-fold-pads merges the pads
    into the convolution). The ONNX importer and kiln_torch both emit the
    op, so the composition is written once. (`kiln.topk`, the other op both
    emit, stays whole and is lowered to loops: TopKToLoops.cpp.)

    Before:
    ```mlir
    %y = kiln.conv_transpose %x, %w {strides = array<i64: 2>, ...}
        : (tensor<1x2x3xf32>, tensor<2x3x3xf32>) -> tensor<1x3x7xf32>
    ```
    After: the weights padded to 4 taps (2 a phase), split by phase and
    flipped (`kiln.pad`, `kiln.reshape`, `kiln.transpose`, `kiln.slice`
    with step -1) into `[2 x 3, 2, 2]`; the input padded by 1 at each end,
    convolved at stride 1 into 6 channels of 4 positions; those split
    `[1, 2, 3, 4]`, interleaved to `[1, 3, 8]` and cut to 7 (a
    `kiln.slice`). With a dilation or groups: the input zero-stuffed (a
    reshape, a pad and a slice), padded by `K - 1 - pad` at each end, the
    weights regrouped and flipped, and a stride-1 `kiln.conv`.
  }];
}

def InferShapes : Pass<"kiln-infer-shapes", "mlir::ModuleOp"> {
  let summary = "Refine `?` dims of kiln op results from their operands";
  let description = [{
    Walks every function in program order and replaces each kiln op's result
    type with the meet of its declared and inferred types, so a `?` becomes
    a size wherever the operands determine it. Refinements flow forward
    through the function in one walk. A function whose symbol is not used
    inside the module gets its result types refined too; other users of a
    refined value that are not kiln ops get a `tensor.cast` back to the type
    they expected.

    Before:
    ```mlir
    func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
      %0 = kiln.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
      %1 = kiln.relu %0 : (tensor<?x?xf32>) -> tensor<?x3xf32>
      return %1 : tensor<?x3xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
      %0 = kiln.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
      %1 = kiln.relu %0 : (tensor<4x3xf32>) -> tensor<4x3xf32>
      return %1 : tensor<4x3xf32>
    }
    ```
    A declared static size that contradicts the inferred one is an error.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numRefined", "num-refined", "Number of results refined">
  ];
}

def FoldBatchNorm : Pass<"kiln-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold an inference batch norm into the preceding convolution's weights";
  let description = [{
    `batch_norm(conv(x, W) [+ b])` with constant weights, bias and
    statistics becomes `conv(x, W') + b'` with `s = scale / sqrt(var + eps)`,
    `W' = W * s` per output channel and `b' = (b - mean) * s + bias`,
    computed in double and rounded once. The convolution (and its bias add)
    must have no other user. Any other batch norm with constant parameters
    (after a concatenation, a pool, a convolution with other users) becomes
    its channel affine map `x * s + t`, `t = bias - mean * s`, with `s` and
    `t` constants shaped `[1, C, 1, ...]`; statistics that are not
    constants leave the batch norm as it is.

    Before:
    ```mlir
    %y = kiln.conv %x, %w {...} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    %z = kiln.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (...) -> tensor<1x4x6x6xf32>
    ```
    After:
    ```mlir
    %w2 = kiln.constant dense_resource<bn_folded_weight> : tensor<4x3x3x3xf32>
    %y = kiln.conv %x, %w2 {...} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    %c = kiln.constant dense<[...]> : tensor<4x1x1xf32>
    %z = kiln.add %y, %c : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
    ```
  }];
}

def FoldPads : Pass<"kiln-fold-pads", "mlir::func::FuncOp"> {
  let summary = "Take zero padding into the convolution or average pool that reads it";
  let description = [{
    A `kiln.pad` of zeros (mode constant, value 0) over the spatial dims
    only, read by a `kiln.conv`, becomes the convolution's own padding;
    read by a `kiln.avg_pool` without `ceil_mode` that counts its own
    padding or has none, it becomes the pool's padding with
    `count_include_pad` (the explicit zeros were counted in each divisor).
    Not where a side's padding would reach the window's extent (a window
    of padding alone). The pad stays for any other reader. torch exports
    `F.avg_pool2d(x, 3, 1, 1)` as Pad then AveragePool; a pad left
    between two library calls is a generated loop nest and makes the
    value before it channels-first.

    Before:
    ```mlir
    %p = kiln.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x8x5x5xf32>) -> tensor<1x8x7x7xf32>
    %y = kiln.avg_pool %p {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>,
                           pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<1x8x7x7xf32>) -> tensor<1x8x5x5xf32>
    ```
    After:
    ```mlir
    %y = kiln.avg_pool %x {count_include_pad = true, kernel_shape = array<i64: 3, 3>,
                           strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
                           dilations = array<i64: 1, 1>}
        : (tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
    ```
  }];
}

def FoldConstantTransposes : Pass<"kiln-fold-constant-transposes", "mlir::func::FuncOp"> {
  let summary = "Transpose constant tensors at compile time, whatever their size";
  let description = [{
    `kiln.transpose` of a constant with a static shape becomes a constant
    holding the transposed data (a `dense_resource` blob; the bytes are
    moved, not converted, so any element type of whole bytes works). The
    dialect's folder stops at small tensors (it goes through one attribute
    per element); this pass is for weights: ONNX's Gemm with transB and
    torch's linear layers transpose their weights, which would otherwise be
    transposed again at every run (the MLP: 784x256 floats per run).

    Before:
    ```mlir
    %w = kiln.constant dense_resource<fc.w> : tensor<10x8xf32>
    %t = kiln.transpose %w {permutation = array<i64: 1, 0>} : (tensor<10x8xf32>) -> tensor<8x10xf32>
    ```
    After:
    ```mlir
    %t = kiln.constant dense_resource<transposed> : tensor<8x10xf32>
    ```
  }];
}

def RecognizeGelu : Pass<"kiln-recognize-gelu", "mlir::func::FuncOp"> {
  let summary = "Turn the erf form of GELU, written out in elementwise ops, into kiln.gelu";
  let description = [{
    Exporters without a Gelu op (ONNX before opset 20, torch's exporter)
    write GELU as `x * (erf(x / sqrt(2)) + 1) * 0.5`. As one `kiln.gelu`
    it joins a matmul's or convolution's epilogue (a oneDNN eltwise
    post-op, vectorised) instead of being a loop of scalar `erff` calls.
    Matched in any operand order, with `x / sqrt(2)` or `x * (1/sqrt(2))`,
    constants within 1e-6 relative; the intermediate ops must have no other
    users.

    Before:
    ```mlir
    %d = kiln.div %x, %sqrt2
    %e = kiln.erf %d
    %a = kiln.add %e, %one
    %m = kiln.mul %x, %a
    %r = kiln.mul %m, %half
    ```
    After:
    ```mlir
    %r = kiln.gelu %x : (tensor<...>) -> tensor<...>
    ```
  }];
}

def Decompose : Pass<"kiln-decompose", "mlir::func::FuncOp"> {
  let summary = "Rewrite composite kiln ops into primitive kiln ops";
  let description = [{
    Softmax, log-softmax, layer and batch normalisation become reductions
    and elementwise ops, so that lowerings and fusion only deal with
    primitives. Softmax subtracts the maximum first.

    Before:
    ```mlir
    %y = kiln.softmax %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    ```
    After:
    ```mlir
    %m = kiln.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
    %d = kiln.sub %x, %m : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
    %e = kiln.exp %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %s = kiln.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
    %y = kiln.div %e, %s : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Autodiff
//===----------------------------------------------------------------------===//

def Differentiate : Pass<"kiln-differentiate", "mlir::ModuleOp"> {
  let summary = "Rewrite a function into its reverse-mode derivative (VJP)";
  let description = [{
    Rewrites function `function` (kiln IR with ranked static shapes, after
    `kiln-infer-shapes`) in place: after its arguments come one gradient
    (cotangent) argument per float result, named `grad_<result>`; after its
    results come the gradients of the float arguments listed in `wrt`
    (default: all of them), named `grad_<argument>`. Each op's rule comes
    from its `DifferentiableOpInterface` (compiler/Autodiff/*Rules.cpp);
    gradients of a value used several times are summed; integer and
    boolean values carry none; `kiln.stop_gradient` passes none. An op the
    gradient must cross that has no rule is an error naming it.

    Before:
    ```mlir
    func.func @main(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "y"}) {
      %y = kiln.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    }
    ```
    After:
    ```mlir
    func.func @main(%x: tensor<4xf32> {kiln.name = "x"},
                    %dy: tensor<4xf32> {kiln.name = "grad_y"})
        -> (tensor<4xf32> {kiln.name = "y"}, tensor<4xf32> {kiln.name = "grad_x"}) {
      %y = kiln.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %dx = kiln.mul %dy, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %y, %dx : tensor<4xf32>, tensor<4xf32>
    }
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", "\"main\"",
           "the function to differentiate">,
    ListOption<"wrt", "wrt", "int64_t",
               "the arguments to differentiate with respect to (default: every float one)">
  ];
}

def Rematerialize : Pass<"kiln-rematerialize", "mlir::func::FuncOp"> {
  let summary = "Recompute cheap forward values in the backward pass instead of saving them";
  let description = [{
    After `kiln-differentiate` (whose ops carry the `kiln.backward` mark):
    a forward elementwise result that backward ops read, whose operands the
    backward pass has anyway (arguments, constants, values it reads, or
    values recomputed the same way), is recomputed right before each
    backward use, so that it no longer lives from the forward into the
    backward (`kiln compile --train --remat`).

    Before (the backward `mul` reads the forward `relu`):
    ```mlir
    %y = kiln.relu %x
    %z = kiln.matmul %y, %w
    ...
    %d = kiln.mul %g, %y loc("kiln.backward"(...))
    ```
    After:
    ```mlir
    %y = kiln.relu %x
    %z = kiln.matmul %y, %w
    ...
    %y2 = kiln.relu %x loc("kiln.backward"(...))
    %d = kiln.mul %g, %y2 loc("kiln.backward"(...))
    ```
  }];
  let statistics = [
    Statistic<"numValues", "values", "forward values recomputed instead of saved">,
    Statistic<"numBytes", "bytes", "bytes no longer saved for the backward pass">
  ];
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

def ConvertKilnToLinalg : Pass<"kiln-convert-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower kiln ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every kiln op into target-independent upstream ops on
    tensors: elementwise ops into one `linalg.generic` each (broadcast
    operands read through indexing maps), reductions into reduction
    generics over a filled accumulator, data movement into tensor slices,
    reshapes and `linalg.transpose`, constants into `arith.constant`. An
    op it cannot lower is reported as failing to legalise, with its
    location.

    Before:
    ```mlir
    %r = kiln.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1),
                                          (d0, d1) -> (d0, d1)], ...}
        ins(%a, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %s = arith.addf %x, %y : f32
        linalg.yield %s : f32
    } -> tensor<4x3xf32>
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def Fuse : Pass<"kiln-fuse", "mlir::func::FuncOp"> {
  let summary = "Group convolution / matmul epilogues, reductions with their prologue and epilogue, and elementwise trees into kernels";
  let description = [{
    A `kiln.conv` or `kiln.matmul` followed by a chain of epilogue ops, each
    the only user of the previous result, becomes one `kiln.kernel
    "epilogue"`. The epilogue, in this order, is at most: a bias add (a
    constant that varies only along the output channels: dim 1 of a
    convolution, the last dim of a matmul), a residual add (a tensor of the
    result's shape), and an activation (relu, clip, sigmoid, tanh, gelu, or
    SiLU: `x * sigmoid(x)` where that sigmoid and mul are x's only users).
    A result with another user ends the chain (fusion never duplicates
    work); a root without epilogue stays as it is. Backends run such a
    kernel as one library call with post-ops, or inline it.

    Then each softmax / log-softmax along the last dim, layer
    normalisation, or keepdims reduction over exactly the trailing dims
    `[k, rank)` (k >= 1, those dims static, at most 16,384 elements)
    becomes a `kiln.kernel "reduction"` with `kiln.outer_dims = k`, together
    with its elementwise prologue (the tree computing its input for it
    alone, of the input's shape) and epilogue (the chain of single users
    after it). The lowering computes such a kernel row by row.

    Then, among the ops left, each tree of elementwise ops becomes one
    `kiln.kernel "elementwise"`: a root (the last ungrouped elementwise op)
    and, recursively, the operands computed by elementwise ops that have
    no other user and the root's shape. A value read through a broadcast
    or used twice stays outside (fusing it would compute it more than
    once). The linalg phase fuses each such kernel into one loop nest.

    Before:
    ```mlir
    %c = kiln.conv %x, %w {...} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    %a = kiln.add %c, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
    %r = kiln.relu %a : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    ```
    After:
    ```mlir
    %r = kiln.kernel "epilogue" (%x, %w, %b) : (...) -> tensor<1x4x6x6xf32> {
    ^bb0(%x0: tensor<1x3x8x8xf32>, %w0: tensor<4x3x3x3xf32>, %b0: tensor<4x1x1xf32>):
      %c = kiln.conv %x0, %w0 {...}
      %a = kiln.add %c, %b0
      %r = kiln.relu %a
      kiln.yield %r : tensor<1x4x6x6xf32>
    }
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Number of epilogue kernels formed">,
    Statistic<"numFusedOps", "num-fused-ops", "Number of epilogue ops fused">,
    Statistic<"numElementwiseKernels", "num-elementwise-kernels",
              "Number of elementwise kernels formed">,
    Statistic<"numElementwiseOps", "num-elementwise-ops", "Number of ops in elementwise kernels">,
    Statistic<"numReductionKernels", "num-reduction-kernels", "Number of reduction kernels formed">,
    Statistic<"numReductionOps", "num-reduction-ops", "Number of ops in reduction kernels">
  ];
}

def FuseElementwise : Pass<"kiln-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "linalg's elementwise fusion, keeping every fused op's location";
  let description = [{
    The linalg phase's producer-consumer fusion of elementwise generics
    (linalg's patterns, reshape folding by expansion, constant folding and
    the generic canonicalisations, as upstream `linalg-fuse-elementwise-ops`),
    with three differences: a producer is fused only into a consumer that
    reads each of its elements once (the consumer's indexing map for it is a
    permutation; a scaled or transposed matmul operand, or a broadcast of a
    computed value, stays its own loop nest, so no work is repeated), and a
    producer fused into its only consumer gives the consumer a fused
    location of both, so the loop nest that comes out names every model node
    in it (`kiln inspect --kernels`); and a fused body holds at most 128 ops,
    so that a long chain is fused in groups in linear time (unbounded, each
    fusion cloned the whole body so far: a 20,000-op chain took 148 s).

    Before: `%a = linalg.generic {add} loc("n1")` used only by
    `%r = linalg.generic {relu} ins(%a) loc("n2")`.
    After: one `linalg.generic {add, relu} loc(fused["n1", "n2"])`.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect"];
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def EmptyReshapes : Pass<"kiln-empty-reshapes", "mlir::ModuleOp"> {
  let summary = "Make each collapse of a tensor with no elements an empty tensor";
  let description = [{
    Runs on tensors, before bufferisation. A `tensor.collapse_shape` whose
    source has a static 0 dim holds no elements; where that 0 shares a
    reassociation group with a dynamic dim, one-shot bufferisation would
    give the collapsed memref a static 0 there, which
    `memref.collapse_shape` refuses. Such a collapse becomes a
    `tensor.empty` of its size (the group with the 0 is 0, each other
    dynamic group the product of its source dims) cast to its type.

    Before:
    ```mlir
    %c = tensor.collapse_shape %t [[0, 1]] : tensor<0x?xi64> into tensor<?xi64>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<0xi64>
    %c = tensor.cast %e : tensor<0xi64> to tensor<?xi64>
    ```
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
}

def StackRowBuffers : Pass<"kiln-stack-row-buffers", "mlir::ModuleOp"> {
  let summary = "Put the small static buffers of an scf.forall body on the stack";
  let description = [{
    Runs on bufferised IR. In each `scf.forall` body (the row loop of a
    reduction kernel), `memref.alloc`s with a static shape become
    `memref.alloca`s, up to 64 KiB per iteration, and the body moves into a
    `memref.alloca_scope` so the stack is released after each iteration.
    Each iteration then takes nothing from the runtime's pool, and the loop
    can run on the runtime's threads.

    Before:
    ```mlir
    scf.forall (%i) in (%n) {
      %t = memref.alloc() {alignment = 64 : i64} : memref<1x1xf32>
      ...
    }
    ```
    After:
    ```mlir
    scf.forall (%i) in (%n) {
      memref.alloca_scope {
        %t = memref.alloca() {alignment = 64 : i64} : memref<1x1xf32>
        ...
      }
    }
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numBuffers", "num-loops", "Number of loops whose buffers moved to the stack">
  ];
}

def FreeAfterLastUse : Pass<"kiln-free-after-last-use", "mlir::ModuleOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Runs after buffer deallocation. MLIR's ownership-based deallocation
    frees a block's buffers at the end of the block; this pass moves each
    `memref.dealloc` of a buffer allocated in the same block to right after
    the last op of the block that uses the buffer or a view of it (an op
    nested in a region counts as its ancestor in the block). A buffer that
    escapes as `kiln-plan-memory` defines it (returned, yielded out of a
    region, reached through an op that may return an alias) keeps its
    deallocation where it is. The arena holds the buffers with static
    sizes; the others (a dynamic batch without `--max-batch`) come from the
    runtime's pool, which can then give a freed block to a later buffer.

    Before:
    ```mlir
    %a = memref.alloc(%n) : memref<?x8xf32>
    call @f(%x, %a)
    %b = memref.alloc(%n) : memref<?x8xf32>
    call @f(%a, %b)
    call @f(%b, %y)
    memref.dealloc %a : memref<?x8xf32>
    memref.dealloc %b : memref<?x8xf32>
    ```
    After:
    ```mlir
    %a = memref.alloc(%n) : memref<?x8xf32>
    call @f(%x, %a)
    %b = memref.alloc(%n) : memref<?x8xf32>
    call @f(%a, %b)
    memref.dealloc %a : memref<?x8xf32>
    call @f(%b, %y)
    memref.dealloc %b : memref<?x8xf32>
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numMoved", "num-moved", "Number of deallocations moved up to a last use">
  ];
}

def PlanMemory : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Pack every function's intermediate buffers into one arena";
  let description = [{
    Runs on bufferised IR, before deallocation is inserted. In each
    function's top-level block, every `memref.alloc` with a static shape
    that does not escape (returned, yielded out of a region, or reached
    through an unknown op) gets a lifetime: from the allocation to the last
    op that uses it or a view of it. The packing strategy
    (compiler/Memory/Packing.h) gives each buffer an offset such that
    buffers live at the same time never overlap; the buffers become
    `memref.view`s of one 64-byte aligned `memref.alloc` of the arena's
    size at the start of the function.

    In place: the result of an elementwise `linalg.generic` (all loops
    parallel, result written through a permutation map without being read)
    shares the slot of an input buffer that dies at that op and is read
    through the same map, if no other operand of the op lives in that slot.

    Dynamic dims: with `max-batch=N`, dim 0 of each function argument whose
    dim 0 is dynamic is at most N; a buffer whose dynamic sizes have an
    upper bound through `memref.dim`, views and index arithmetic
    (`addi`, `muli`, `maxui`, `select`, division by a constant, ...) is
    planned at its largest size, and its view keeps the run-time sizes.
    Other buffers with dynamic dims stay separate allocations (the
    runtime's pool serves them). The caller must not pass a larger batch
    (the Kiln runtime refuses it).

    The function gets a `kiln.memory_plan` attribute: the arena's bytes,
    the liveness lower bound (most bytes live at once), the naive sum, the
    numbers of planned, in-place, bounded-dynamic and unplanned buffers,
    `max_batch`, the number of schedule positions, and every slot as
    (offset, size, first, last).

    Before:
    ```mlir
    %a = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
    linalg.fill ins(%x : f32) outs(%a : memref<256xf32>)
    %b = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
    linalg.copy ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
    %c = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
    linalg.copy ins(%b : memref<256xf32>) outs(%c : memref<256xf32>)
    ```
    After (`%a` is dead when `%c` is written, so they share bytes):
    ```mlir
    %arena = memref.alloc() {alignment = 64 : i64, kiln.arena} : memref<2048xi8>
    %a = memref.view %arena[%c0][] : memref<2048xi8> to memref<256xf32>
    %b = memref.view %arena[%c1024][] : memref<2048xi8> to memref<256xf32>
    %c = memref.view %arena[%c0][] : memref<2048xi8> to memref<256xf32>
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"best\"",
           "Packing: greedy-by-size, best-fit-by-time, or best (the smaller)">,
    Option<"maxBatch", "max-batch", "int64_t", /*default=*/"0",
           "Largest dim 0 of the function's dynamic arguments (0: unbounded)">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def VerifyContract : Pass<"kiln-verify-contract", "mlir::ModuleOp"> {
  let summary = "Check what docs/Contracts.md promises at the end of a phase";
  let description = [{
    Changes nothing; fails with the location of the first op that breaks
    the contract of `phase` (docs/Contracts.md). The pipelines run it at
    the end of every target-neutral phase, and the driver after import,
    so a broken promise is reported at the boundary it crosses, not in
    generated code. What each phase's check covers:

    - `import`: the entry `func.func @main` takes and returns ranked
      tensors, each named by `kiln.name`; function bodies hold only kiln
      ops, `func.return` and `func.call`.
    - `graph`: no kiln op's result is less refined than its inferred type
      (a `?` where inference knows the size).
    - `fuse`: as `graph`, and every `kiln.kernel` sits at function level:
      an `epilogue` kernel's body starts with a convolution or matmul,
      a `reduction` kernel carries `kiln.outer_dims`.
    - `linalg`: no kiln op is left but `kiln.library_call`.
    - `plan`: no value of tensor type is left in a function body, and each
      function with a body carries `kiln.memory_plan`.

    ```mlir
    // kiln-verify-contract{phase=linalg} fails here:
    %y = kiln.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    // error: 'kiln.relu' op is left after the linalg phase
    ```
  }];
  let options = [
    Option<"phase", "phase", "std::string", /*default=*/"\"graph\"",
           "import, graph, fuse, linalg or plan">
  ];
}

#endif // KILN_COMPILER_PASSES_TD
