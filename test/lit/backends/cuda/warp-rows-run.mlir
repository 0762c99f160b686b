// A layer normalisation and a softmax over rows of 40 (more than a warp):
// row kernels that kiln-gpu-warp-rows runs on a warp; and a row sum
// outside a row kernel, a warp each output element. Emulated on the CPU
// (kiln-lower-to-llvm-gpu-mapped: lanes a loop, the shuffles' butterfly
// over an array of partials) they print what the unmapped loops print;
// the expected numbers are NumPy's for the same inputs.
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | grep -v base@ > %t.cpu
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped | %mlir-runner | grep -v base@ > %t.warp
// RUN: diff %t.cpu %t.warp
// RUN: FileCheck %s < %t.warp
// The rows did go to the warp's lanes (five reductions, each combined in
// five steps of the butterfly).
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped --mlir-print-ir-after=kiln-gpu-warp-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=WARP
// WARP-COUNT-25: arith.xori

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = kiln.constant dense<[[-5.0, 0.0, 5.0, -1.0, 4.0, -2.0, 3.0, -3.0, 2.0, -4.0, 1.0, -5.0, 0.0, 5.0, -1.0, 4.0, -2.0, 3.0, -3.0, 2.0, -4.0, 1.0, -5.0, 0.0, 5.0, -1.0, 4.0, -2.0, 3.0, -3.0, 2.0, -4.0, 1.0, -5.0, 0.0, 5.0, -1.0, 4.0, -2.0, 3.0], [-2.0, 3.0, -3.0, 2.0, -4.0, 1.0, -5.0, 0.0, 5.0, -1.0, 4.0, -2.0, 3.0, -3.0, 2.0, -4.0, 1.0, -5.0, 0.0, 5.0, -1.0, 4.0, -2.0, 3.0, -3.0, 2.0, -4.0, 1.0, -5.0, 0.0, 5.0, -1.0, 4.0, -2.0, 3.0, -3.0, 2.0, -4.0, 1.0, -5.0]]> : tensor<2x40xf32>
  %g = kiln.constant dense<[1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0]> : tensor<40xf32>
  %b = kiln.constant dense<[-1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5]> : tensor<40xf32>
  %n = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<2x40xf32>
  %un = tensor.cast %n : tensor<2x40xf32> to tensor<*xf32>
  // CHECK: {{\[\[}}-3.09375, -0.546875, 3.5625, 1.15625,
  // CHECK-NEXT: -2.31066, 1.26238, -0.0247697]]
  call @printMemrefF32(%un) : (tensor<*xf32>) -> ()
  %s = kiln.softmax %x {axis = 1 : i64} : (tensor<2x40xf32>) -> tensor<2x40xf32>
  %us = tensor.cast %s : tensor<2x40xf32> to tensor<*xf32>
  // CHECK: {{\[\[}}7.2532{{[67]}}e-06, 0.00107648, 0.159764, 0.000396015,
  // CHECK-NEXT: 2.49277e-05, 0.0036996, 9.1704e-06]]
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  // A reduction outside a row kernel: a warp each output element.
  %r = kiln.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x40xf32>) -> tensor<2xf32>
  %ur = tensor.cast %r : tensor<2xf32> to tensor<*xf32>
  // CHECK: [4, -8]
  call @printMemrefF32(%ur) : (tensor<*xf32>) -> ()
  return
}
