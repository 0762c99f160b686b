// RUN: kiln-opt %s -split-input-file -kiln-pack-chunk-calls | FileCheck %s

// Checks that a chunk call becomes a parallel_for over a context struct
// allocated in the caller's entry block, and that the trampoline loads the
// arguments back and calls the (now internal) chunk.
// CHECK-LABEL: llvm.func @__kiln_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-LABEL: llvm.func @caller
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64, %[[B:.*]]: i64, %[[E:.*]]: i64)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[CTX:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, i64)>
// CHECK: llvm.br ^[[NEXT:.*]]
// CHECK: ^[[NEXT]]:
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK: llvm.store %[[P]], %[[F0]]
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: llvm.store %[[N]], %[[F1]]
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @__kiln_chunk_0_entry
// CHECK: llvm.call @__kiln_parallel_for(%[[FN]], %[[CTX]], %[[B]], %[[E]])
// CHECK-NOT: llvm.call @__kiln_chunk_0(
// CHECK: llvm.func internal @__kiln_chunk_0(
// CHECK: llvm.func internal @__kiln_chunk_0_entry(%[[C:.*]]: !llvm.ptr, %[[CB:.*]]: i64, %[[CE:.*]]: i64)
// CHECK: %[[G0:.*]] = llvm.getelementptr %[[C]][0, 0]
// CHECK: %[[L0:.*]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G1:.*]] = llvm.getelementptr %[[C]][0, 1]
// CHECK: %[[L1:.*]] = llvm.load %[[G1]] : !llvm.ptr -> i64
// CHECK: llvm.call @__kiln_chunk_0(%[[L0]], %[[L1]], %[[CB]], %[[CE]])
llvm.func @caller(%p: !llvm.ptr, %n: i64, %b: i64, %e: i64) {
  llvm.br ^next
^next:
  llvm.call @__kiln_chunk_0(%p, %n, %b, %e) : (!llvm.ptr, i64, i64, i64) -> ()
  llvm.return
}
llvm.func @__kiln_chunk_0(%p: !llvm.ptr, %n: i64, %b: i64, %e: i64) {
  llvm.return
}

// -----

// Checks that functions without chunk calls are left alone.
// CHECK-LABEL: llvm.func @plain
// CHECK-NOT: __kiln_parallel_for
llvm.func @g()
llvm.func @plain() {
  llvm.call @g() : () -> ()
  llvm.return
}
