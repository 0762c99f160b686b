//===- Passes.td - passes every backend's host code runs -*- tablegen -*-===//
//
// Passes of the host lowering (HostCode.h) that every backend shares.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_PASSES_TD
#define KILN_BACKENDS_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def ScopeLoopAllocas : Pass<"kiln-scope-loop-allocas", "mlir::ModuleOp"> {
  let summary = "Free a loop body's stack buffers at the end of each iteration";
  let description = [{
    In the body of every `scf.for` and result-less `scf.parallel` that
    directly holds a `memref.alloca` (a row temporary of a reduction
    kernel, kiln-stack-row-buffers), saves the stack pointer first and
    restores it before the terminator, so that each iteration frees its
    buffers. Upstream canonicalisation inlines `memref.alloca_scope`s into
    loops that are automatic allocation scopes (`scf.forall`,
    `scf.parallel`), but the lowering of those loops to branches keeps no
    scope: without this pass every iteration's buffers stay on the stack
    until the function returns, and a row loop over batch x sequence rows
    overflows a thread's stack (a BERT-style encoder at batch 8 took
    18 MiB). Run right before the lowering of scf to control flow: the first
    step of the host lowering every backend shares (the CPU's code and the
    CUDA backend's emulation of its mapping, whose rows left on one thread
    keep their buffers in the host's loop).

    Before:
    ```mlir
    scf.for %i = %c0 to %n step %c1 {
      %row = memref.alloca() : memref<768xf32>
      ...
    }
    ```
    After:
    ```mlir
    scf.for %i = %c0 to %n step %c1 {
      %sp = llvm.intr.stacksave : !llvm.ptr
      %row = memref.alloca() : memref<768xf32>
      ...
      llvm.intr.stackrestore %sp : !llvm.ptr
    }
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numScopes", "scopes", "Loop bodies that restore the stack each iteration">
  ];
}

#endif // KILN_BACKENDS_COMMON_PASSES_TD
