// RUN: kiln-opt %s -split-input-file -kiln-free-after-last-use | FileCheck %s

// Checks that each deallocation moves to right after the last use of its
// buffer or of a view of it, and that an op nested in a region counts as
// its ancestor in the block.
func.func private @f(memref<?x8xf32>, memref<?x8xf32>)
func.func private @g(memref<?x2x4xf32>)

// CHECK-LABEL: func @chain
// CHECK:      %[[A:.*]] = memref.alloc
// CHECK-NEXT: call @f(%{{.*}}, %[[A]])
// CHECK-NEXT: %[[B:.*]] = memref.alloc
// CHECK-NEXT: call @f(%[[A]], %[[B]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[V:.*]] = memref.expand_shape %[[B]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc
// CHECK-NEXT: call @f(%{{.*}}, %[[C]])
// CHECK-NEXT: call @g(%[[V]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: scf.for
// CHECK:      }
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: return
func.func @chain(%x: memref<?x8xf32>, %y: memref<?x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%n) : memref<?x8xf32>
  call @f(%x, %a) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
  %b = memref.alloc(%n) : memref<?x8xf32>
  call @f(%a, %b) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
  %v = memref.expand_shape %b [[0], [1, 2]] output_shape [%n, 2, 4]
      : memref<?x8xf32> into memref<?x2x4xf32>
  %c = memref.alloc(%n) : memref<?x8xf32>
  call @f(%x, %c) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
  call @g(%v) : (memref<?x2x4xf32>) -> ()
  scf.for %i = %c0 to %n step %c1 {
    %e = memref.load %c[%i, %c0] : memref<?x8xf32>
    memref.store %e, %y[%i, %c0] : memref<?x8xf32>
  }
  memref.dealloc %a : memref<?x8xf32>
  memref.dealloc %b : memref<?x8xf32>
  memref.dealloc %c : memref<?x8xf32>
  return
}

// -----

// Checks that a buffer that may escape through an op returning a memref
// keeps its deallocation at the end, as does one allocated in another
// block, and that a buffer nothing reads is freed right after it is made.
func.func private @alias(memref<?x8xf32>) -> memref<?x8xf32>
func.func private @f(memref<?x8xf32>, memref<?x8xf32>)

// CHECK-LABEL: func @kept
// CHECK:      %[[A:.*]] = memref.alloc
// CHECK-NEXT: %[[R:.*]] = call @alias(%[[A]])
// CHECK-NEXT: %[[U:.*]] = memref.alloc
// CHECK-NEXT: memref.dealloc %[[U]]
// CHECK-NEXT: call @f(%[[R]], %{{.*}})
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @kept(%y: memref<?x8xf32>, %n: index) {
  %a = memref.alloc(%n) : memref<?x8xf32>
  %r = call @alias(%a) : (memref<?x8xf32>) -> memref<?x8xf32>
  %unused = memref.alloc(%n) : memref<?x8xf32>
  call @f(%r, %y) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
  memref.dealloc %a : memref<?x8xf32>
  memref.dealloc %unused : memref<?x8xf32>
  return
}

// CHECK-LABEL: func @other_block
// CHECK:      scf.if
// CHECK-NEXT:   memref.dealloc
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @other_block(%x: memref<?x8xf32>, %y: memref<?x8xf32>, %n: index, %p: i1) {
  %a = memref.alloc(%n) : memref<?x8xf32>
  call @f(%x, %a) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
  call @f(%a, %y) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
  scf.if %p {
    memref.dealloc %a : memref<?x8xf32>
  }
  return
}
