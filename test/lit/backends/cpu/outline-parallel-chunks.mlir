// RUN: kiln-opt %s -split-input-file -kiln-outline-parallel-chunks -cse | FileCheck %s

// Checks that a 2-D parallel loop becomes a chunk over its leading dim with
// the innermost dim kept as a plain loop, constants cloned, memrefs passed,
// and a call over the whole leading range.
// CHECK-LABEL: func @copy_2d
// CHECK-SAME: (%[[A:.*]]: memref<64x512xf32>, %[[B:.*]]: memref<64x512xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: call @__kiln_chunk_0(%[[A]], %[[B]], %[[C0]], %[[C64]])
// CHECK-NOT: scf.parallel
// CHECK: func.func private @__kiln_chunk_0(%[[CA:.*]]: memref<64x512xf32>, %[[CB:.*]]: memref<64x512xf32>, %[[BEGIN:.*]]: index, %[[END:.*]]: index)
// CHECK: scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}}
// CHECK: memref.load %[[CA]][%[[I]], %[[J]]]
// CHECK: memref.store %{{.*}}, %[[CB]][%[[I]], %[[J]]]
func.func @copy_2d(%a: memref<64x512xf32>, %b: memref<64x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<64x512xf32>
    memref.store %x, %b[%i, %j] : memref<64x512xf32>
    scf.reduce
  }
  return
}

// -----

// Checks that three leading dims are linearised: the call covers 2 * 8 * 16
// iterations and the chunk recovers each index with rem / div.
// CHECK-LABEL: func @linearised
// CHECK: %[[N:.*]] = arith.constant 256 : index
// CHECK: call @__kiln_chunk_0(%{{.*}}, %{{.*}}, %[[N]])
// CHECK: func.func private @__kiln_chunk_0
// CHECK: scf.for %[[L:.*]] =
// CHECK: arith.remui %[[L]]
// CHECK: arith.divui %[[L]]
// CHECK: scf.for
func.func @linearised(%a: memref<2x8x16x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%c2, %c8, %c16, %c128) step (%c1, %c1, %c1, %c1) {
    memref.store %z, %a[%i, %j, %k, %l] : memref<2x8x16x128xf32>
    scf.reduce
  }
  return
}

// -----

// Checks that dynamic bounds are passed to the chunk and the range is
// computed at run time.
// CHECK-LABEL: func @dynamic
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32>, %[[N:.*]]: index, %[[M:.*]]: index)
// CHECK: call @__kiln_chunk_0(%[[A]], %[[N]], %[[M]], %{{.*}}, %[[N]])
func.func @dynamic(%a: memref<?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    memref.store %z, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// Checks that a loop whose body allocates is not outlined: worker threads
// have no allocator.
// CHECK-LABEL: func @allocates
// CHECK: scf.parallel
// CHECK-NOT: __kiln_chunk
func.func @allocates(%a: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c256) step (%c1, %c1) {
    %t = memref.alloc() : memref<4xf32>
    %x = memref.load %t[%c0] : memref<4xf32>
    memref.store %x, %a[%i, %j] : memref<256x256xf32>
    memref.dealloc %t : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// Checks that a loop whose body calls a function is not outlined.
// CHECK-LABEL: func @calls
// CHECK: scf.parallel
// CHECK-NOT: __kiln_chunk
func.func private @g(index)
func.func @calls() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c256) step (%c1, %c1) {
    func.call @g(%i) : (index) -> ()
    scf.reduce
  }
  return
}

// -----

// Checks that a loop nest below min-work (default 32768 iterations) stays
// sequential, counting the iterations of the nested reduction loop.
// CHECK-LABEL: func @small
// CHECK: scf.parallel
// CHECK-NOT: __kiln_chunk
func.func @small(%a: memref<16x64xf32>, %b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %x = memref.load %a[%i, %k] : memref<16x64xf32>
      %y = memref.load %b[%i] : memref<16xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %b[%i] : memref<16xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Checks that a 1-D loop is chunked directly (no inner loop), and that the
// nested reduction loop is counted as work (1024 * 64 >= 32768).
// CHECK-LABEL: func @row_sums
// CHECK: call @__kiln_chunk_0
// CHECK: func.func private @__kiln_chunk_0
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[K:.*]] =
// CHECK: memref.load %{{.*}}[%[[I]], %[[K]]]
func.func @row_sums(%a: memref<1024x64xf32>, %b: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %x = memref.load %a[%i, %k] : memref<1024x64xf32>
      %y = memref.load %b[%i] : memref<1024xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %b[%i] : memref<1024xf32>
    }
    scf.reduce
  }
  return
}
