// RUN: kiln-opt %s -split-input-file -kiln-plan-memory | FileCheck %s

// Checks that three buffers in a chain share one arena and that the first
// and the third, never live together, get the same offset.
// CHECK-LABEL: func @chain
// CHECK-SAME: kiln.memory_plan = {arena_bytes = 2048 : i64, buffers = array<i64: [[A0:[0-9]+]], 1024, 0, 3, {{[0-9]+}}, 1024, 2, 5, [[A0]], 1024, 4, 6>, lower_bound = 2048 : i64, naive_bytes = 3072 : i64, planned = 3 : i64, positions = 8 : i64, unplanned = 0 : i64}
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64, kiln.arena} : memref<2048xi8>
// CHECK: %[[OA:.*]] = arith.constant [[A:[0-9]+]] : index
// CHECK: %[[VA:.*]] = memref.view %[[ARENA]][%[[OA]]][] : memref<2048xi8> to memref<256xf32>
// CHECK: %[[OB:.*]] = arith.constant {{[0-9]+}} : index
// CHECK: memref.view %[[ARENA]][%[[OB]]][]
// CHECK: %[[OC:.*]] = arith.constant [[A]] : index
// CHECK: memref.view %[[ARENA]][%[[OC]]][]
// CHECK-NOT: memref.alloc()
func.func @chain(%x: f32, %out: memref<256xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<256xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.copy ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.copy ins(%b : memref<256xf32>) outs(%c : memref<256xf32>)
  linalg.copy ins(%c : memref<256xf32>) outs(%out : memref<256xf32>)
  return
}

// -----

// Checks that a returned buffer is not planned: the caller owns it.
// CHECK-LABEL: func @returned
// CHECK-SAME: planned = 1 : i64, positions = {{[0-9]+}} : i64, unplanned = 1 : i64
// CHECK: memref.alloc() {alignment = 64 : i64, kiln.arena} : memref<64xi8>
// CHECK: %[[R:.*]] = memref.alloc() : memref<16xf32>
// CHECK: return %[[R]]
func.func @returned(%x: f32) -> memref<16xf32> {
  %t = memref.alloc() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%t : memref<16xf32>)
  %r = memref.alloc() : memref<16xf32>
  linalg.copy ins(%t : memref<16xf32>) outs(%r : memref<16xf32>)
  return %r : memref<16xf32>
}

// -----

// Checks that a buffer with a dynamic dim stays a separate allocation.
// CHECK-LABEL: func @dynamic
// CHECK-SAME: planned = 0 : i64, positions = {{[0-9]+}} : i64, unplanned = 1 : i64
// CHECK-NOT: kiln.arena
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
func.func @dynamic(%n: index, %x: f32, %out: memref<?xf32>) {
  %t = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%x : f32) outs(%t : memref<?xf32>)
  linalg.copy ins(%t : memref<?xf32>) outs(%out : memref<?xf32>)
  return
}

// -----

// Checks that a use through a view (collapse_shape) keeps the buffer alive:
// %a is read through %v after %b is written, so they do not overlap.
// CHECK-LABEL: func @through_view
// CHECK-SAME: arena_bytes = 1024 : i64
// CHECK: arith.constant [[A:[0-9]+]] : index
// CHECK-NOT: arith.constant [[A]] : index
// CHECK: memref.collapse_shape
func.func @through_view(%x: f32, %out: memref<128xf32>) {
  %a = memref.alloc() : memref<2x64xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<2x64xf32>)
  %b = memref.alloc() : memref<128xf32>
  linalg.fill ins(%x : f32) outs(%b : memref<128xf32>)
  %v = memref.collapse_shape %a [[0, 1]] : memref<2x64xf32> into memref<128xf32>
  linalg.add ins(%v, %b : memref<128xf32>, memref<128xf32>) outs(%out : memref<128xf32>)
  return
}

// -----

// Checks that a buffer used inside a loop lives until the loop ends, and
// that a buffer yielded out of a region is left alone.
// CHECK-LABEL: func @loop
// CHECK-SAME: planned = 1 : i64, positions = {{[0-9]+}} : i64, unplanned = 1 : i64
func.func @loop(%x: f32, %n: index, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<8xf32>)
  %y = memref.alloc() : memref<8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %y) -> (memref<8xf32>) {
    linalg.add ins(%a, %acc : memref<8xf32>, memref<8xf32>) outs(%out : memref<8xf32>)
    scf.yield %acc : memref<8xf32>
  }
  return
}
