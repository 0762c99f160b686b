// RUN: kiln-opt %s -split-input-file -kiln-expand-composites | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-expand-composites -kiln-fold-pads -canonicalize | FileCheck %s --check-prefix=FOLDED

// Checks a stride-2 transposed convolution (groups 1, no dilation) by
// output phase: the weights [C = 2, O = 4, 3, 3] padded to 4 x 4 (J = 2
// taps of stride 2), split [C, O, J, s, J, s], the phases first, [s s O =
// 16, C, J, J], flipped; the input padded by J - 1 before and to Q = 4
// positions (ceil((pad 1 + 6) / 2)); one stride-1 convolution to 16
// channels; [N, s, s, O, Q, Q] interleaved to [N, O, Q s, Q s] and cropped
// by the pads.
// CHECK-LABEL: func @conv_transpose
// CHECK: %[[WP:.*]] = kiln.pad %arg1 {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>} : (tensor<2x4x3x3xf32>) -> tensor<2x4x4x4xf32>
// CHECK: %[[WS:.*]] = kiln.reshape %[[WP]] {shape = array<i64: 2, 4, 2, 2, 2, 2>}
// CHECK: %[[WT:.*]] = kiln.transpose %[[WS]] {permutation = array<i64: 3, 5, 1, 0, 2, 4>} : (tensor<2x4x2x2x2x2xf32>) -> tensor<2x2x4x2x2x2xf32>
// CHECK: %[[WM:.*]] = kiln.reshape %[[WT]] {shape = array<i64: 16, 2, 2, 2>}
// CHECK: %[[W:.*]] = kiln.slice %[[WM]] {{.*}}steps = array<i64: 1, 1, -1, -1>{{.*}} -> tensor<16x2x2x2xf32>
// CHECK: %[[X:.*]] = kiln.pad %arg0 {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<?x2x3x3xf32>) -> tensor<?x2x5x5xf32>
// CHECK: %[[C:.*]] = kiln.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x2x5x5xf32>, tensor<16x2x2x2xf32>) -> tensor<?x16x4x4xf32>
// CHECK: %[[P:.*]] = kiln.reshape %[[C]] {shape = array<i64: 0, 2, 2, 4, 4, 4>}
// CHECK: %[[I:.*]] = kiln.transpose %[[P]] {permutation = array<i64: 0, 3, 4, 1, 5, 2>} : (tensor<?x2x2x4x4x4xf32>) -> tensor<?x4x4x2x4x2xf32>
// CHECK: %[[J:.*]] = kiln.reshape %[[I]] {shape = array<i64: 0, 4, 8, 8>}
// CHECK: %[[Y:.*]] = kiln.slice %[[J]] {ends = array<i64: 9223372036854775807, 9223372036854775807, 7, 7>, starts = array<i64: 0, 0, 1, 1>, steps = array<i64: 1, 1, 1, 1>} : (tensor<?x4x8x8xf32>) -> tensor<?x4x6x6xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: kiln.conv_transpose
// After kiln-fold-pads, the input's pad is the convolution's.
// FOLDED-LABEL: func @conv_transpose
// FOLDED: kiln.conv {{.*}}pads = array<i64: 1, 1, 1, 1>{{.*}} -> tensor<?x16x4x4xf32>
func.func @conv_transpose(%x: tensor<?x2x3x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %y = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>,
                                   dilations = array<i64: 1, 1>,
                                   output_padding = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<?x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<?x4x6x6xf32>
  return %y : tensor<?x4x6x6xf32>
}

// -----

