// RUN: kiln-opt %s -split-input-file -kiln-fold-batch-norm | FileCheck %s

// Checks that the batch norm becomes the convolution's weights times
// s = scale / sqrt(var + eps) = [1, 2] (W' = [1, 4]) and a per-channel bias
// (0 - mean) * s + bias = [-0.5, 0] shaped [C, 1, 1].
// CHECK-LABEL: func @no_bias
// CHECK-DAG: %[[W:.*]] = kiln.constant dense_resource<bn_folded_weight{{.*}}> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.*]] = kiln.constant dense<{{\[\[\[}}-5.000000e-01]], {{\[\[}}0.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK: %[[Y:.*]] = kiln.conv %arg0, %[[W]]
// CHECK: %[[Z:.*]] = kiln.add %[[Y]], %[[B]]
// CHECK-NOT: kiln.batch_norm
// CHECK: return %[[Z]]
// CHECK: bn_folded_weight{{.*}}: "0x080000000000803F00008040"
func.func @no_bias(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %s = kiln.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = kiln.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %m = kiln.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %v = kiln.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %y = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = kiln.batch_norm %y, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// Checks that the convolution's own bias [1, 3] (added as [1, C, 1, 1]) is
// folded too: (b - mean) * s + bias = [0.5, 6].
// CHECK-LABEL: func @with_bias
// CHECK: %[[B:.*]] = kiln.constant dense<{{\[\[\[}}5.000000e-01]], {{\[\[}}6.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK: kiln.conv
// CHECK: kiln.add %{{.*}}, %[[B]]
// CHECK-NOT: kiln.batch_norm
func.func @with_bias(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %cb = kiln.constant dense<[[[[1.0]], [[3.0]]]]> : tensor<1x2x1x1xf32>
  %s = kiln.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = kiln.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %m = kiln.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %v = kiln.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %y = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %yb = kiln.add %y, %cb : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = kiln.batch_norm %yb, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// Checks that a convolution with another user is left alone: folding would
// change what that user reads. The batch norm becomes its channel affine
// map instead (s = 2 / sqrt(2), t = 2 - 2 s; s = 1, t = 0).
// CHECK-LABEL: func @conv_used_twice
// CHECK-DAG: %[[W:.*]] = kiln.constant dense<{{.*}}> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[S:.*]] = kiln.constant dense<{{\[\[\[\[}}1.41421354]], {{\[\[}}1.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-DAG: %[[T:.*]] = kiln.constant dense<{{\[\[\[\[}}-0.828427{{[0-9]*}}]], {{\[\[}}0.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK: %[[Y:.*]] = kiln.conv %arg0, %[[W]]
// CHECK: %[[M:.*]] = kiln.mul %[[Y]], %[[S]]
// CHECK: %[[Z:.*]] = kiln.add %[[M]], %[[T]]
// CHECK-NOT: kiln.batch_norm
// CHECK: return %[[Y]], %[[Z]]
func.func @conv_used_twice(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = kiln.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %s = kiln.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %y = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = kiln.batch_norm %y, %s, %s, %s, %s {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Checks that statistics that are not constants (here arguments) are left
// to the runtime.
// CHECK-LABEL: func @statistics_not_constant
// CHECK: kiln.batch_norm
func.func @statistics_not_constant(%x: tensor<1x1x4x4xf32>, %m: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %s = kiln.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %y = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = kiln.batch_norm %y, %s, %s, %m, %s {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// Checks that a batch norm after something other than a convolution
// becomes x * s + t with s and t computed here, [1, C, 1, 1].
// CHECK-LABEL: func @after_relu
// CHECK-DAG: %[[S:.*]] = kiln.constant dense<{{\[\[\[\[}}1.41421354]], {{\[\[}}1.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-DAG: %[[T:.*]] = kiln.constant dense<{{\[\[\[\[}}-0.828427{{[0-9]*}}]], {{\[\[}}0.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK: %[[Y:.*]] = kiln.relu %arg0
// CHECK: %[[M:.*]] = kiln.mul %[[Y]], %[[S]]
// CHECK: %[[Z:.*]] = kiln.add %[[M]], %[[T]]
// CHECK-NOT: kiln.batch_norm
// CHECK: return %[[Z]]
func.func @after_relu(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %s = kiln.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %y = kiln.relu %x : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %z = kiln.batch_norm %y, %s, %s, %s, %s {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// Checks the channel affine map of a rank-2 input ([N, C], a batch norm
// after a linear layer): s = 6 / sqrt(8 + 1) = 2, t = 5 - 2 * 2 = 1; and
// that epsilon counts.
// CHECK-LABEL: func @rank_two
// CHECK-DAG: %[[S:.*]] = kiln.constant dense<2.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[T:.*]] = kiln.constant dense<1.000000e+00> : tensor<1x1xf32>
// CHECK: %[[M:.*]] = kiln.mul %arg0, %[[S]]
// CHECK: kiln.add %[[M]], %[[T]]
// CHECK-NOT: kiln.batch_norm
func.func @rank_two(%x: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %s = kiln.constant dense<[6.0]> : tensor<1xf32>
  %b = kiln.constant dense<[5.0]> : tensor<1xf32>
  %m = kiln.constant dense<[2.0]> : tensor<1xf32>
  %v = kiln.constant dense<[8.0]> : tensor<1xf32>
  %z = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0 : f32} : (tensor<4x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x1xf32>
  return %z : tensor<4x1xf32>
}
