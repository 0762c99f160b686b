// Asymmetric convolution pads become an explicit pad of the input by the
// difference and the smaller pad on both sides (kiln-cuda-split-conv-pads,
// which the CUDA backend's library claims run first), so that cuDNN's
// convolution API, which pads both sides alike, runs them.
// RUN: kiln-opt %s --kiln-cuda-split-conv-pads | FileCheck %s
// The numbers, with and without the split: split-conv-pads-run.mlir.

// A convolution rooting an epilogue kernel whose body also adds the
// unpadded input (a residual): the padded input takes the input's place
// among the kernel's operands (a library call takes them in order, the
// convolution's input first), the unpadded one follows for the residual.
// CHECK-LABEL: func.func @kernel_residual
// CHECK-SAME:  (%[[X:.*]]: tensor<?x2x4x4xf32>, %[[W:.*]]: tensor<2x2x2x2xf32>)
// CHECK:       %[[P:.*]] = kiln.pad %[[X]] {pads = array<i64: 0, 0, 1, 1, 0, 0, 0, 0>} : (tensor<?x2x4x4xf32>) -> tensor<?x2x5x5xf32>
// CHECK:       kiln.kernel epilogue(%[[P]], %[[X]], %[[W]])
// CHECK-NEXT:  ^bb0(%[[A0:.*]]: tensor<?x2x5x5xf32>, %[[A1:.*]]: tensor<?x2x4x4xf32>, %[[A2:.*]]: tensor<2x2x2x2xf32>):
// CHECK-NEXT:    %[[C:.*]] = kiln.conv %[[A0]], %[[A2]] {{.*}}pads = array<i64: 0, 0, 0, 0>
// CHECK-NEXT:    kiln.add %[[C]], %[[A1]]
// A kernel whose convolution alone uses the input: the operand replaced.
// CHECK-LABEL: func.func @kernel_bias
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<2x2x2x2xf32>, %[[B:.*]]: tensor<2x1x1xf32>)
// CHECK:       %[[P:.*]] = kiln.pad %[[X]] {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>}
// CHECK:       kiln.kernel epilogue(%[[P]], %[[W]], %[[B]])
// CHECK-NEXT:  ^bb0(%[[A0:.*]]: tensor<1x2x5x5xf32>, %[[A1:.*]]: tensor<2x2x2x2xf32>, %[[A2:.*]]: tensor<2x1x1xf32>):
// CHECK-NEXT:    kiln.conv %[[A0]], %[[A1]]
func.func @kernel_residual(%x: tensor<?x2x4x4xf32>, %w: tensor<2x2x2x2xf32>) -> tensor<?x2x4x4xf32> {
  %k = kiln.kernel epilogue(%x, %w) : (tensor<?x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<?x2x4x4xf32> {
  ^bb0(%a: tensor<?x2x4x4xf32>, %b: tensor<2x2x2x2xf32>):
    %c = kiln.conv %a, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<?x2x4x4xf32>
    %s = kiln.add %c, %a : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32>
    kiln.yield %s : tensor<?x2x4x4xf32>
  }
  return %k : tensor<?x2x4x4xf32>
}

func.func @kernel_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x2x2xf32>, %b: tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %k = kiln.kernel epilogue(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%a: tensor<1x2x4x4xf32>, %c: tensor<2x2x2x2xf32>, %d: tensor<2x1x1xf32>):
    %v = kiln.conv %a, %c {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x4x4xf32>
    %s = kiln.add %v, %d : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
    kiln.yield %s : tensor<1x2x4x4xf32>
  }
  return %k : tensor<1x2x4x4xf32>
}

// Left alone: symmetric pads, a dynamic spatial dim, f64 (cuDNN runs none
// of the last two either way).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   kiln.pad
// CHECK:       return
func.func @left_alone(%x: tensor<1x2x4x4xf32>, %y: tensor<1x2x?x4xf32>, %z: tensor<1x2x4x4xf64>,
                      %w: tensor<2x2x2x2xf32>, %w64: tensor<2x2x2x2xf64>)
    -> (tensor<1x2x5x5xf32>, tensor<1x2x?x4xf32>, tensor<1x2x4x4xf64>) {
  %a = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x5x5xf32>
  %b = kiln.conv %y, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x?x4xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x?x4xf32>
  %c = kiln.conv %z, %w64 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x4x4xf64>, tensor<2x2x2x2xf64>) -> tensor<1x2x4x4xf64>
  return %a, %b, %c : tensor<1x2x5x5xf32>, tensor<1x2x?x4xf32>, tensor<1x2x4x4xf64>
}
