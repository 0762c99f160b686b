// RUN: kiln-opt %s -split-input-file -kiln-decompose -kiln-convert-to-linalg | FileCheck %s

// Checks that a reduction kernel becomes one scf.forall over the outer dim:
// each iteration slices its row, computes the softmax on 1x10 tensors and
// writes its row of the result. The only input dynamic at dim 0 cannot
// broadcast there: its row is read at the loop's index (no run-time
// check; it was read at (size == 1 ? 0 : i)).
// CHECK-LABEL: func @softmax_rows
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x10xf32>
// CHECK: %[[R:.*]] = scf.forall (%[[I:.*]]) in (%[[N]]) shared_outs(%[[O:.*]] = %[[INIT]]) -> (tensor<?x10xf32>)
// CHECK-NOT: arith.select
// CHECK: %[[ROW:.*]] = tensor.extract_slice %arg0[%[[I]], 0] [1, 10] [1, 1] : tensor<?x10xf32> to tensor<1x10xf32>
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

// -----

// Checks that two inputs dynamic at an outer dim with sizes from different
// sources may each be 1 at run time: the loop runs over the larger size
// and each row is read at (size == 1 ? 0 : i).
// CHECK-LABEL: func @rows_of_two_sources
// CHECK-DAG: %[[DX:.*]] = tensor.dim %arg0, %c0
// CHECK-DAG: %[[DY:.*]] = tensor.dim %arg1, %c0
// CHECK: %[[N:.*]] = arith.maxui %[[DX]], %[[DY]]
// CHECK: scf.forall (%[[I:.*]]) in (%[[N]])
// CHECK: %[[AX:.*]] = arith.select %{{.*}}, %{{.*}}, %[[I]]
// CHECK: tensor.extract_slice %arg0[%[[AX]], 0]
// CHECK: %[[AY:.*]] = arith.select %{{.*}}, %{{.*}}, %[[I]]
// CHECK: tensor.extract_slice %arg1[%[[AY]], 0]
func.func @rows_of_two_sources(%x: tensor<?x10xf32>, %y: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = kiln.kernel reduction(%x, %y) {kiln.outer_dims = 1 : i64} : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32> {
  ^bb0(%a: tensor<?x10xf32>, %b: tensor<?x10xf32>):
    %s = kiln.add %a, %b : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
    %1 = kiln.softmax %s {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
    kiln.yield %1 : tensor<?x10xf32>
  }
  return %0 : tensor<?x10xf32>
}

// -----

// Checks that inputs dynamic at an outer dim with one size source (x and
// exp(x)) are read at the loop's index, that an input of static size 1
// there (a mask) is read at 0 and does not enter the loop's bound (a batch
// of 0 is 0 rows, not max(0, 1)), and that the loop's result has the same
// source: x * rows(x) reads both through indexing maps (it read the rows
// at (size == 1 ? 0 : i), and the loop ran max(dim, 1) times).
// CHECK-LABEL: func @rows_of_one_source
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK-NOT: arith.maxui
// CHECK: %[[R:.*]] = scf.forall (%[[I:.*]]) in (%[[N]])
// CHECK-NOT: arith.select
// CHECK-DAG: tensor.extract_slice %arg0[%[[I]], 0] [1, 10]
// CHECK-DAG: tensor.extract_slice %[[E]][%[[I]], 0] [1, 10]
// CHECK-DAG: tensor.extract_slice %arg1[0, 0] [1, 10]
// CHECK: scf.forall.in_parallel
// CHECK-NOT: arith.select
// CHECK: linalg.generic {{.*}} ins(%[[R]], %arg0 : tensor<?x10xf32>, tensor<?x10xf32>)
// CHECK-NOT: arith.select
// CHECK: return
func.func @rows_of_one_source(%x: tensor<?x10xf32>, %m: tensor<1x10xf32>) -> tensor<?x10xf32> {
  %e = kiln.exp %x : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %0 = kiln.kernel reduction(%x, %e, %m) {kiln.outer_dims = 1 : i64} : (tensor<?x10xf32>, tensor<?x10xf32>, tensor<1x10xf32>) -> tensor<?x10xf32> {
  ^bb0(%a: tensor<?x10xf32>, %b: tensor<?x10xf32>, %c: tensor<1x10xf32>):
    %s = kiln.add %a, %b : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
    %t = kiln.add %s, %c : (tensor<?x10xf32>, tensor<1x10xf32>) -> tensor<?x10xf32>
    %1 = kiln.softmax %t {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
    kiln.yield %1 : tensor<?x10xf32>
  }
  %2 = kiln.mul %0, %x : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
  return %2 : tensor<?x10xf32>
}
