// RUN: kiln-opt %s -split-input-file -kiln-fuse-elementwise -mlir-print-debuginfo | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-fuse-elementwise -mlir-print-local-scope | FileCheck %s --check-prefix=MAPS

// Checks that an elementwise producer with one user is fused into it and
// that the fused loop nest carries both ops' locations.
// CHECK-LABEL: func @add_relu
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: } -> tensor<16xf32> loc(#[[LOC:loc[0-9]+]])
// CHECK-DAG: #[[ADD:loc[0-9]+]] = loc("add")
// CHECK-DAG: #[[RELU:loc[0-9]+]] = loc("relu")
// CHECK-DAG: #[[LOC]] = loc(fused[#[[ADD]], #[[RELU]]])
#map = affine_map<(d0) -> (d0)>
func.func @add_relu(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<16xf32> loc("add")
  %z = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%s : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = arith.maximumf %x, %z : f32
    linalg.yield %0 : f32
  } -> tensor<16xf32> loc("relu")
  return %r : tensor<16xf32>
}

// -----

// Checks that a producer with two users is not fused (it would be
// computed twice).
// CHECK-LABEL: func @two_users
// CHECK: linalg.generic
// CHECK: linalg.generic
#map1 = affine_map<(d0) -> (d0)>
func.func @two_users(%a: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]}
      ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = math.exp %x : f32
    linalg.yield %0 : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]}
      ins(%s : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = math.sqrt %x : f32
    linalg.yield %0 : f32
  } -> tensor<16xf32>
  return %s, %r : tensor<16xf32>, tensor<16xf32>
}

// -----

// Checks that a producer is not fused into a user that reads each of its
// elements more than once: a scaled matmul operand (read once per column
// of the result) stays its own loop nest, so the division runs M * K times,
// not M * N * K.
// CHECK-LABEL: func @scaled_matmul_operand
// CHECK: linalg.generic
// CHECK: arith.divf
// CHECK: linalg.yield
// CHECK: linalg.generic
// CHECK-NOT: arith.divf
// CHECK: arith.mulf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @scaled_matmul_operand(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %s: f32) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = arith.divf %x, %s : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<8x4xf32>) -> tensor<8x4xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}

// -----

// Checks that an attention's head split, a reshape of a strided slice
// through its refinement, folds into the transpose after it: the size of the
// transpose's result, read from the collapse, becomes the product of the
// collapse's source dims (so the collapse has one user), and the transpose
// runs over four dims reading the expanded slice in place, its result
// collapsed instead (a buffer of its own, contiguous: a view). Before, the
// collapse of the slice was copied into a buffer first.
// CHECK-LABEL: func @head_split
// CHECK: %[[S:.*]] = tensor.extract_slice %arg0[0, 0, 768]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1], [2, 3]]
// CHECK-NOT: tensor.collapse_shape %[[E]]
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<128x?x12x64xf32>) outs(%{{.*}} : tensor<?x12x128x64xf32>) permutation = [1, 2, 0, 3]
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2], [3]] : tensor<?x12x128x64xf32> into tensor<?x128x64xf32>
// CHECK: return %[[C]]
func.func @head_split(%qkv: tensor<128x?x2304xf32>, %b: index) -> tensor<?x128x64xf32> {
  %s = tensor.extract_slice %qkv[0, 0, 768] [128, %b, 768] [1, 1, 1] : tensor<128x?x2304xf32> to tensor<128x?x768xf32>
  %e = tensor.expand_shape %s [[0], [1], [2, 3]] output_shape [128, %b, 12, 64] : tensor<128x?x768xf32> into tensor<128x?x12x64xf32>
  %c = tensor.collapse_shape %e [[0], [1, 2], [3]] : tensor<128x?x12x64xf32> into tensor<128x?x64xf32>
  %c1 = arith.constant 1 : index
  %n = tensor.dim %c, %c1 : tensor<128x?x64xf32>
  %o = tensor.empty(%n) : tensor<?x128x64xf32>
  %t = linalg.transpose ins(%c : tensor<128x?x64xf32>) outs(%o : tensor<?x128x64xf32>) permutation = [1, 0, 2]
  return %t : tensor<?x128x64xf32>
}

