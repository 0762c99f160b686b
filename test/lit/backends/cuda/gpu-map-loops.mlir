// RUN: kiln-opt %s -split-input-file -kiln-gpu-map-loops -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-gpu-map-loops=emulate=1 -verify-diagnostics | FileCheck %s --check-prefix=EMU

// A 2-D parallel loop: linearised, innermost dim fastest, masked, mapped
// to (block_x, thread_x) with 256 threads a block. (The innermost dim of
// 3 is no multiple of 4: one element a thread.)
// CHECK-LABEL: func.func @elementwise
// CHECK:       %[[C3:.*]] = arith.constant 3 : index
// CHECK:       %[[N:.*]] = memref.dim %arg0, %c0
// CHECK:       %[[TOTAL:.*]] = arith.muli %[[N]], %[[C3]] : index
// CHECK:       %[[C256:.*]] = arith.constant 256 : index
// CHECK:       %[[BLOCKS:.*]] = arith.ceildivui %[[TOTAL]], %[[C256]] : index
// CHECK:       scf.parallel (%[[B:.*]], %[[T:.*]]) = ({{.*}}) to (%[[BLOCKS]], %[[C256]])
// CHECK:         %[[BASE:.*]] = arith.muli %[[B]], %[[C256]] : index
// CHECK:         %[[L:.*]] = arith.addi %[[BASE]], %[[T]] : index
// CHECK:         %[[IN:.*]] = arith.cmpi ult, %[[L]], %[[TOTAL]] : index
// CHECK:         scf.if %[[IN]] {
// CHECK:           %[[J:.*]] = arith.remui %[[L]], %[[C3]] : index
// CHECK:           %[[I:.*]] = arith.divui %[[L]], %[[C3]] : index
// CHECK:           memref.load %arg0[%[[I]], %[[J]]]
// CHECK:           math.exp
// CHECK:           memref.store {{.*}}, %arg1[%[[I]], %[[J]]]
// CHECK:       } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
func.func @elementwise(%a: memref<?x3xf32>, %b: memref<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %a, %c0 : memref<?x3xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c3) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x3xf32>
    %y = math.exp %x : f32
    memref.store %y, %b[%i, %j] : memref<?x3xf32>
    scf.reduce
  }
  return
}

// -----

// A reduction row loop: the parallel dims map to threads, the reduction
// stays a loop in each thread, and a parallel loop inside runs
// sequentially there.
// CHECK-LABEL: func.func @rows
// CHECK:       scf.parallel
// CHECK:         scf.if
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK-NOT:         scf.parallel
// CHECK:       } {mapping
func.func @rows(%a: memref<8x16x4xf32>, %b: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
        %x = memref.load %a[%i, %k, %j] : memref<8x16x4xf32>
        %s = memref.load %b[%i, %j] : memref<8x4xf32>
        %t = arith.addf %x, %s : f32
        memref.store %t, %b[%i, %j] : memref<8x4xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}

// -----

// A copy becomes a mapped loop over the target; a sequential loop at the
// top runs on one thread; a constant a loop reads is hoisted out (the
// kernel gets it as an argument).
// CHECK-LABEL: func.func @copy_and_serial
// CHECK-NOT:   memref.copy
// CHECK:       scf.parallel
// CHECK:         memref.load %arg0
// CHECK:         memref.store {{.*}}, %arg1
// CHECK:       } {mapping
// CHECK:       %[[G:.*]] = memref.get_global @table
// CHECK:       scf.parallel {{.*}} to (%c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK:         scf.for
// CHECK:           memref.load %[[G]]
// CHECK:       } {mapping
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @copy_and_serial(%a: memref<2x3xf32>, %b: memref<2x3xf32>, %c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  memref.copy %a, %b : memref<2x3xf32> to memref<2x3xf32>
  scf.for %i = %c1 to %c4 step %c1 {
    %t = memref.get_global @table : memref<4xf32>
    %prev = arith.subi %i, %c1 : index
    %x = memref.load %c[%prev] : memref<4xf32>
    %y = memref.load %t[%i] : memref<4xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %c[%i] : memref<4xf32>
  }
  return
}

// -----

