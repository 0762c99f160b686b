// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows{unroll-steps=0}))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows{emulate=1 unroll-steps=0}))' | FileCheck %s --check-prefix=EMU
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows,canonicalize))' | FileCheck %s --check-prefix=UNROLL

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// A softmax row: the loop gets a dim of 32 lanes; the max and the sum
// stride over the lanes and combine by a butterfly of five shuffles into
// each lane's copy; the elementwise ops stride their elements; the fills
// of one element run whole in every lane. A lane's elements are
// e = lane + 32k for k below ceil(100 / 32) = 4 (a constant trip count),
// the last step masked (e < 100).
// CHECK-LABEL: func.func @softmax
// CHECK:       %[[C32:.*]] = arith.constant 32 : index
// CHECK:       scf.parallel (%[[ROW:.*]], %[[LANE:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[C32]])
// CHECK:         linalg.fill ins(%{{.*}}) outs(%[[MAX:.*]] : memref<1x1xf32>)
// CHECK:         %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[P:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c4{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[NEG]])
// CHECK:           %[[K32:.*]] = arith.muli %[[K]], %c32
// CHECK:           %[[E:.*]] = arith.addi %[[LANE]], %[[K32]]
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[E]], %c100
// CHECK:           scf.if %[[IN]] -> (f32) {
// CHECK:             memref.load %{{.*}}[%{{.*}}, %[[E]]]
// CHECK:             arith.maximumf %[[A]]
// CHECK:           } else {
// CHECK:             scf.yield %[[A]]
// CHECK:         %[[S16:.*]], %{{.*}} = gpu.shuffle xor %[[P]], %c16_i32, %c32_i32 : f32
// CHECK:         %[[M16:.*]] = arith.maximumf %[[P]], %[[S16]]
// CHECK:         gpu.shuffle xor %[[M16]], %c8_i32
// CHECK:         gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK:         gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK:         %[[S1:.*]], %{{.*}} = gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK:         %[[T:.*]] = arith.maximumf %{{.*}}, %[[S1]]
// CHECK:         %[[OLD:.*]] = memref.load %[[MAX]]
// CHECK:         %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[T]]
// CHECK:         memref.store %[[NEW]], %[[MAX]]
// The exponentials, touched by the lanes' strided ops only, are
// lane-private: 4 slots a lane, not the row of 100; element lane + 32k
// in slot k.
// CHECK-NOT:     memref<1x100xf32>{{$}}
// CHECK:         %[[OWN:.*]] = memref.alloca() : memref<4xf32>
// CHECK:         scf.for %[[K2:.*]] = %{{.*}} to %c4
// CHECK:           math.exp
// CHECK:           memref.store %{{.*}}, %[[OWN]][%[[K2]]] : memref<4xf32>
// CHECK:         scf.for %[[K3:.*]] = %{{.*}} to %c4
// CHECK:           memref.load %[[OWN]][%[[K3]]] : memref<4xf32>
// CHECK:         gpu.shuffle xor
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK:         scf.for %[[K4:.*]] = %{{.*}} to %c4
// CHECK:           memref.load %[[OWN]][%[[K4]]] : memref<4xf32>
// CHECK:           arith.divf
// CHECK-NOT:     linalg.generic