// Checks a stride-2 dilated transposed convolution: the input zero-stuffed
// (split, padded by stride - 1 after each element, merged, the last zeros
// cut), padded by span - pad (span = dilation * (K - 1) = 4; plus
// output_padding at the end), convolved at stride 1 with the weights
// regrouped [O, C, K...] and flipped spatially.
// CHECK-LABEL: func @conv_transpose_dilated
// CHECK: %[[SPLIT:.*]] = kiln.reshape %arg0 {shape = array<i64: 0, 0, 3, 1, 3, 1>} : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x1x3x1xf32>
// CHECK: %[[STUFF:.*]] = kiln.pad %[[SPLIT]] {{.*}}pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>{{.*}} -> tensor<?x2x3x2x3x2xf32>
// CHECK: %[[MERGED:.*]] = kiln.reshape %[[STUFF]] {shape = array<i64: 0, 0, 6, 6>} : (tensor<?x2x3x2x3x2xf32>) -> tensor<?x2x6x6xf32>
// CHECK: %[[CUT:.*]] = kiln.slice %[[MERGED]] {{.*}} -> tensor<?x2x5x5xf32>
// CHECK: %[[X:.*]] = kiln.pad %[[CUT]] {{.*}}pads = array<i64: 0, 0, 3, 3, 0, 0, 4, 4>{{.*}} -> tensor<?x2x12x12xf32>
// CHECK: %[[G:.*]] = kiln.reshape %arg1 {shape = array<i64: 1, 2, 4, 3, 3>}
// CHECK: %[[T:.*]] = kiln.transpose %[[G]] {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x4x3x3xf32>) -> tensor<1x4x2x3x3xf32>
// CHECK: %[[R:.*]] = kiln.reshape %[[T]] {shape = array<i64: 4, 2, 3, 3>}
// CHECK: %[[W:.*]] = kiln.slice %[[R]] {{.*}}steps = array<i64: 1, 1, -1, -1>{{.*}} -> tensor<4x2x3x3xf32>
// CHECK: %[[Y:.*]] = kiln.conv %[[X]], %[[W]] {dilations = array<i64: 2, 2>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x2x12x12xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x8x8xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: kiln.conv_transpose
// After kiln-fold-pads, the pad is the convolution's.
// FOLDED-LABEL: func @conv_transpose_dilated
// FOLDED: kiln.conv {{.*}}pads = array<i64: 3, 3, 4, 4>{{.*}} -> tensor<?x4x8x8xf32>
func.func @conv_transpose_dilated(%x: tensor<?x2x3x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<?x4x8x8xf32> {
  %y = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>,
                                   dilations = array<i64: 2, 2>,
                                   output_padding = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<?x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}

// -----

// Checks groups and dilation at stride 1: no zero-stuffing; weights
// [C = 4, O/g = 3, K] in 2 groups become [O = 6, C/g = 2, K], flipped.
// Pads larger than the span crop (a negative pad).
// CHECK-LABEL: func @conv_transpose_grouped
// CHECK-NOT: kiln.reshape %arg0
// CHECK: %[[X:.*]] = kiln.pad %arg0 {{.*}}pads = array<i64: 0, 0, 4, 0, 0, -1>{{.*}} -> tensor<1x4x8xf32>
// CHECK: kiln.reshape %arg1 {shape = array<i64: 2, 2, 3, 3>}
// CHECK: kiln.transpose {{.*}} -> tensor<2x3x2x3xf32>
// CHECK: %[[W:.*]] = kiln.slice {{.*}}steps = array<i64: 1, 1, -1>{{.*}} -> tensor<6x2x3xf32>
// CHECK: kiln.conv %[[X]], %[[W]] {dilations = array<i64: 2>, groups = 2 : i64{{.*}} -> tensor<1x6x4xf32>
func.func @conv_transpose_grouped(%x: tensor<1x4x5xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x6x4xf32> {
  %y = kiln.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 5>,
                                   dilations = array<i64: 2>, output_padding = array<i64: 0>,
                                   groups = 2 : i64}
      : (tensor<1x4x5xf32>, tensor<4x3x3xf32>) -> tensor<1x6x4xf32>
  return %y : tensor<1x6x4xf32>
}

// -----

// Checks that topk is left whole (kiln-convert-to-linalg lowers it to a
// scan of every row: topk-to-loops.mlir).
// CHECK-LABEL: func @topk
// CHECK-NEXT: kiln.topk %arg0 {axis = 1 : i64, k = 2 : i64}
func.func @topk(%x: tensor<?x5x3xf32>) -> (tensor<?x2x3xf32>, tensor<?x2x3xi64>) {
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<?x5x3xf32>) -> (tensor<?x2x3xf32>, tensor<?x2x3xi64>)
  return %v, %i : tensor<?x2x3xf32>, tensor<?x2x3xi64>
}
