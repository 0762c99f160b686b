//===- Passes.td - CPU code generation passes -*- tablegen -*-===//
//
// Passes that only CPU code generation runs. Their order lives in
// compiler/Pipelines/Pipelines.cpp with every other pass.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_PASSES_TD
#define KILN_BACKENDS_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def OutlineParallelChunks : Pass<"kiln-outline-parallel-chunks", "mlir::ModuleOp"> {
  let summary = "Outline outermost scf.parallel loops into chunk functions";
  let description = [{
    Each outermost `scf.parallel` without results, whose body neither
    allocates nor calls, and whose estimated work (iterations of its loop
    nest, dynamic trip counts counted as 256) reaches `min-work`, becomes a
    private function `__kiln_chunk_<n>(captured values..., %begin, %end)`
    that runs the iterations `[begin, end)` of the loop's leading dims
    (all dims but the innermost, linearised; the innermost stays a plain
    loop so that it vectorises), and a call of it over the whole range.
    Constants and globals the body uses are cloned into the chunk, other
    values are passed. The call alone is a complete sequential program;
    `kiln-pack-chunk-calls` later turns it into a `parallel_for` of the
    runtime, which splits the range over threads. Each iteration runs on
    exactly one thread, whatever the thread count, so results do not
    depend on it.

    Before:
    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
      %x = memref.load %a[%i, %j] : memref<64x512xf32>
      memref.store %x, %b[%i, %j] : memref<64x512xf32>
      scf.reduce
    }
    ```
    After:
    ```mlir
    call @__kiln_chunk_0(%a, %b, %c0, %c64) : (memref<64x512xf32>, memref<64x512xf32>, index, index) -> ()
    ...
    func.func private @__kiln_chunk_0(%a: memref<64x512xf32>, %b: memref<64x512xf32>,
                                      %begin: index, %end: index) {
      scf.for %l = %begin to %end step %c1 {
        scf.for %j = %c0 to %c512 step %c1 { ... }
      }
      return
    }
    ```
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Smallest estimated iteration count worth running in parallel">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect"];
}


def ApproximateMath : Pass<"kiln-approximate-math", "mlir::ModuleOp"> {
  let summary = "Expand f32 exp, tanh, erf and log into polynomials that vectorise";
  let description = [{
    Each `math.exp`, `math.tanh`, `math.erf` and `math.log` on f32 (scalar
    or vector) becomes MLIR's polynomial approximation (exp: 2^n * e^a with
    |a| <= log(2)/2 and a degree-6 polynomial; log: the exponent and a
    polynomial of the mantissa; tanh and erf: rational approximations on a
    clamped range). Otherwise the LLVM lowering calls libm's scalar `expf`,
    `tanhf`, `erff` or `logf` once per lane: a softmax row of 128 took 128
    calls. Measured edges (test/lit/tools/math-values.test): results
    below 2^-126 flushed to 0 for exp, inf where float overflows.

    Before:
    ```mlir
    %e = math.exp %x : vector<8xf32>
    ```
    After: arith and math.fma / math.floor on `vector<8xf32>`, no
    `math.exp`.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def PackChunkCalls : Pass<"kiln-pack-chunk-calls", "mlir::ModuleOp"> {
  let summary = "Turn calls of chunk functions into runtime parallel_for calls";
  let description = [{
    Runs on the LLVM dialect. Every call `@__kiln_chunk_<n>(args..., %begin,
    %end)` becomes a store of `args` into a stack context (allocated in the
    caller's entry block) and a call `@__kiln_parallel_for(@__kiln_chunk_<n>_entry,
    %context, %begin, %end)`, where the new `_entry` function
    `(ptr, i64, i64)` loads the arguments back and calls the chunk. The
    artifact implements `__kiln_parallel_for` by handing it to the
    runtime's thread pool (docs/Contracts.md).

    Before:
    ```mlir
    llvm.call @__kiln_chunk_0(%p, %n, %c0, %c64) : (!llvm.ptr, i64, i64, i64) -> ()
    ```
    After:
    ```mlir
    %ctx = llvm.alloca %one x !llvm.struct<(ptr, i64)> : (i64) -> !llvm.ptr
    ... llvm.store %p / %n into %ctx ...
    %fn = llvm.mlir.addressof @__kiln_chunk_0_entry : !llvm.ptr
    llvm.call @__kiln_parallel_for(%fn, %ctx, %c0, %c64) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ExportLibraryWeights : Pass<"kiln-export-library-weights", "mlir::ModuleOp"> {
  let summary = "Name the constant weights of library calls for the descriptor";
  let description = [{
    Runs on bufferized code (memrefs). For every call
    `@kiln_library_call_<n>(%input, %weights, ...)` whose weights come from
    `memref.get_global` of a constant global, the global becomes public
    and is renamed `kiln_cpu.library_weights_<k>` (one name per global, shared
    by the calls that read it), and the module's `kiln_cpu.library_weights`
    dictionary maps `"<n>"` to it. The artifact's descriptor then points
    each such call at its weights (`kiln_library_call.weights`), so the
    runtime packs them into the library's layout once, when a session is
    created, instead of at the first run. Weights that are not constants
    (a graph input, an activation) are not named.

    Before:
    ```mlir
    memref.global "private" constant @__constant_64x3x7x7xf32 : memref<64x3x7x7xf32> = dense<...>
    %w = memref.get_global @__constant_64x3x7x7xf32 : memref<64x3x7x7xf32>
    call @kiln_library_call_0(%x, %w, %y) : (...) -> ()
    ```
    After:
    ```mlir
    module attributes {kiln_cpu.library_weights = {"0" = @kiln_cpu.library_weights_0}} {
      memref.global constant @kiln_cpu.library_weights_0 : memref<64x3x7x7xf32> = dense<...>
      %w = memref.get_global @kiln_cpu.library_weights_0 : memref<64x3x7x7xf32>
      call @kiln_library_call_0(%x, %w, %y) : (...) -> ()
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

#endif // KILN_BACKENDS_CPU_PASSES_TD