// Emulated: no lane dim; the lanes' partials in an array of 32, the
// butterfly reading lane ^ offset.
// The host runs the rows one after another: the row's stack buffers
// (its temporaries, the partials, the lanes' private slots) are
// allocated once before the loop, not once a row.
// EMU-LABEL: func.func @softmax
// EMU:       %[[PARTIALS:.*]] = memref.alloca() : memref<32xf32>
// EMU:       %[[OWN:.*]] = memref.alloca() : memref<32x4xf32>
// EMU:       scf.parallel (%{{[^,]*}}) =
// EMU-NOT:     memref.alloca
// EMU:         scf.for %[[L:.*]] = %c0{{.*}} to %c32
// EMU:           scf.for %{{.*}} = %{{.*}} to %c4
// EMU:           memref.store %{{.*}}, %[[PARTIALS]][%[[L]]]
// EMU:         scf.for %[[L2:.*]] = %c0{{.*}} to %c32
// EMU:           %[[PARTNER:.*]] = arith.xori %[[L2]], %c16
// EMU:           memref.load %[[PARTIALS]][%[[PARTNER]]]
// The lanes' private slots: a row of 4 for each of the 32 lanes, lane l's
// slot k at [l, k].
// EMU:         scf.for %[[L3:.*]] = %c0{{.*}} to %c32
// EMU:           scf.for %[[K:.*]] = %{{.*}} to %c4
// EMU:             math.exp
// EMU:             memref.store %{{.*}}, %[[OWN]][%[[L3]], %[[K]]] : memref<32x4xf32>
// EMU-NOT:   gpu.shuffle
// By default the lane loops (4 steps here) are unrolled: the lane-private
// slots are indexed with constants, which LLVM keeps in registers.
// UNROLL-LABEL: func.func @softmax
// UNROLL-NOT:   scf.for
// UNROLL:       %[[OWN:.*]] = memref.alloca() : memref<4xf32>
// UNROLL:       memref.store %{{.*}}, %[[OWN]][%c0{{.*}}] : memref<4xf32>
// UNROLL:       memref.store %{{.*}}, %[[OWN]][%c1{{.*}}] : memref<4xf32>
// UNROLL:       memref.store %{{.*}}, %[[OWN]][%c2{{.*}}] : memref<4xf32>
// UNROLL:       scf.if
// UNROLL:       memref.store %{{.*}}, %[[OWN]][%c3{{.*}}] : memref<4xf32>
// UNROLL-NOT:   scf.for
// UNROLL-LABEL: func.func @reversed
func.func @softmax(%x: memref<4x100xf32>, %y: memref<4x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %xr = memref.subview %x[%i, 0] [1, 100] [1, 1] : memref<4x100xf32> to memref<1x100xf32, strided<[100, 1], offset: ?>>
    %max = memref.alloca() : memref<1x1xf32>
    linalg.fill ins(%ninf : f32) outs(%max : memref<1x1xf32>)
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xr : memref<1x100xf32, strided<[100, 1], offset: ?>>) outs(%max : memref<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %out, %in : f32
      linalg.yield %m : f32
    }
    %e = memref.alloca() : memref<1x100xf32>
    linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%xr, %max : memref<1x100xf32, strided<[100, 1], offset: ?>>, memref<1x1xf32>) outs(%e : memref<1x100xf32>) {
    ^bb0(%in: f32, %mx: f32, %out: f32):
      %d = arith.subf %in, %mx : f32
      %v = math.exp %d : f32
      linalg.yield %v : f32
    }
    %sum = memref.alloca() : memref<1x1xf32>
    linalg.fill ins(%zero : f32) outs(%sum : memref<1x1xf32>)
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%e : memref<1x100xf32>) outs(%sum : memref<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
    }
    %yr = memref.subview %y[%i, 0] [1, 100] [1, 1] : memref<4x100xf32> to memref<1x100xf32, strided<[100, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : memref<1x100xf32>, memref<1x1xf32>) outs(%yr : memref<1x100xf32, strided<[100, 1], offset: ?>>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %q = arith.divf %in, %s : f32
      linalg.yield %q : f32
    }
    scf.reduce
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#rev = affine_map<(d0, d1) -> (d0, 99 - d1)>

// A lane would read elements another lane wrote (the second op reads the
// row reversed): the row stays on one thread.
// CHECK-LABEL: func.func @reversed
// CHECK:       scf.parallel (%{{[^,]*}}) =
// CHECK-NOT:   gpu.shuffle
// CHECK:       linalg.generic
// CHECK:       linalg.generic
func.func @reversed(%x: memref<4x100xf32>, %y: memref<4x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %xr = memref.subview %x[%i, 0] [1, 100] [1, 1] : memref<4x100xf32> to memref<1x100xf32, strided<[100, 1], offset: ?>>
    %t = memref.alloca() : memref<1x100xf32>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%xr : memref<1x100xf32, strided<[100, 1], offset: ?>>) outs(%t : memref<1x100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    }
    %yr = memref.subview %y[%i, 0] [1, 100] [1, 1] : memref<4x100xf32> to memref<1x100xf32, strided<[100, 1], offset: ?>>
    linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel", "parallel"]} ins(%t : memref<1x100xf32>) outs(%yr : memref<1x100xf32, strided<[100, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    scf.reduce
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// Rows of 16 (under a warp) stay on one thread each; so does a reduction
// whose payload is not `combine(%out, x)` (here it reads %out twice).
// CHECK-LABEL: func.func @short
// CHECK-NOT:   gpu.shuffle
// CHECK-LABEL: func.func @not_a_combiner
// CHECK-NOT:   gpu.shuffle
func.func @short(%x: memref<4x16xf32>, %y: memref<4x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %xr = memref.subview %x[%i, 0] [1, 16] [1, 1] : memref<4x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
    %s = memref.alloca() : memref<1x1xf32>
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xr : memref<1x16xf32, strided<[16, 1], offset: ?>>) outs(%s : memref<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %out, %in : f32
      linalg.yield %v : f32
    }
    scf.reduce
  }
  return
}
func.func @not_a_combiner(%x: memref<4x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %xr = memref.subview %x[%i, 0] [1, 100] [1, 1] : memref<4x100xf32> to memref<1x100xf32, strided<[100, 1], offset: ?>>
    %s = memref.alloca() : memref<1x1xf32>
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xr : memref<1x100xf32, strided<[100, 1], offset: ?>>) outs(%s : memref<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %w = arith.mulf %out, %in : f32
      %v = arith.addf %out, %w : f32
      linalg.yield %v : f32
    }
    scf.reduce
  }
  return
}