// A serial loop carrying a scalar nothing reads after it (a topk row's
// k-th best so far) runs on one thread like one without; one whose scalar
// the host uses is refused.
// CHECK-LABEL: func.func @carried
// CHECK:       scf.parallel {{.*}} to (%c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK:         scf.for {{.*}} iter_args
// CHECK:       } {mapping
func.func @carried(%c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %best = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %zero) -> (f32) {
    %x = memref.load %c[%i] : memref<4xf32>
    %m = arith.maximumf %b, %x : f32
    memref.store %m, %c[%i] : memref<4xf32>
    scf.yield %m : f32
  }
  return
}

// -----

func.func @carried_to_host(%c: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{the CUDA backend cannot run this on the host: it reads device memory into a value the host uses}}
  %best = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %zero) -> (f32) {
    %x = memref.load %c[%i] : memref<4xf32>
    %m = arith.maximumf %b, %x : f32
    memref.store %m, %c[%i] : memref<4xf32>
    scf.yield %m : f32
  }
  return %best : f32
}

// -----

// Refused, naming the op: a kernel cannot allocate. (What the host reads
// from device memory: device-reads.mlir.)
func.func @allocates(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @below {{the CUDA backend cannot allocate inside a kernel}}
    %row = memref.alloc(%i) : memref<?xf32>
    memref.dealloc %row : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// The innermost dim counts a multiple of 4 and is only ever the last
// index of f32 accesses at 16-byte aligned addresses (arguments; a view
// of the arena at 64 bytes; a row of 8 as stride): a thread takes 4
// elements, one vector load a buffer, the body once an element, one
// vector store. The bias, read along the same dim, too; the scale, read
// at the row, stays a scalar load (once an element).
// CHECK-LABEL: func.func @vectorised
// CHECK:       scf.parallel (%[[B:.*]], %[[T:.*]]) =
// CHECK:         scf.if
// CHECK:           %[[G:.*]] = arith.remui %{{.*}}, %c2
// CHECK:           %[[I:.*]] = arith.divui %{{.*}}, %c2
// CHECK:           %[[J:.*]] = arith.muli %[[G]], %c4
// CHECK:           %[[X:.*]] = vector.load %arg0[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<32x8xf32>, vector<4xf32>
// CHECK-COUNT-4:   vector.extract %[[X]]
// CHECK:           %[[BIAS:.*]] = vector.load %[[VIEW:.*]][%[[J]]] {alignment = 16 : i64} : memref<8xf32>, vector<4xf32>
// CHECK-COUNT-4:   memref.load %arg2[%[[I]]] : memref<32xf32>
// CHECK-COUNT-4:   arith.addf
// CHECK-COUNT-4:   arith.mulf
// CHECK:           %[[Y:.*]] = vector.from_elements
// CHECK:           vector.store %[[Y]], %arg1[%[[I]], %[[J]]] {alignment = 16 : i64}
func.func @vectorised(%a: memref<32x8xf32>, %b: memref<32x8xf32>, %s: memref<32xf32>, %arena: memref<128xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bias = memref.view %arena[%c64][] : memref<128xi8> to memref<8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<32x8xf32>
    %c = memref.load %bias[%j] : memref<8xf32>
    %k = memref.load %s[%i] : memref<32xf32>
    %y = arith.addf %x, %c : f32
    %z = arith.mulf %y, %k : f32
    memref.store %z, %b[%i, %j] : memref<32x8xf32>
    scf.reduce
  }
  return
}

// -----

