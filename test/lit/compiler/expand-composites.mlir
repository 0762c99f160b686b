// RUN: kiln-opt %s -split-input-file -kiln-expand-composites | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-expand-composites -kiln-fold-pads -canonicalize | FileCheck %s --check-prefix=FOLDED

// Checks a stride-2 transposed convolution: the input zero-stuffed (split,
// padded by stride - 1 after each element, merged, the last zeros cut),
// padded by span - pad (span = dilation * (K - 1) = 2; plus output_padding
// at the end), convolved at stride 1 with the weights regrouped [O, C, K...]
// and flipped spatially.
// CHECK-LABEL: func @conv_transpose
// CHECK: %[[SPLIT:.*]] = kiln.reshape %arg0 {shape = array<i64: 0, 0, 3, 1, 3, 1>} : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x1x3x1xf32>
// CHECK: %[[STUFF:.*]] = kiln.pad %[[SPLIT]] {{.*}}pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>{{.*}} -> tensor<?x2x3x2x3x2xf32>
// CHECK: %[[MERGED:.*]] = kiln.reshape %[[STUFF]] {shape = array<i64: 0, 0, 6, 6>} : (tensor<?x2x3x2x3x2xf32>) -> tensor<?x2x6x6xf32>
// CHECK: %[[CUT:.*]] = kiln.slice %[[MERGED]] {{.*}} -> tensor<?x2x5x5xf32>
// CHECK: %[[X:.*]] = kiln.pad %[[CUT]] {{.*}}pads = array<i64: 0, 0, 1, 1, 0, 0, 2, 2>{{.*}} -> tensor<?x2x8x8xf32>
// CHECK: %[[G:.*]] = kiln.reshape %arg1 {shape = array<i64: 1, 2, 4, 3, 3>}
// CHECK: %[[T:.*]] = kiln.transpose %[[G]] {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x4x3x3xf32>) -> tensor<1x4x2x3x3xf32>
// CHECK: %[[R:.*]] = kiln.reshape %[[T]] {shape = array<i64: 4, 2, 3, 3>}
// CHECK: %[[W:.*]] = kiln.slice %[[R]] {{.*}}steps = array<i64: 1, 1, -1, -1>{{.*}} -> tensor<4x2x3x3xf32>
// CHECK: %[[Y:.*]] = kiln.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x6x6xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: kiln.conv_transpose
// After kiln-fold-pads, the pad is the convolution's.
// FOLDED-LABEL: func @conv_transpose
// FOLDED: kiln.conv {{.*}}pads = array<i64: 1, 1, 2, 2>{{.*}} -> tensor<?x4x6x6xf32>
func.func @conv_transpose(%x: tensor<?x2x3x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %y = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>,
                                   dilations = array<i64: 1, 1>,
                                   output_padding = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<?x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<?x4x6x6xf32>
  return %y : tensor<?x4x6x6xf32>
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

// Checks topk by ranks along axis 1 of three dims: the axis moved last,
// entry j beats entry i on a greater value or an equal one at a lower
// index, the ranks summed, slot r takes the entry of rank r, values and
// indices moved back.
// CHECK-LABEL: func @topk
// CHECK: %[[V:.*]] = kiln.transpose %arg0 {permutation = array<i64: 0, 2, 1>} : (tensor<?x5x3xf32>) -> tensor<?x3x5xf32>
// CHECK: %[[XI:.*]] = kiln.reshape %[[V]] {shape = array<i64: 0, 0, 5, 1>}
// CHECK: %[[XJ:.*]] = kiln.reshape %[[V]] {shape = array<i64: 0, 0, 1, 5>}
// CHECK: %[[BETTER:.*]] = kiln.compare gt, %[[XJ]], %[[XI]] {{.*}} -> tensor<?x3x5x5xi1>
// CHECK: %[[EQ:.*]] = kiln.compare eq, %[[XJ]], %[[XI]]
// CHECK: %[[LOWER:.*]] = kiln.constant dense<{{\[}}[false, false, false, false, false], [true, false, false, false, false]
// CHECK: %[[TIE:.*]] = kiln.and %[[EQ]], %[[LOWER]]
// CHECK: %[[BEATS:.*]] = kiln.or %[[BETTER]], %[[TIE]]
// CHECK: %[[COUNTS:.*]] = kiln.cast %[[BEATS]] : tensor<?x3x5x5xi1> to tensor<?x3x5x5xi64>
// CHECK: %[[RANKS:.*]] = kiln.reduce_sum %[[COUNTS]] {axes = array<i64: 3>} : (tensor<?x3x5x5xi64>) -> tensor<?x3x5xi64>
// CHECK: %[[SLOTS:.*]] = kiln.constant dense<{{\[}}[0, 1]]> : tensor<1x2xi64>
// CHECK: %[[COL:.*]] = kiln.reshape %[[RANKS]] {shape = array<i64: 0, 0, 5, 1>}
// CHECK: %[[PLACED:.*]] = kiln.compare eq, %[[COL]], %[[SLOTS]] {{.*}} -> tensor<?x3x5x2xi1>
// CHECK: kiln.select %[[PLACED]], %[[XI]]
// CHECK: kiln.reduce_sum {{.*}}axes = array<i64: 2>{{.*}} -> tensor<?x3x2xf32>
// CHECK: %[[VALUES:.*]] = kiln.transpose {{.*}}permutation = array<i64: 0, 2, 1>{{.*}} -> tensor<?x2x3xf32>
// CHECK: kiln.select %[[PLACED]], {{.*}} -> tensor<?x3x5x2xi64>
// CHECK: %[[INDICES:.*]] = kiln.transpose {{.*}} -> tensor<?x2x3xi64>
// CHECK: return %[[VALUES]], %[[INDICES]]
func.func @topk(%x: tensor<?x5x3xf32>) -> (tensor<?x2x3xf32>, tensor<?x2x3xi64>) {
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<?x5x3xf32>) -> (tensor<?x2x3xf32>, tensor<?x2x3xi64>)
  return %v, %i : tensor<?x2x3xf32>, tensor<?x2x3xi64>
}