// -----

#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>

// A global average pool's row: two reduction dims (7 x 7) linearised over
// the lanes, element e at (e / 7, e % 7).
// CHECK-LABEL: func.func @two_reduction_dims
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}, %[[LANE:.*]]) =
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %c2
// CHECK:           %[[E:.*]] = arith.addi %[[LANE]]
// CHECK:           scf.if
// CHECK:           %[[W:.*]] = arith.remui %[[E]], %c7
// CHECK:           %[[H:.*]] = arith.divui %[[E]], %c7
// CHECK:           memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[H]], %[[W]]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:         memref.store
// The mean of one element runs whole in every lane.
// CHECK:         linalg.generic
// CHECK:           arith.divf
func.func @two_reduction_dims(%x: memref<2x64x7x7xf32>, %y: memref<2x64x1x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 49.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c64) step (%c1, %c1) {
    %xr = memref.subview %x[%i, %j, 0, 0] [1, 1, 7, 7] [1, 1, 1, 1] : memref<2x64x7x7xf32> to memref<1x1x7x7xf32, strided<[3136, 49, 7, 1], offset: ?>>
    %s = memref.alloca() : memref<1x1x1x1xf32>
    linalg.fill ins(%zero : f32) outs(%s : memref<1x1x1x1xf32>)
    linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%xr : memref<1x1x7x7xf32, strided<[3136, 49, 7, 1], offset: ?>>) outs(%s : memref<1x1x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %out, %in : f32
      linalg.yield %v : f32
    }
    %yr = memref.subview %y[%i, %j, 0, 0] [1, 1, 1, 1] [1, 1, 1, 1] : memref<2x64x1x1xf32> to memref<1x1x1x1xf32, strided<[64, 1, 1, 1], offset: ?>>
    linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : memref<1x1x1x1xf32>) outs(%yr : memref<1x1x1x1xf32, strided<[64, 1, 1, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      %q = arith.divf %in, %n : f32
      linalg.yield %q : f32
    }
    scf.reduce
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
#colsIn = affine_map<(d0, d1) -> (d1, d0)>

// A reduction at the top of the function (no row kernel): a warp each
// output element, the output shared by the lanes, so lane 0 alone writes.
// CHECK-LABEL: func.func @top_level
// CHECK:       linalg.fill
// CHECK:       scf.parallel (%[[I:.*]], %[[LANE:.*]]) = (%{{.*}}, %{{.*}}) to (%c8, %c32)
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %c10
// CHECK:           %[[E:.*]] = arith.addi %[[LANE]]
// CHECK:           memref.load %arg0[%[[I]], %[[E]]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:         scf.if %[[FIRST]] {
// CHECK:           memref.load %arg1[%[[I]]]
// CHECK:           memref.store %{{.*}}, %arg1[%[[I]]]
// EMU-LABEL: func.func @top_level
// EMU:       memref.alloca() : memref<32xf32>
// EMU:       scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c8)
// EMU-NOT:     memref.alloca
// EMU-NOT:     gpu.shuffle
// EMU:         memref.store %{{.*}}, %arg1[%[[I]]]
func.func @top_level(%x: memref<8x300xf32>, %y: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<8xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x300xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %out, %in : f32
    linalg.yield %v : f32
  }
  return
}

