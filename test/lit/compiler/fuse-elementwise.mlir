// RUN: kiln-opt %s -split-input-file -kiln-fuse-elementwise -mlir-print-debuginfo | FileCheck %s

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
