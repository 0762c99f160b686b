// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-parallel-dims-first))' | FileCheck %s

// A softmax's max over axis 1 of [N, 4, 5]: the parallel dims first, so
// the parallel loop covers N x 5 threads, the reduction inside each.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d1)>
// CHECK-LABEL: func.func @softmax_max
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
func.func @softmax_max(%a: memref<?x4x5xf32>, %m: memref<?x1x5xf32>) {
  linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a : memref<?x4x5xf32>) outs(%m : memref<?x1x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// linalg.index follows its dim to the new position.
// CHECK-LABEL: func.func @indexed
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: linalg.index 1 : index
// CHECK: linalg.index 0 : index
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m3 = affine_map<(d0, d1) -> (d1)>
func.func @indexed(%a: memref<3x4xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [#m2, #m3], iterator_types = ["reduction", "parallel"]} ins(%a : memref<3x4xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %j : index
    %f = arith.index_cast %k : index to i32
    %g = arith.sitofp %f : i32 to f32
    %x = arith.addf %in, %g : f32
    %y = arith.addf %out, %x : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Already parallel-first, or all reductions: unchanged.
// CHECK-LABEL: func.func @unchanged
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["reduction"]
#r2 = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (d0)>
#s1 = affine_map<(d0) -> (d0)>
#s0 = affine_map<(d0) -> ()>
func.func @unchanged(%a: memref<3x4xf32>, %r: memref<3xf32>, %v: memref<4xf32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [#r2, #r1], iterator_types = ["parallel", "reduction"]} ins(%a : memref<3x4xf32>) outs(%r : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.addf %out, %in : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [#s1, #s0], iterator_types = ["reduction"]} ins(%v : memref<4xf32>) outs(%t : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.addf %out, %in : f32
    linalg.yield %y : f32
  }
  return
}