// One element a thread where the 16 bytes are not provably aligned or
// the index is used otherwise: a view at 8 bytes into the arena; a
// subview at a run-time offset; the index in arithmetic; i1 elements
// (which LLVM packs into bits in a vector); f16 rows of 4 (16 bytes of
// f16 are 8 elements).
// CHECK-LABEL: func.func @not_vectorised
// CHECK-NOT:   vector.
// CHECK-LABEL: func.func @dynamic_offset
// CHECK-NOT:   vector.
// CHECK-LABEL: func.func @index_used
// CHECK-NOT:   vector.
// CHECK-LABEL: func.func @bits
// CHECK-NOT:   vector.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT:   vector.
func.func @not_vectorised(%b: memref<32x8xf32>, %arena: memref<128xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %bias = memref.view %arena[%c8][] : memref<128xi8> to memref<8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
    %c = memref.load %bias[%j] : memref<8xf32>
    memref.store %c, %b[%i, %j] : memref<32x8xf32>
    scf.reduce
  }
  return
}
func.func @dynamic_offset(%a: memref<32x8xf32>, %b: memref<32x8xf32>, %o: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %v = memref.subview %a[0, %o] [32, 4] [1, 1] : memref<32x8xf32> to memref<32x4xf32, strided<[8, 1], offset: ?>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c4) step (%c1, %c1) {
    %x = memref.load %v[%i, %j] : memref<32x4xf32, strided<[8, 1], offset: ?>>
    memref.store %x, %b[%i, %j] : memref<32x8xf32>
    scf.reduce
  }
  return
}
func.func @index_used(%b: memref<32x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
    %n = arith.index_cast %j : index to i32
    %f = arith.sitofp %n : i32 to f32
    memref.store %f, %b[%i, %j] : memref<32x8xf32>
    scf.reduce
  }
  return
}
func.func @bits(%a: memref<32x16xi1>, %b: memref<32x16xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c16) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<32x16xi1>
    memref.store %x, %b[%i, %j] : memref<32x16xi1>
    scf.reduce
  }
  return
}
func.func @short_rows(%a: memref<32x4xf16>, %b: memref<32x4xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c4) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<32x4xf16>
    memref.store %x, %b[%i, %j] : memref<32x4xf16>
    scf.reduce
  }
  return
}

// -----

// Other element sizes take 16 bytes of the narrowest a thread: f64, 2
// (ld.global.v2.b64); f16, 8; an i8 mask beside f32 data, 16 (the f32
// accesses 64 bytes each, still 16-byte aligned).
// CHECK-LABEL: func.func @half
// CHECK:         vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x8xf16>, vector<8xf16>
// CHECK-COUNT-8: arith.addf
// CHECK:         vector.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x8xf16>, vector<8xf16>
// CHECK-LABEL: func.func @mask
// CHECK:         %[[C16:.*]] = arith.constant 16 : index
// CHECK:         scf.parallel
// CHECK:           %[[J:.*]] = arith.muli %{{.*}}, %[[C16]]
// CHECK:           vector.load %arg0[%{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<4x32xi8>, vector<16xi8>
// CHECK:           vector.load %arg1[%{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<4x32xf32>, vector<16xf32>
// CHECK-COUNT-16:  arith.select
// CHECK:           vector.store %{{.*}}, %arg2[%{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<4x32xf32>, vector<16xf32>
// CHECK-LABEL: func.func @wide_elements
// CHECK:         vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x8xf64>, vector<2xf64>
// CHECK:         vector.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x8xf64>, vector<2xf64>
// Emulated: the host's vector accesses aligned to their element only.
// EMU-LABEL: func.func @mask
// EMU:         vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 1 : i64} : memref<4x32xi8>, vector<16xi8>
// EMU:         vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<4x32xf32>, vector<16xf32>
func.func @half(%a: memref<32x8xf16>, %b: memref<32x8xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<32x8xf16>
    %y = arith.addf %x, %x : f16
    memref.store %y, %b[%i, %j] : memref<32x8xf16>
    scf.reduce
  }
  return
}
func.func @mask(%m: memref<4x32xi8>, %x: memref<4x32xf32>, %y: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0 : i8
  %ninf = arith.constant -1.0e+09 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
    %k = memref.load %m[%i, %j] : memref<4x32xi8>
    %v = memref.load %x[%i, %j] : memref<4x32xf32>
    %keep = arith.cmpi ne, %k, %zero : i8
    %r = arith.select %keep, %v, %ninf : f32
    memref.store %r, %y[%i, %j] : memref<4x32xf32>
    scf.reduce
  }
  return
}
func.func @wide_elements(%a: memref<32x8xf64>, %b: memref<32x8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<32x8xf64>
    memref.store %x, %b[%i, %j] : memref<32x8xf64>
    scf.reduce
  }
  return
}
