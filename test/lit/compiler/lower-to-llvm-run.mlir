// Checks the numbers that kiln ops compute once lowered through linalg to
// LLVM and run (mlir-runner JIT); the expected values are worked out by
// hand and with numpy.
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | FileCheck %s
// The same loop nests mapped onto blocks and threads as the CUDA backend maps
// them (kiln-gpu-map-loops, 4 threads a block), run on the CPU: the same numbers.
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped | %mlir-runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI64(tensor<*xi64>)

func.func @show(%t: tensor<2x3xf32>) {
  %u = tensor.cast %t : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %a = kiln.constant dense<[[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]> : tensor<2x3xf32>
  %b = kiln.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>

  // CHECK: {{\[\[}}11, 18, 33],
  // CHECK-NEXT: [14, 25, 24]]
  %add = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  call @show(%add) : (tensor<2x3xf32>) -> ()

  // CHECK: {{\[\[}}1, 0, 3],
  // CHECK-NEXT: [4, 5, 0]]
  %relu = kiln.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  call @show(%relu) : (tensor<2x3xf32>) -> ()

  // gelu(1) = 0.841345, gelu(-2) = -0.0455003 (erf form)
  // CHECK: {{\[\[}}0.841345, -0.0455003, 2.99595],
  %gelu = kiln.gelu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  call @show(%gelu) : (tensor<2x3xf32>) -> ()

  // CHECK: [2, 3]
  %sum = kiln.reduce_sum %a {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %u_sum = tensor.cast %sum : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u_sum) : (tensor<*xf32>) -> ()

  // CHECK: [0.666667, 1]
  %mean = kiln.reduce_mean %a {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %u_mean = tensor.cast %mean : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u_mean) : (tensor<*xf32>) -> ()

  // CHECK: [2, 1]
  %am = kiln.argmax %a {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xi64>
  %u_am = tensor.cast %am : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%u_am) : (tensor<*xi64>) -> ()

  // Transpose then reshape back to 2x3: [1, 4, -2], [5, 3, -6]
  // CHECK: {{\[\[}}1, 4, -2],
  // CHECK-NEXT: [5, 3, -6]]
  %t = kiln.transpose %a {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = kiln.reshape %t {shape = array<i64: 2, 3>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  call @show(%r) : (tensor<2x3xf32>) -> ()

  // Gather rows 1 and -2 (= 0).
  // CHECK: {{\[\[}}4, 5, -6],
  // CHECK-NEXT: [1, -2, 3]]
  %idx = kiln.constant dense<[1, -2]> : tensor<2xi64>
  %g = kiln.gather %a, %idx {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  call @show(%g) : (tensor<2x3xf32>) -> ()

  // Reversed columns through a negative-step slice.
  // CHECK: {{\[\[}}3, -2, 1],
  // CHECK-NEXT: [-6, 5, 4]]
  %rev = kiln.slice %a {starts = array<i64: 0, -1>, ends = array<i64: 2, -9223372036854775807>, steps = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  call @show(%rev) : (tensor<2x3xf32>) -> ()

  // Select on a comparison, with NaN-free inputs.
  // CHECK: {{\[\[}}1, 20, 3],
  // CHECK-NEXT: [4, 5, 30]]
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %pos = kiln.compare gt, %a, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
  %sel = kiln.select %pos, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  call @show(%sel) : (tensor<2x3xf32>) -> ()

  // Concat along dim 1, then split it again and show the second half.
  // CHECK: {{\[\[}}11, 18, 33],
  // CHECK-NEXT: [14, 25, 24]]
  %cat = kiln.concat %a, %add {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %halves:2 = kiln.split %cat {axis = 1 : i64, sizes = array<i64: 3, 3>} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  call @show(%halves#1) : (tensor<2x3xf32>) -> ()

  // Reflect and edge padding, as numpy.pad.
  // CHECK: {{\[\[}}6, 5, 4, 5, 6, 5, 4],
  // CHECK-NEXT: [3, 2, 1, 2, 3, 2, 1],
  // CHECK-NEXT: [6, 5, 4, 5, 6, 5, 4],
  // CHECK-NEXT: [3, 2, 1, 2, 3, 2, 1]]
  %p = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %reflect = kiln.pad %p mode reflect {pads = array<i64: 1, 2, 1, 2>} : (tensor<2x3xf32>) -> tensor<4x7xf32>
  %ur = tensor.cast %reflect : tensor<4x7xf32> to tensor<*xf32>
  call @printMemrefF32(%ur) : (tensor<*xf32>) -> ()
  // CHECK: {{\[\[}}1, 1, 1, 2, 3, 3],
  // CHECK-NEXT: [4, 4, 4, 5, 6, 6],
  // CHECK-NEXT: [4, 4, 4, 5, 6, 6]]
  %edge = kiln.pad %p mode edge {pads = array<i64: 0, 2, 1, 1>} : (tensor<2x3xf32>) -> tensor<3x6xf32>
  %ue = tensor.cast %edge : tensor<3x6xf32> to tensor<*xf32>
  call @printMemrefF32(%ue) : (tensor<*xf32>) -> ()
  return
}
