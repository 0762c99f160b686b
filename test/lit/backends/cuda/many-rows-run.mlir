// 100,000 row sums of 32 (a warp an output) through the emulation: the
// host runs the outputs one after another, and the lanes' partials are
// allocated once before the loop; allocated once an output, they grew
// the stack by 256 bytes an output and overflowed a default 8 MiB stack
// (the runner crashed). Each row's sum is an integer; their total is
// printed as the unmapped loops print it.
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped | %mlir-runner | FileCheck %s
// CHECK: [1.2e+06]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %shape = kiln.constant dense<[100000, 32]> : tensor<2xi64>
  %i = kiln.iota %shape {axis = 1 : i64} : (tensor<2xi64>) -> tensor<100000x32xi64>
  %f = kiln.cast %i : tensor<100000x32xi64> to tensor<100000x32xf32>
  %k = kiln.constant dense<15.125> : tensor<f32>
  %x = kiln.sub %f, %k : (tensor<100000x32xf32>, tensor<f32>) -> tensor<100000x32xf32>
  %s = kiln.reduce_sum %x {axes = array<i64: 1>} : (tensor<100000x32xf32>) -> tensor<100000xf32>
  %z = kiln.reduce_sum %s {axes = array<i64: 0>} : (tensor<100000xf32>) -> tensor<f32>
  %uz = tensor.cast %z : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%uz) : (tensor<*xf32>) -> ()
  return
}
