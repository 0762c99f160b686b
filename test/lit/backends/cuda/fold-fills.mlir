// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-fold-fills))' | FileCheck %s
// A max pool lowered for the GPU: one kernel, not a fill kernel and a
// pooling kernel (the whole mapping, then each scf.parallel is a launch).
// RUN: kiln-opt %s -split-input-file -kiln-cuda-codegen | FileCheck %s --check-prefix=PTX

// The fill of the pool's output (a parallel loop storing -inf into every
// element) is gone, past the profiler's marker of the next kernel; the
// pooling nest stores -inf into its own element before its window's
// loops.
// CHECK-LABEL: func.func @max_pool
// CHECK:       %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NOT:   scf.parallel
// CHECK:       call @kiln_kernel_begin
// CHECK-NEXT:  scf.parallel (%[[N:.*]], %[[C:.*]], %[[H:.*]], %[[W:.*]]) =
// CHECK-NEXT:    memref.store %[[NINF]], %arg1[%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:    scf.for
// CHECK:           memref.load %arg1[%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK:           arith.maximumf
// CHECK:           memref.store %{{.*}}, %arg1[%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NOT:   scf.parallel
// PTX:         .entry max_pool_kernel(
// PTX-NOT:     max_pool_kernel_0
func.func private @kiln_kernel_begin(i32)
func.func @max_pool(%x: memref<1x2x8x8xf32>, %y: memref<1x2x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c1, %c2, %c4, %c4) step (%c1, %c1, %c1, %c1) {
    memref.store %ninf, %y[%n, %c, %h, %w] : memref<1x2x4x4xf32>
    scf.reduce
  }
  %k1 = arith.constant 1 : i32
  func.call @kiln_kernel_begin(%k1) : (i32) -> ()
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c1, %c2, %c4, %c4) step (%c1, %c1, %c1, %c1) {
    scf.for %kh = %c0 to %c2 step %c1 {
      scf.for %kw = %c0 to %c2 step %c1 {
        %h2 = arith.muli %h, %c2 : index
        %ih = arith.addi %h2, %kh : index
        %w2 = arith.muli %w, %c2 : index
        %iw = arith.addi %w2, %kw : index
        %v = memref.load %x[%n, %c, %ih, %iw] : memref<1x2x8x8xf32>
        %o = memref.load %y[%n, %c, %h, %w] : memref<1x2x4x4xf32>
        %m = arith.maximumf %o, %v : f32
        memref.store %m, %y[%n, %c, %h, %w] : memref<1x2x4x4xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// Left alone: the nest reads another element of the filled buffer; the
// fill covers only part of the nest's iterations; the nest's bound is
// another value; another view of the buffer is read.
// CHECK-LABEL: func.func @reads_neighbour
// CHECK-COUNT-2: scf.parallel
// CHECK-LABEL: func.func @partial_fill
// CHECK-COUNT-2: scf.parallel
// CHECK-LABEL: func.func @other_bound
// CHECK-COUNT-2: scf.parallel
// CHECK-LABEL: func.func @other_view
// CHECK-COUNT-2: scf.parallel
func.func @reads_neighbour(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    memref.store %zero, %y[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %jn = arith.remui %j, %c3 : index
    %o = memref.load %y[%i, %jn] : memref<4x4xf32>
    %v = memref.load %x[%i, %j] : memref<4x4xf32>
    %s = arith.addf %o, %v : f32
    memref.store %s, %y[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  return
}
func.func @partial_fill(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    memref.store %zero, %y[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %o = memref.load %y[%i, %j] : memref<4x4xf32>
    %v = memref.load %x[%i, %j] : memref<4x4xf32>
    %s = arith.addf %o, %v : f32
    memref.store %s, %y[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  return
}
func.func @other_bound(%x: memref<?x4xf32>, %y: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %y, %c0 : memref<?x4xf32>
  %m = memref.dim %x, %c0 : memref<?x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
    memref.store %zero, %y[%i, %j] : memref<?x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c4) step (%c1, %c1) {
    %o = memref.load %y[%i, %j] : memref<?x4xf32>
    %v = memref.load %x[%i, %j] : memref<?x4xf32>
    %s = arith.addf %o, %v : f32
    memref.store %s, %y[%i, %j] : memref<?x4xf32>
    scf.reduce
  }
  return
}
func.func @other_view(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.transpose %y (i, j) -> (j, i) : memref<4x4xf32> to memref<4x4xf32, strided<[1, 4]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    memref.store %zero, %y[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %o = memref.load %t[%i, %j] : memref<4x4xf32, strided<[1, 4]>>
    %v = memref.load %x[%i, %j] : memref<4x4xf32>
    %s = arith.addf %o, %v : f32
    memref.store %s, %y[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  return
}

// -----

// A dynamic batch: both nests run to the input's dim, the buffers are the
// pool's allocations: folded.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-COUNT-1: scf.parallel
// CHECK-NOT:   scf.parallel
func.func @dynamic_batch(%x: memref<?x4xf32>) -> memref<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %y = memref.alloc(%n) : memref<?x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
    memref.store %zero, %y[%i, %j] : memref<?x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
    %o = memref.load %y[%i, %j] : memref<?x4xf32>
    %v = memref.load %x[%i, %j] : memref<?x4xf32>
    %s = arith.addf %o, %v : f32
    memref.store %s, %y[%i, %j] : memref<?x4xf32>
    scf.reduce
  }
  return %y : memref<?x4xf32>
}