// Summing down columns (the reduction dim is not the innermost in memory):
// a thread each output element reads coalesced already; left as it is.
// CHECK-LABEL: func.func @columns
// CHECK-NOT:   gpu.shuffle
// CHECK:       linalg.generic
func.func @columns(%x: memref<300x8xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [#colsIn, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<300x8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %out, %in : f32
    linalg.yield %v : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#rev = affine_map<(d0, d1) -> (d0, 99 - d1)>

// An op reading the row reversed from the memory it writes: in one thread
// the order is sequential; on lanes, one would read another's writes. Left
// on one thread.
// CHECK-LABEL: func.func @in_place_reversed
// CHECK:       scf.parallel (%{{[^,]*}}) =
// CHECK:       linalg.generic
func.func @in_place_reversed(%x: memref<4x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %xr = memref.subview %x[%i, 0] [1, 100] [1, 1] : memref<4x100xf32> to memref<1x100xf32, strided<[100, 1], offset: ?>>
    linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel", "parallel"]} ins(%xr : memref<1x100xf32, strided<[100, 1], offset: ?>>) outs(%xr : memref<1x100xf32, strided<[100, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %out : f32
      linalg.yield %v : f32
    }
    scf.reduce
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A row temporary written by a strided op and read through another view
// (here transposed): on the GPU each thread has its own copy, holding only
// the elements its lane wrote, so a lane would read elements it never
// wrote. The row stays on one thread (the emulation, whose lanes share
// the copy, could not tell).
// CHECK-LABEL: func.func @view_of_strided
// CHECK:       scf.parallel (%{{[^,]*}}) =
// CHECK:       linalg.generic
// CHECK:       linalg.generic
func.func @view_of_strided(%x: memref<4x100xf32>, %y: memref<4x10x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %xr = memref.subview %x[%i, 0] [1, 100] [1, 1] : memref<4x100xf32> to memref<1x100xf32, strided<[100, 1], offset: ?>>
    %t = memref.alloca() : memref<1x100xf32>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%xr : memref<1x100xf32, strided<[100, 1], offset: ?>>) outs(%t : memref<1x100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    }
    %e = memref.expand_shape %t [[0], [1, 2]] output_shape [1, 10, 10] : memref<1x100xf32> into memref<1x10x10xf32>
    %tt = memref.transpose %e (d0, d1, d2) -> (d0, d2, d1) : memref<1x10x10xf32> to memref<1x10x10xf32, strided<[100, 1, 10]>>
    %yr = memref.subview %y[%i, 0, 0] [1, 10, 10] [1, 1, 1] : memref<4x10x10xf32> to memref<1x10x10xf32, strided<[100, 10, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%tt : memref<1x10x10xf32, strided<[100, 1, 10]>>) outs(%yr : memref<1x10x10xf32, strided<[100, 10, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    scf.reduce
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, 0)>

// A reduction reading one intermediate of the arena into another: two
// views of one buffer, but at disjoint bytes (the memory plan placed them
// apart), so a warp each output element reads nothing lane 0 writes.
// CHECK-LABEL: func.func @disjoint_arena_views
// CHECK:       scf.parallel (%{{.*}}, %[[LANE:.*]]) = (%{{.*}}, %{{.*}}) to (%c8, %c32)
// CHECK-COUNT-5: gpu.shuffle xor
// Where the bytes overlap, it stays a thread each output element.
// CHECK-LABEL: func.func @overlapping_arena_views
// CHECK-NOT:   gpu.shuffle
// CHECK:       linalg.generic
func.func @disjoint_arena_views(%arena: memref<12832xi8>) {
  %c0 = arith.constant 0 : index
  %c12800 = arith.constant 12800 : index
  %x = memref.view %arena[%c0][] : memref<12832xi8> to memref<8x400xf32>
  %y = memref.view %arena[%c12800][] : memref<12832xi8> to memref<8x1xf32>
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x400xf32>) outs(%y : memref<8x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %acc, %in : f32
    linalg.yield %v : f32
  }
  return
}
func.func @overlapping_arena_views(%arena: memref<12832xi8>) {
  %c0 = arith.constant 0 : index
  %c12768 = arith.constant 12768 : index
  %x = memref.view %arena[%c0][] : memref<12832xi8> to memref<8x400xf32>
  %y = memref.view %arena[%c12768][] : memref<12832xi8> to memref<8x1xf32>
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x400xf32>) outs(%y : memref<8x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %acc, %in : f32
    linalg.yield %v : f32
  }
  return
}
