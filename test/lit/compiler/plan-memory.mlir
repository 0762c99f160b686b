// RUN: kiln-opt %s -split-input-file -kiln-plan-memory | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-plan-memory=max-batch=8 | FileCheck %s --check-prefix=BATCH

// Checks that three buffers in a chain share one arena and that the first
// and the third, never live together, get the same offset.
// CHECK-LABEL: func @chain
// CHECK-SAME: kiln.memory_plan = {arena_bytes = 2048 : i64, bounded = 0 : i64, buffers = array<i64: [[A0:[0-9]+]], 1024, 0, 3, {{[0-9]+}}, 1024, 2, 5, [[A0]], 1024, 4, 6>, in_place = 0 : i64, lower_bound = 2048 : i64, max_batch = 0 : i64, naive_bytes = 3072 : i64, planned = 3 : i64, positions = 8 : i64, unplanned = 0 : i64}
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

// -----

// Checks that an elementwise result is written in place of an input that
// dies there (one slot for %a and %b), and that the slot then lives until
// %b's last use.
// CHECK-LABEL: func @in_place
// CHECK-SAME: arena_bytes = 1024 : i64, bounded = 0 : i64, buffers = array<i64: 0, 1024, 0, 4>, in_place = 1 : i64
// CHECK-SAME: planned = 2 : i64
// CHECK: %[[O1:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%[[O1]]][]
// CHECK: %[[O2:.*]] = arith.constant 0 : index
// CHECK: %[[B:.*]] = memref.view %{{.*}}[%[[O2]]][]
// CHECK: linalg.generic {{.*}} ins(%[[A]], %arg1 : {{.*}}) outs(%[[B]] :
#id = affine_map<(d0) -> (d0)>
func.func @in_place(%x: f32, %y: memref<256xf32>, %out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<256xf32>)
  %b = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %y : memref<256xf32>, memref<256xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.copy ins(%b : memref<256xf32>) outs(%out : memref<256xf32>)
  return
}

// -----

// Checks the cases that must not share: the input is read again later
// (%a), the input is read through another map (a transpose, %c), and the
// result is also read through a view of the input (%e).
// CHECK-LABEL: func @not_in_place
// CHECK-SAME: in_place = 0 : i64
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @not_in_place(%x: f32, %out: memref<16x16xf32>) {
  %a = memref.alloc() : memref<16x16xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<16x16xf32>)
  %b = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  }
  %c = memref.alloc() : memref<16x16xf32>
  linalg.add ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%c : memref<16x16xf32>)
  %d = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x16xf32>) outs(%d : memref<16x16xf32>) {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  }
  %e = memref.alloc() : memref<16x16xf32>
  %t = memref.transpose %d (i, j) -> (j, i) : memref<16x16xf32> to memref<16x16xf32, strided<[1, 16]>>
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d, %t : memref<16x16xf32>, memref<16x16xf32, strided<[1, 16]>>) outs(%e : memref<16x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.copy ins(%e : memref<16x16xf32>) outs(%out : memref<16x16xf32>)
  return
}

// -----

// Checks that with max-batch=8 buffers whose dims derive from the batch
// (dim 0 of an argument, through collapse_shape, muli and maxui) are
// planned at their size for batch 8 and keep their run-time sizes; a dim
// that does not derive from it (%n) stays unplanned. Without max-batch
// all three stay separate allocations.
// CHECK-LABEL: func @batch
// CHECK-SAME: planned = 0 : i64
// BATCH-LABEL: func @batch
// BATCH-SAME: arena_bytes = 8192 : i64, bounded = 2 : i64, buffers = array<i64: 0, 8192, {{[0-9]+}}, {{[0-9]+}}, 0, 8192, {{[0-9]+}}, {{[0-9]+}}>
// BATCH-SAME: max_batch = 8 : i64
// BATCH-SAME: planned = 2 : i64, positions = {{[0-9]+}} : i64, unplanned = 1 : i64
// BATCH: %[[D:.*]] = memref.dim %arg0, %c0
// BATCH: memref.view %{{.*}}[%{{.*}}][%[[D]]] : memref<8192xi8> to memref<?x256xf32>
// BATCH: memref.view %{{.*}}[%{{.*}}][%{{.*}}] : memref<8192xi8> to memref<?xf32>
// BATCH: memref.alloc(%arg1) : memref<?xf32>
func.func @batch(%in: memref<?x256xf32>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %d = memref.dim %in, %c0 : memref<?x256xf32>
  %a = memref.alloc(%d) : memref<?x256xf32>
  linalg.copy ins(%in : memref<?x256xf32>) outs(%a : memref<?x256xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<?x256xf32> into memref<?xf32>
  %f = memref.dim %flat, %c0 : memref<?xf32>
  %m = arith.maxui %f, %c256 : index
  %b = memref.alloc(%m) : memref<?xf32>
  linalg.fill ins(%x : f32) outs(%b : memref<?xf32>)
  %u = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%x : f32) outs(%u : memref<?xf32>)
  return
}

// -----

// A training step: the backward pass starts at its first marked op that
// computes (the marked constant and allocation before it do not count);
// %a lives across that position (saved for the backward pass), %b not.
// CHECK-LABEL: func @training_step
// CHECK-SAME: backward_from = 5 : i64
// CHECK-SAME: buffers = array<i64: {{[0-9]+}}, 1024, 0, 6, {{[0-9]+}}, 1024, 2, 3>
func.func @training_step(%x: f32, %out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<256xf32>)
  %b = memref.alloc() : memref<256xf32>
  linalg.copy ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
  %c = arith.constant 2.0 : f32 loc("kiln.backward"("c"))
  linalg.fill ins(%c : f32) outs(%out : memref<256xf32>) loc("kiln.backward"("dx"))
  linalg.copy ins(%a : memref<256xf32>) outs(%out : memref<256xf32>) loc("kiln.backward"("dy"))
  return
}
