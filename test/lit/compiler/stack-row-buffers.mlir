// RUN: kiln-opt %s -split-input-file -kiln-stack-row-buffers | FileCheck %s

// Checks that a forall body's static buffers become allocas in a scope
// that ends with each iteration, and that a buffer outside stays.
// CHECK-LABEL: func @rows
// CHECK: memref.alloc(%arg1) : memref<?x8xf32>
// CHECK: scf.forall
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: %[[T:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x8xf32>
// CHECK-NOT: memref.alloc(
// CHECK: linalg.copy ins(%[[T]]
// CHECK: }
// CHECK-NOT: memref.dealloc
func.func @rows(%x: f32, %n: index) {
  %out = memref.alloc(%n) : memref<?x8xf32>
  scf.forall (%i) in (%n) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<1x8xf32>
    linalg.fill ins(%x : f32) outs(%t : memref<1x8xf32>)
    %row = memref.subview %out[%i, 0] [1, 8] [1, 1] : memref<?x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    linalg.copy ins(%t : memref<1x8xf32>) outs(%row : memref<1x8xf32, strided<[8, 1], offset: ?>>)
    memref.dealloc %t : memref<1x8xf32>
  }
  return
}

// -----

// Checks that buffers beyond 64 KiB per iteration stay on the heap.
// CHECK-LABEL: func @too_big
// CHECK: memref.alloca() : memref<16384xf32>
// CHECK: memref.alloc() : memref<16xf32>
func.func @too_big(%x: f32, %n: index) {
  scf.forall (%i) in (%n) {
    %a = memref.alloc() : memref<16384xf32>
    linalg.fill ins(%x : f32) outs(%a : memref<16384xf32>)
    %b = memref.alloc() : memref<16xf32>
    linalg.fill ins(%x : f32) outs(%b : memref<16xf32>)
  }
  return
}
