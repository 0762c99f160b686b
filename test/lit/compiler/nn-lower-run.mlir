// Checks convolution (asymmetric pads, strides; grouped and dilated), max
// pooling in ceil mode, average pooling with and without counting the
// padding, broadcast batched matmul and softmax once lowered to LLVM and
// run; the expected numbers are PyTorch's (torch.nn.functional) for the
// same inputs.
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | FileCheck %s
// The same loop nests mapped onto blocks and threads as the CUDA backend maps
// them (kiln-gpu-map-loops, 4 threads a block), run on the CPU: the same numbers.
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped | %mlir-runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = kiln.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]], [[0.5, -1.0, 1.5, -2.0], [2.5, -3.0, 3.5, -4.0], [4.5, -5.0, 5.5, -6.0], [6.5, -7.0, 7.5, -8.0]]]]> : tensor<1x2x4x4xf32>
  %w = kiln.constant dense<[[[[1.0, 0.0], [0.0, -1.0]], [[0.5, 0.5], [0.5, 0.5]]], [[[0.0, 1.0], [1.0, 0.0]], [[-1.0, 0.0], [0.0, 2.0]]]]> : tensor<2x2x2x2xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x4xf32>
  %uc = tensor.cast %c : tensor<1x2x2x4xf32> to tensor<*xf32>
  // conv: torch F.conv2d(F.pad(x, (0, 1, 1, 0)), w, stride=(2, 1))
  // CHECK: {{\[\[\[\[}}-2.25, -2.75, -4.25, -1],
  // CHECK-NEXT: [-5.5, -4.5, -5.5, 3]],
  // CHECK-NEXT: {{\[\[}}-1, 5, -1, 4],
  // CHECK-NEXT: [2.5, 31, 3.5, 16]]]]
  call @printMemrefF32(%uc) : (tensor<*xf32>) -> ()
  %wg = kiln.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[-1.0, 0.0], [0.0, 1.0]]]]> : tensor<2x1x2x2xf32>
  %dw = kiln.conv %x, %wg {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 1>, groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x2x3xf32>
  %udw = tensor.cast %dw : tensor<1x2x2x3xf32> to tensor<*xf32>
  // CHECK: {{\[\[\[\[}}72, 82, 92],
  // CHECK-NEXT: [112, 122, 132]],
  // CHECK-NEXT: {{\[\[}}-5.5, 6.5, -7.5],
  // CHECK-NEXT: [-9.5, 10.5, -11.5]]]]
  call @printMemrefF32(%udw) : (tensor<*xf32>) -> ()
  %mp = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  %ump = tensor.cast %mp : tensor<1x2x3x3xf32> to tensor<*xf32>
  // CHECK: {{\[\[\[\[}}6, 8, 8],
  // CHECK-NEXT: [14, 16, 16],
  // CHECK-NEXT: [14, 16, 16]],
  // CHECK-NEXT: {{\[\[}}2.5, 3.5, -2],
  // CHECK-NEXT: [6.5, 7.5, -4],
  // CHECK-NEXT: [6.5, 7.5, -8]]]]
  call @printMemrefF32(%ump) : (tensor<*xf32>) -> ()
  %ap = kiln.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %uap = tensor.cast %ap : tensor<1x2x2x2xf32> to tensor<*xf32>
  // CHECK: {{\[\[\[\[}}3.5, 5],
  // CHECK-NEXT: [9.5, 11]],
  // CHECK-NEXT: {{\[\[}}-0.25, -0.833333],
  // CHECK-NEXT: [-0.25, -1.83333]]]]
  call @printMemrefF32(%uap) : (tensor<*xf32>) -> ()
  %api = kiln.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %uapi = tensor.cast %api : tensor<1x2x2x2xf32> to tensor<*xf32>
  // CHECK: {{\[\[\[\[}}1.55556, 3.33333],
  // CHECK-NEXT: [6.33333, 11]],
  // CHECK-NEXT: {{\[\[}}-0.111111, -0.555556],
  // CHECK-NEXT: [-0.166667, -1.83333]]]]
  call @printMemrefF32(%uapi) : (tensor<*xf32>) -> ()
  %a = kiln.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]> : tensor<1x3x2xf32>
  %b = kiln.constant dense<[[[1.0, 0.0, -1.0], [2.0, 1.0, 0.5]], [[0.0, 1.0, 1.0], [1.0, 0.0, 2.0]]]> : tensor<2x2x3xf32>
  %mm = kiln.matmul %a, %b : (tensor<1x3x2xf32>, tensor<2x2x3xf32>) -> tensor<2x3x3xf32>
  %umm = tensor.cast %mm : tensor<2x3x3xf32> to tensor<*xf32>
  // CHECK: {{\[\[\[}}5, 2, 0],
  // CHECK-NEXT: [11, 4, -1],
  // CHECK-NEXT: [17, 6, -2]],
  // CHECK-NEXT: {{\[\[}}2, 1, 5],
  // CHECK-NEXT: [4, 3, 11],
  // CHECK-NEXT: [6, 5, 17]]]
  call @printMemrefF32(%umm) : (tensor<*xf32>) -> ()
  %s = kiln.softmax %a {axis = 2 : i64} : (tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %us = tensor.cast %s : tensor<1x3x2xf32> to tensor<*xf32>
  // CHECK: {{\[\[\[}}0.268941, 0.731059],
  // CHECK-NEXT: [0.268941, 0.731059],
  // CHECK-NEXT: [0.268941, 0.731059]]]
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  return
}
