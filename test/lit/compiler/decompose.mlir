// RUN: kiln-opt %s -split-input-file -kiln-decompose | FileCheck %s

// Checks that softmax subtracts the maximum, exponentiates and divides by
// the sum, all along the axis.
// CHECK-LABEL: func @softmax
// CHECK: %[[MAX:.*]] = kiln.reduce_max %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
// CHECK: %[[D:.*]] = kiln.sub %arg0, %[[MAX]]
// CHECK: %[[E:.*]] = kiln.exp %[[D]]
// CHECK: %[[S:.*]] = kiln.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = true}
// CHECK: kiln.div %[[E]], %[[S]]
// CHECK-NOT: kiln.softmax
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = kiln.softmax %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Checks that log_softmax is (x - max) - log(sum).
// CHECK-LABEL: func @log_softmax
// CHECK: %[[D:.*]] = kiln.sub %arg0
// CHECK: %[[L:.*]] = kiln.log
// CHECK: kiln.sub %[[D]], %[[L]]
func.func @log_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = kiln.log_softmax %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Checks that layer_norm normalises over the trailing dims from its axis.
// CHECK-LABEL: func @layer_norm
// CHECK: %[[MEAN:.*]] = kiln.reduce_mean %arg0 {axes = array<i64: 1, 2>, keepdims = true}
// CHECK: %[[C:.*]] = kiln.sub %arg0, %[[MEAN]]
// CHECK: kiln.reduce_mean {{.*}} {axes = array<i64: 1, 2>, keepdims = true}
// CHECK: kiln.rsqrt
// CHECK: kiln.mul {{.*}}%arg1
// CHECK: kiln.add {{.*}}%arg2
func.func @layer_norm(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// Checks that batch_norm folds its four vectors into one scale and shift
// broadcast along the channel dim.
// CHECK-LABEL: func @batch_norm
// CHECK: kiln.rsqrt
// CHECK: kiln.reshape {{.*}} {shape = array<i64: -1, 1, 1>} : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK: kiln.sub %arg0
// CHECK: kiln.mul
// CHECK: kiln.add
// CHECK-NOT: kiln.batch_norm
func.func @batch_norm(%x: tensor<1x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// stop_gradient is the identity once gradients are built: its value is its
// operand.
// CHECK-LABEL: func @stop_gradient
// CHECK-NOT: kiln.stop_gradient
// CHECK: %[[R:.*]] = kiln.relu %arg0
// CHECK: return %[[R]]
func.func @stop_gradient(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.stop_gradient %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.relu %0 : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
