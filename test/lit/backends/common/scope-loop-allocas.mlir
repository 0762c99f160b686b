// RUN: kiln-opt %s -split-input-file -kiln-scope-loop-allocas | FileCheck %s

// Checks that a loop whose body allocates on the stack saves the stack
// pointer first and restores it before the next iteration, so a row loop's
// temporaries take one row's stack, not every row's.
// CHECK-LABEL: func @rows
// CHECK: scf.for
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<768xf32>
// CHECK: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT: }
func.func @rows(%out: memref<?x768xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c768 = arith.constant 768 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %row = memref.alloca() {alignment = 64 : i64} : memref<768xf32>
    scf.for %j = %c0 to %c768 step %c1 {
      memref.store %zero, %row[%j] : memref<768xf32>
      %x = memref.load %row[%j] : memref<768xf32>
      memref.store %x, %out[%i, %j] : memref<?x768xf32>
    }
  }
  return
}

// -----

// Checks that an alloca under an scf.if counts as the iteration's, that a
// parallel loop is handled like a sequential one, and that a loop whose
// allocas sit in a nested loop leaves the restoring to that loop.
// CHECK-LABEL: func @nested
// CHECK: scf.parallel
// CHECK-NOT: llvm.intr.stacksave
// CHECK: scf.for
// CHECK-NEXT: llvm.intr.stacksave
// CHECK: scf.if
// CHECK: memref.alloca
// CHECK: llvm.intr.stackrestore
// CHECK-NOT: llvm.intr.stackrestore
func.func @nested(%out: memref<4x8xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %j = %c0 to %c8 step %c1 {
      scf.if %flag {
        %tmp = memref.alloca() : memref<16xf32>
        memref.store %zero, %tmp[%c0] : memref<16xf32>
        %x = memref.load %tmp[%c0] : memref<16xf32>
        memref.store %x, %out[%i, %j] : memref<4x8xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// Checks that a loop without allocas is left alone.
// CHECK-LABEL: func @plain
// CHECK-NOT: llvm.intr.stacksave
func.func @plain(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %zero, %out[%i] : memref<8xf32>
  }
  return
}
