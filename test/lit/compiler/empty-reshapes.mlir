// RUN: kiln-opt %s -split-input-file -kiln-empty-reshapes | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-empty-reshapes -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

// Checks that a collapse of a tensor with a static 0 dim next to a dynamic
// one becomes an empty tensor (bufferisation would otherwise give the
// collapsed memref a static 0 that memref.collapse_shape refuses), that
// another dynamic group keeps its size as the product of its dims, and
// that collapses with elements, or with static shapes, stay.
// CHECK-LABEL: func @empty
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0xi64>
// CHECK: %[[C:.*]] = tensor.cast %[[E]] : tensor<0xi64> to tensor<?xi64>
// CHECK: return %[[C]]
// BUF-LABEL: func @empty
// BUF-NOT: memref.collapse_shape
func.func @empty(%t: tensor<0x?xi64>) -> tensor<?xi64> {
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<0x?xi64> into tensor<?xi64>
  return %c : tensor<?xi64>
}

// -----

// CHECK-LABEL: func @two_groups
// BUF-LABEL: func @two_groups
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[D1:.*]] = tensor.dim %arg0, %[[C1]]
// CHECK-DAG: %[[D2:.*]] = tensor.dim %arg0, %[[C2]]
// CHECK: %[[N:.*]] = arith.muli %[[D1]], %[[D2]] : index
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<0x?xf32>
// CHECK: return %[[E]] : tensor<0x?xf32>
func.func @two_groups(%t: tensor<0x?x?xf32>) -> tensor<0x?xf32> {
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<0x?x?xf32> into tensor<0x?xf32>
  return %c : tensor<0x?xf32>
}

// -----

// CHECK-LABEL: func @kept
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<2x?xf32>
// CHECK: tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<0x3xf32>
func.func @kept(%t: tensor<2x?xf32>, %s: tensor<0x3xf32>) -> (tensor<?xf32>, tensor<0xf32>) {
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<2x?xf32> into tensor<?xf32>
  %d = tensor.collapse_shape %s [[0, 1]] : tensor<0x3xf32> into tensor<0xf32>
  return %c, %d : tensor<?xf32>, tensor<0xf32>
}
