//===- Passes.td - CUDA code generation passes -*- tablegen -*-===//
//
// Passes that only CUDA code generation runs; their order lives in
// backends/cuda/Pipeline.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_PASSES_TD
#define KILN_BACKENDS_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def GpuMapLoops : Pass<"kiln-gpu-map-loops", "mlir::ModuleOp"> {
  let summary = "Map the host's loop nests onto GPU blocks and threads";
  let description = [{
    Every loop nest at the top of a function (after
    `convert-linalg-to-parallel-loops`) becomes one GPU kernel's worth of
    work: an outermost `scf.parallel` of any rank is linearised into
    `(blocks, threads)` with `block-size` threads a block and the
    innermost dim fastest, so that consecutive threads touch consecutive
    elements (coalesced); iterations past the end are masked. A thread
    takes w consecutive elements of the innermost dim, w = 16 bytes of the
    narrowest element the loop's loads and stores along it access (4 f32,
    2 i64 or f64, 8 f16, 16 i8; not i1), where the dim counts a multiple
    of w and its index is only ever the last index of loads and stores
    whose w elements from a multiple of w start at a 16-byte aligned
    address (innermost stride 1, other strides and offset multiples of w,
    the base an argument, an allocation, a 16-byte aligned global or a
    view of one at a multiple of 16 bytes): each such access one
    `vector.load`/`vector.store` (alignment 16: `ld.global.v4.b32`,
    `ld.global.v2.b64`; LLVM splits a wider one, an f32 beside an i8
    mask's 16, into several), the rest of the body once per element. Parallel
    loops nested inside run sequentially in their thread. `memref.copy`
    becomes such a loop; other host-level ops that read or write memory
    (sequential loops, scalar stores) run on one thread. The result is an
    `scf.parallel (%block, %thread)` with the GPU mapping attribute, which
    `convert-parallel-loops-to-gpu` turns into `gpu.launch`; as it is, it
    still runs on the CPU (the lit tests run it there and compare with
    the unmapped loops).

    A value the host needs (a load at the top of a function whose value
    sizes an allocation or decides a branch) is read back from device
    memory: the load becomes a call of `__kiln_cuda_read_<n>(memref,
    indices...)`, a C-interface function the artifact defines
    (kiln_runtime_services.read_device), its memref type recorded in the
    module's `kiln_cuda.device_reads`; scalar code whose values only the
    device uses stays a kernel of one thread.

    A call of a host function on 1-D buffers (a string operation,
    `kiln_string_*`, whose C the artifact carries) becomes a call of
    `__kiln_cuda_host_<n>` with the same operands, a C-interface function
    the artifact defines: it copies the operands in device memory to the
    host (read_device), calls the function on the copies and copies its
    result, the last operand, back (write_device); the callee, operand
    types and which are device memory recorded in `kiln_cuda.host_calls`.
    Operands in host memory (the artifact's constants) are passed as they
    are.

    Refused, naming the op: allocation or calls inside a loop nest (a
    kernel cannot call the runtime), an element type the host cannot
    read back (f16, bf16), a parallel loop with reductions.

    Before:
    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
      ... body(%i, %j)
    }
    ```
    After:
    ```mlir
    %total = arith.muli %n, %c4 : index
    %blocks = arith.ceildivui %total, %c256 : index
    scf.parallel (%b, %t) = (%c0, %c0) to (%blocks, %c256) step (%c1, %c1) {
      %l = %b * 256 + %t
      scf.if (%l < %total) { %i = %l / 4; %j = %l % 4; ... body(%i, %j) }
    } {mapping = [block_x, thread_x]}
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads a block">,
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "For the CPU emulation: vector accesses claim only their elements' "
           "alignment (the host's buffers are not the device's)">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect", "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect"];
}

def GpuParallelDimsFirst : Pass<"kiln-gpu-parallel-dims-first", "mlir::func::FuncOp"> {
  let summary = "Put a generic's parallel dims before its reduction dims";
  let description = [{
    A `linalg.generic` whose iterators interleave reductions with parallel
    dims (a softmax over axis 1 of [N, C, HW]: parallel, reduction,
    parallel) lowers to a parallel loop over the dims before the first
    reduction only, with the later parallel dims serial inside it: on a
    GPU, N threads. The loops are interchanged so that every parallel dim
    comes first (in their order), then the reductions (in theirs): the
    mapped loop covers N x HW threads. Each output element still sums its
    reduction in the same order, so the numbers do not change.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def GpuFoldFills : Pass<"kiln-gpu-fold-fills", "mlir::func::FuncOp"> {
  let summary = "A reduction's initial fill stored by the reduction's own loop nest";
  let description = [{
    After `convert-linalg-to-parallel-loops`, before `kiln-gpu-map-loops`:
    an `scf.parallel` at the top of the function that stores one value
    (defined outside it) into a buffer at its induction variables (a
    `linalg.fill`), followed (past ops free of memory effects) by an
    `scf.parallel` with the same bounds and steps whose every access to
    memory that may be that buffer's is a load or store of the buffer at
    its own induction variables (each iteration owns its element: a max
    pool's nest, its window a loop inside), is removed, and the second
    nest stores the value first in each iteration. One kernel instead of two
    (a max pool was a fill kernel and a pooling kernel), and the buffer
    goes through memory once less. A nest with any other effect on memory
    (a call, a copy) is left alone.
  }];
}

def GpuWarpRows : Pass<"kiln-gpu-warp-rows", "mlir::func::FuncOp"> {
  let summary = "Run each row of a row kernel on one warp: strided lanes, shuffle reductions";
  let description = [{
    A row kernel (an `scf.parallel` at the top of a function whose body is
    views, scalar arithmetic, `memref.alloca` and `linalg.generic` /
    `linalg.fill` on the row: a softmax, a layer normalisation) would run
    each row on one thread, its reductions a loop in that thread. Here the
    loop gets a last dim of 32 lanes, which `kiln-gpu-map-loops` puts on
    consecutive threads, so a row is one warp:
    - an op of more than one element strides its (linearised) iteration
      space over the lanes: element e on lane e % 32, so that consecutive
      lanes touch consecutive elements;
    - a reduction (its reduction dims last, onto one element; each
      output's payload `combine(%out, x)` with `combine` commutative with
      a neutral element: add, mul, max, min, and, or, xor on f32 or i32)
      sums a partial in each lane over e = lane, lane + 32, ... of its
      reduction dims linearised (innermost fastest), then
      combines the 32 partials with `gpu.shuffle xor` 16, 8, 4, 2, 1:
      every lane then holds the same total (each step combines a pair of
      lanes both ways, and the combiners commute), which it combines into
      its own copy of the output (a `memref.alloca`, one per lane);
    - an op of one element runs whole in every lane.
    A lane's elements are e = lane + 32k for k below ceil(n / 32): a loop
    of a constant trip count (LLVM unrolls it), the last step masked where
    32 does not divide n. A `memref.alloca` of the row that only strided
    ops (and reductions reading it) use, all over the same loop ranges
    through the same one-to-one map, is lane-private: element
    e = lane + 32k lives in slot k of a buffer of ceil(n / 32) elements
    (emulated: at [lane, k] of a 32 x ceil(n / 32) buffer), which the
    loops, unrolled here up to `unroll-steps` steps (LLVM's thresholds
    leave a row of 768, 24 steps, rolled), index with constants:
    registers, not local memory.
    A row whose largest op has at least 16 elements a thread of a block
    (4,096 at `block-size` 256) runs on a block instead of a warp: the loop's
    last dim is `block-size` threads (which `kiln-gpu-map-loops` must use
    too: a block is one row), the ops stride over them (slots of
    ceil(n / block-size)), and each reduction's warps' totals go through
    its own workgroup buffer and a `gpu.barrier`, after which every thread
    combines them in order into its copy of the output.
    A row is left as it is unless every buffer a lane reads is one it
    holds: written whole by every lane, or by a strided op with the same
    loop ranges and the same map onto it as the reader's; reductions must
    write row-local allocas; and the row's largest op has at least 32
    elements (static shapes only).

    A reduction at the top of a function (a `linalg.generic` outside any
    row kernel: ReduceSum over the last axis) whose reduction dims are last,
    with at least 32 elements an output and an input read along its
    innermost dim, becomes an `scf.parallel` over its output elements and
    the 32 lanes: the same partials and butterfly, then lane 0 alone
    combines the total into the output, which the lanes share. With at
    least 4096 elements an output, an output takes a whole block instead
    (`block-size` threads, which `kiln-gpu-map-loops` must use too): each
    thread's partial over e = thread, thread + block-size, ..., each
    warp's butterfly, lane 0 of each warp writing its warp's total to a
    workgroup buffer (`memref.alloca` in `#gpu.address_space<workgroup>`,
    which `kiln-cuda-workgroup-buffers` makes shared memory), a
    `gpu.barrier`, then thread 0 combining the warps' totals in order into
    the output. Its input and output must not share memory: views of the
    arena at disjoint bytes do not. Reductions
    down a column (the reduction dim not innermost in memory) stay a thread
    an output element, which reads coalesced.

    With `emulate` (the CPU emulation of the mapping, `--emulate-gpu`) the
    lanes are a loop inside the row instead, and the butterfly combines an
    array of the 32 partials in the same order (a block's: an array of
    block-size partials, the warps' totals combined in order), so the
    emulated conformance
    suites check the partition, the neutral elements and the order of the
    combination numerically; the shuffles themselves are checked by lit
    and ptxas only.
  }];
  let options = [
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "The lanes as a loop and the shuffles as array reads (CPU emulation)">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads a block (as kiln-gpu-map-loops'): a long reduction's output "
           "or a long row takes a block of them (a multiple of 32 from 64 to "
           "1024; else a warp)">,
    Option<"unrollSteps", "unroll-steps", "int64_t", /*default=*/"32",
           "Lane loops of at most this many steps are unrolled (their slot "
           "indices constants: registers, not local memory); 0: none">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::affine::AffineDialect", "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect"];
}

def CudaSplitConvPads : Pass<"kiln-cuda-split-conv-pads", "mlir::ModuleOp"> {
  let summary = "Asymmetric convolution pads as an explicit pad, so that cuDNN runs them";
  let description = [{
    On kiln ops, after `fuse` (the CUDA backend's library claims run it
    first): a convolution cuDNN would run but for its asymmetric pads
    (pads [top, left, bottom, right] with top != bottom or left != right:
    ONNX's SAME_UPPER with a stride of 2) gets its input padded with zeros
    by the difference, `kiln.pad` (low [0, 0, top - h, left - w], high
    [0, 0, bottom - h, right - w]), and keeps the pads h = min(top, bottom),
    w = min(left, right) on both sides: the same output, and pads that
    cuDNN's convolution API (the graph API's fallback) has. A convolution
    rooting an epilogue kernel gets the padded input in the input's place
    among the kernel's operands (a library call takes them in order); the
    unpadded one follows it where the body uses it otherwise (a residual).
  }];
}

def CudaChainConcats : Pass<"kiln-cuda-chain-concats", "mlir::ModuleOp"> {
  let summary = "A concatenation extending an earlier one joins that one and the rest";
  let description = [{
    On kiln ops, after `fuse` (the CUDA backend's library claims run it
    first, after kiln-cuda-split-conv-pads): a `kiln.concat` whose leading
    inputs are exactly those of an earlier concatenation along the same
    axis in the same block (at least two, fewer than all) takes that
    concatenation in their place, the longest such: DenseNet's
    `concat(x0, f1, ..., fk)` becomes `concat(concat(x0, ..., fk-1), fk)`.
    The same values; on the GPU one copy instead of k, and fk's only use
    is then that concatenation, so a convolution producing it writes into
    it (kiln.output_into).
  }];
}

def CudaGatherKernels : Pass<"kiln-cuda-gather-kernels", "mlir::ModuleOp"> {
  let summary = "One GPU module for every kernel; constants passed as device copies";
  let description = [{
    After `gpu-kernel-outlining`: moves every outlined kernel into one
    `gpu.module @kiln_kernels` (one PTX module a model) and updates the
    launches. A `memref.get_global` whose memref a launch passes to a
    kernel is the host's copy of a constant: the launch gets instead the
    result of `func.call @__kiln_cuda_constant_<i>(%host)`, which the
    artifact's entry point answers with the session's device copy
    (`kiln_runtime_services.device_constant`); the module attribute
    `kiln_cuda.constants` counts them.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::gpu::GPUDialect"];
}

def CudaWorkgroupBuffers : Pass<"kiln-cuda-workgroup-buffers", "mlir::ModuleOp"> {
  let summary = "Workgroup allocas in a gpu.launch become its workgroup attributions";
  let description = [{
    After `convert-parallel-loops-to-gpu`, before `gpu-kernel-outlining`:
    each `memref.alloca` in a `gpu.launch` body whose memory space is
    `#gpu.address_space<workgroup>` (a block reduction's warp totals,
    `kiln-gpu-warp-rows`) becomes a workgroup attribution of the launch,
    which outlining carries to the kernel and the NVVM lowering makes a
    `.shared` array (static shared memory: nothing to pass at launch).
    Fails on one outside a launch (it would be host memory).
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def CudaLowerLaunches : Pass<"kiln-cuda-lower-launches", "mlir::ModuleOp"> {
  let summary = "Kernel launches become calls of the runtime; binaries become attributes";
  let description = [{
    After `gpu-module-to-binary`: each `gpu.launch_func` becomes
    `func.call @__kiln_cuda_launch_<n>(grid x, y, z, block x, y, z,
    operands...)`, a C-interface function the artifact's entry point
    defines (it passes the operands as the kernel's parameters to
    `kiln_runtime_services.launch_kernel`). Module attributes record what
    the entry point needs: `kiln_cuda.kernels` (the kernels' names, the
    runtime's kernel index), `kiln_cuda.launches` (per launch: its kernel
    and operand types) and `kiln_cuda.ptx` (the PTX of each GPU, from the
    `gpu.binary`, which is erased).
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // KILN_BACKENDS_CUDA_PASSES_TD