// -----

// Checks the smallest entries, and a count read when the model runs: the
// slots an iota of the count, or of -1 (a shape error when the model runs)
// where the count passes the axis' length.
// CHECK-LABEL: func @topk_count
// CHECK: kiln.compare lt
// CHECK: %[[FITS:.*]] = kiln.compare le, %arg1, %{{.*}} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi1>
// CHECK: %[[LENGTH:.*]] = kiln.select %[[FITS]], %arg1, %{{.*}} -> tensor<1xi64>
// CHECK: %[[IOTA:.*]] = kiln.iota %[[LENGTH]] {axis = 0 : i64} : (tensor<1xi64>) -> tensor<?xi64>
// CHECK: kiln.reshape %[[IOTA]] {shape = array<i64: 1, -1>} : (tensor<?xi64>) -> tensor<1x?xi64>
// CHECK: -> tensor<4x?xi32>
// CHECK: -> tensor<4x?xi64>
// CHECK-NOT: kiln.topk
func.func @topk_count(%x: tensor<4x6xi32>, %k: tensor<1xi64>) -> (tensor<4x?xi32>, tensor<4x?xi64>) {
  %v, %i = kiln.topk %x, %k {axis = 1 : i64, largest = false} : (tensor<4x6xi32>, tensor<1xi64>) -> (tensor<4x?xi32>, tensor<4x?xi64>)
  return %v, %i : tensor<4x?xi32>, tensor<4x?xi64>
}

// -----

// Checks a k of at most n / 8 in k passes: the best value among the
// entries not yet taken, the lowest index holding it (or the lowest NaN
// when the best is NaN), that index taken; the passes' results joined.
// CHECK-LABEL: func @topk_select
// CHECK: %[[V:.*]] = kiln.transpose %arg0 {permutation = array<i64: 1, 0>} : (tensor<16x?xf32>) -> tensor<?x16xf32>
// CHECK-DAG: %[[POS:.*]] = kiln.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
// CHECK-DAG: %[[BEYOND:.*]] = kiln.constant dense<16> : tensor<i64>
// CHECK-DAG: %[[WORST:.*]] = kiln.constant dense<0x7F800000> : tensor<f32>
// CHECK: %[[NAN:.*]] = kiln.compare ne, %[[V]], %[[V]]
// CHECK: %[[B0:.*]] = kiln.reduce_min %[[V]] {axes = array<i64: 1>, keepdims = true} : (tensor<?x16xf32>) -> tensor<?x1xf32>
// CHECK: %[[EQ0:.*]] = kiln.compare eq, %[[V]], %[[B0]]
// CHECK: %[[BNAN0:.*]] = kiln.compare ne, %[[B0]], %[[B0]]
// CHECK: %[[N0:.*]] = kiln.and %[[NAN]], %[[BNAN0]]
// CHECK: %[[HIT0:.*]] = kiln.or %[[EQ0]], %[[N0]]
// CHECK: %[[AT0:.*]] = kiln.select %[[HIT0]], %[[POS]], %[[BEYOND]]
// CHECK: %[[I0:.*]] = kiln.reduce_min %[[AT0]] {axes = array<i64: 1>, keepdims = true} : (tensor<?x16xi64>) -> tensor<?x1xi64>
// CHECK: %[[FREE:.*]] = kiln.compare ne, %[[POS]], %[[I0]]
// CHECK: %[[C1:.*]] = kiln.select %[[FREE]], %[[V]], %[[WORST]]
// CHECK: %[[B1:.*]] = kiln.reduce_min %[[C1]]
// CHECK: %[[HIT1:.*]] = kiln.and %{{.*}}, %[[FREE]]
// CHECK: %[[I1:.*]] = kiln.reduce_min
// CHECK: %[[VS:.*]] = kiln.concat %[[B0]], %[[B1]] {axis = 1 : i64} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x2xf32>
// CHECK: %[[IS:.*]] = kiln.concat %[[I0]], %[[I1]] {axis = 1 : i64}
// CHECK: %[[VALUES:.*]] = kiln.transpose %[[VS]] {permutation = array<i64: 1, 0>} : (tensor<?x2xf32>) -> tensor<2x?xf32>
// CHECK: %[[INDICES:.*]] = kiln.transpose %[[IS]]
// CHECK: return %[[VALUES]], %[[INDICES]]
func.func @topk_select(%x: tensor<16x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xi64>) {
  %v, %i = kiln.topk %x {axis = 0 : i64, k = 2 : i64, largest = false} : (tensor<16x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  return %v, %i : tensor<2x?xf32>, tensor<2x?xi64>
}

