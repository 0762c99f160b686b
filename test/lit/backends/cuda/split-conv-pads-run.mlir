// Asymmetric convolution pads split into an explicit pad of the input and
// the smaller pad on both sides (kiln-cuda-split-conv-pads): lowered to
// LLVM and run, the same numbers as the asymmetric convolution, PyTorch's
// F.conv2d(F.pad(x, (left, right, top, bottom)), w) for the same inputs.
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | FileCheck %s --check-prefix=NUM
// RUN: kiln-opt %s --kiln-cuda-split-conv-pads --kiln-lower-to-llvm | %mlir-runner | FileCheck %s --check-prefix=NUM
// RUN: kiln-opt %s --kiln-cuda-split-conv-pads | FileCheck %s

// Pads [top 1, left 0, bottom 0, right 1]: the input padded low [0, 0, 1, 0]
// and high [0, 0, 0, 1], the convolution unpadded.
// CHECK-LABEL: func.func @main
// CHECK:       %[[P:.*]] = kiln.pad %{{.*}} {pads = array<i64: 0, 0, 1, 0, 0, 0, 0, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x5x5xf32>
// CHECK:       kiln.conv %[[P]], %{{.*}} {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 1>} : (tensor<1x2x5x5xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x4xf32>
// Pads [2, 1, 1, 1]: low [0, 0, 1, 0], high 0, the convolution's pads 1.
// CHECK:       %[[P2:.*]] = kiln.pad %{{.*}} {pads = array<i64: 0, 0, 1, 0, 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x5x4xf32>
// CHECK:       kiln.conv %[[P2]], %{{.*}} pads = array<i64: 1, 1, 1, 1>
// NUM:         {{\[\[\[\[}}-2.25, -2.75, -4.25, -1],
// NUM-NEXT:    [-5.5, -4.5, -5.5, 3]],
// NUM-NEXT:    {{\[\[}}-1, 5, -1, 4],
// NUM-NEXT:    [2.5, 31, 3.5, 16]]]]
// NUM:         {{\[\[\[\[}}0,   0,   0,   0,   0],
// NUM-NEXT:    [-0.75, -2.25, -2.75, -4.25, -1],
// NUM-NEXT:    [-3.5, -5.5, -4.5, -5.5, 1],
// NUM-NEXT:    [-5.5, -5.5, -4.5, -5.5, 3],
// NUM-NEXT:    [-7.5, -5.5, -4.5, -5.5, 5],
// NUM-NEXT:    [3.25, 12.75, 14.25, 14.75, 12]],
// NUM-NEXT:    {{\[\[}}0,   0,   0,   0,   0],
// NUM-NEXT:    [1, -1, 5, -1, 4],
// NUM-NEXT:    [6, 0.5, 17, 1.5, 10],
// NUM-NEXT:    [14, 2.5, 31, 3.5, 16],
// NUM-NEXT:    [22, 4.5, 45, 5.5, 22],
// NUM-NEXT:    [13, 7.5, 22, 8.5, 8]]]]
func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = kiln.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]], [[0.5, -1.0, 1.5, -2.0], [2.5, -3.0, 3.5, -4.0], [4.5, -5.0, 5.5, -6.0], [6.5, -7.0, 7.5, -8.0]]]]> : tensor<1x2x4x4xf32>
  %w = kiln.constant dense<[[[[1.0, 0.0], [0.0, -1.0]], [[0.5, 0.5], [0.5, 0.5]]], [[[0.0, 1.0], [1.0, 0.0]], [[-1.0, 0.0], [0.0, 2.0]]]]> : tensor<2x2x2x2xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x4xf32>
  %uc = tensor.cast %c : tensor<1x2x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%uc) : (tensor<*xf32>) -> ()
  %c2 = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 2, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x6x5xf32>
  %uc2 = tensor.cast %c2 : tensor<1x2x6x5xf32> to tensor<*xf32>
  call @printMemrefF32(%uc2) : (tensor<*xf32>) -> ()
  return
}

