// RUN: kiln-opt %s -split-input-file -kiln-decompose -kiln-convert-to-linalg | FileCheck %s

// Checks that a reduction kernel becomes one scf.forall over the outer dim:
// each iteration slices its row (a dynamic dim that may be 1 is read at 0),
// computes the softmax on 1x10 tensors and writes its row of the result.
// CHECK-LABEL: func @softmax_rows
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x10xf32>
// CHECK: %[[R:.*]] = scf.forall (%[[I:.*]]) in (%[[N]]) shared_outs(%[[O:.*]] = %[[INIT]]) -> (tensor<?x10xf32>)
// CHECK: %[[ONE:.*]] = arith.cmpi eq
// CHECK: %[[AT:.*]] = arith.select %[[ONE]], %{{.*}}, %[[I]]
// CHECK: %[[ROW:.*]] = tensor.extract_slice %arg0[%[[AT]], 0] [1, 10] [1, 1] : tensor<?x10xf32> to tensor<1x10xf32>
// CHECK: linalg.generic {{.*}} ins(%[[ROW]] : tensor<1x10xf32>) outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[Y]] into %[[O]][%[[I]], 0] [1, 10] [1, 1]
// CHECK: return %[[R]]
func.func @softmax_rows(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = kiln.kernel reduction(%x) {kiln.outer_dims = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32> {
  ^bb0(%a: tensor<?x10xf32>):
    %1 = kiln.softmax %a {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
    kiln.yield %1 : tensor<?x10xf32>
  }
  return %0 : tensor<?x10xf32>
}

// -----

// Checks rows over two outer dims, an input that broadcasts along one of
// them (static 1: read at 0) and one with inner dims only (read whole).
// CHECK-LABEL: func @layer_norm_rows
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) in (2, 3)
// CHECK-DAG: tensor.extract_slice %arg0[%[[I]], %[[J]], 0] [1, 1, 8] [1, 1, 1] : tensor<2x3x8xf32> to tensor<1x1x8xf32>
// CHECK-DAG: tensor.extract_slice %arg1[0, %[[J]], 0] [1, 1, 8] [1, 1, 1] : tensor<1x3x8xf32> to tensor<1x1x8xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg2 : tensor<1x1x8xf32>, tensor<8xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[I]], %[[J]], 0] [1, 1, 8] [1, 1, 1] : tensor<1x1x8xf32> into tensor<2x3x8xf32>
func.func @layer_norm_rows(%x: tensor<2x3x8xf32>, %r: tensor<1x3x8xf32>, %g: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %0 = kiln.kernel reduction(%x, %r, %g) {kiln.outer_dims = 2 : i64} : (tensor<2x3x8xf32>, tensor<1x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32> {
  ^bb0(%a: tensor<2x3x8xf32>, %b: tensor<1x3x8xf32>, %c: tensor<8xf32>):
    %s = kiln.add %a, %b : (tensor<2x3x8xf32>, tensor<1x3x8xf32>) -> tensor<2x3x8xf32>
    %n = kiln.layer_norm %s, %c, %c {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
    kiln.yield %n : tensor<2x3x8xf32>
  }
  return %0 : tensor<2x3x8xf32>
}