// -----

// Checks that a collapse of several dynamic dims does not fold into the
// elementwise op after it by expansion (its output would be expanded into a
// group of three dynamic dims, which the memref lowering cannot give
// strides: ReduceLogSum's expanded form crashed in codegen so), though its
// size, asked of the collapse, no longer keeps it from folding.
// CHECK-LABEL: func @dynamic_group
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<?xf32>)
// CHECK-NOT: tensor.expand_shape
func.func @dynamic_group(%x: tensor<?x?x?xf32>) -> tensor<?xf32> {
  %c = tensor.collapse_shape %x [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %c, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%c : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.log %v : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %l : tensor<?xf32>
}

// -----

// Checks that a transpose keeping the last dim (an attention's Q moved to
// [B, S, D]) read only by an elementwise op (its scale) is fused into it:
// one loop nest reading the input through the permutation, no transpose.
// CHECK-LABEL: func @row_transpose_scale
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<5x6x4xf32>)
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// MAPS-LABEL: func @row_transpose_scale
// MAPS: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @row_transpose_scale(%q: tensor<5x6x4xf32>) -> tensor<6x5x4xf32> {
  %o = tensor.empty() : tensor<6x5x4xf32>
  %t = linalg.transpose ins(%q : tensor<5x6x4xf32>) outs(%o : tensor<6x5x4xf32>) permutation = [1, 0, 2]
  %e = tensor.empty() : tensor<6x5x4xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : tensor<6x5x4xf32>) outs(%e : tensor<6x5x4xf32>) {
  ^bb0(%v: f32, %x: f32):
    %c = arith.constant 0.125 : f32
    %r = arith.mulf %v, %c : f32
    linalg.yield %r : f32
  } -> tensor<6x5x4xf32>
  return %s : tensor<6x5x4xf32>
}

// -----

// Checks that a transpose moving the last dim stays a transpose (its
// lowering reads rows), as does one whose result is returned too.
// CHECK-LABEL: func @column_transpose_scale
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1]
// CHECK: linalg.generic
// CHECK-LABEL: func @shared_transpose
// CHECK: %[[T:.*]] = linalg.transpose {{.*}} permutation = [1, 0, 2]
// CHECK: linalg.generic {{.*}} ins(%[[T]]
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @column_transpose_scale(%q: tensor<5x6x4xf32>) -> tensor<5x4x6xf32> {
  %o = tensor.empty() : tensor<5x4x6xf32>
  %t = linalg.transpose ins(%q : tensor<5x6x4xf32>) outs(%o : tensor<5x4x6xf32>) permutation = [0, 2, 1]
  %e = tensor.empty() : tensor<5x4x6xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : tensor<5x4x6xf32>) outs(%e : tensor<5x4x6xf32>) {
  ^bb0(%v: f32, %x: f32):
    %c = arith.constant 0.125 : f32
    %r = arith.mulf %v, %c : f32
    linalg.yield %r : f32
  } -> tensor<5x4x6xf32>
  return %s : tensor<5x4x6xf32>
}
func.func @shared_transpose(%q: tensor<5x6x4xf32>) -> (tensor<6x5x4xf32>, tensor<6x5x4xf32>) {
  %o = tensor.empty() : tensor<6x5x4xf32>
  %t = linalg.transpose ins(%q : tensor<5x6x4xf32>) outs(%o : tensor<6x5x4xf32>) permutation = [1, 0, 2]
  %e = tensor.empty() : tensor<6x5x4xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : tensor<6x5x4xf32>) outs(%e : tensor<6x5x4xf32>) {
  ^bb0(%v: f32, %x: f32):
    %c = arith.constant 0.125 : f32
    %r = arith.mulf %v, %c : f32
    linalg.yield %r : f32
  } -> tensor<6x5x4xf32>
  return %t, %s : tensor<6x5x4xf32>, tensor<6x5x4xf32>
}
