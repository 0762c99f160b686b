// Row sums and maxima of 1,024 elements outside a row kernel: through the
// emulation (kiln-lower-to-llvm-gpu-mapped: a block of 64 threads an
// output, 16 elements a thread, each warp's butterfly over an array, the
// two warps' totals combined in order) they print what the unmapped loops
// print, and NumPy's values for x = (37 i + j) mod 1031 - 500 (integers:
// exact in any order, so a lost, doubled or misplaced element shows).
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | grep -v base@ > %t.cpu
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped | %mlir-runner | grep -v base@ > %t.block
// RUN: diff %t.cpu %t.block
// RUN: FileCheck %s < %t.block
// The reductions did take a block (the emulation's 64 partials).
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped --mlir-print-ir-after=kiln-gpu-warp-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=BLOCK
// BLOCK: memref.alloca() : memref<64xf32>
// BLOCK: memref.alloca() : memref<64xf32>

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %shape = kiln.constant dense<[2, 1024]> : tensor<2xi64>
  %i = kiln.iota %shape {axis = 1 : i64} : (tensor<2xi64>) -> tensor<2x1024xi64>
  %j = kiln.iota %shape {axis = 0 : i64} : (tensor<2xi64>) -> tensor<2x1024xi64>
  %k37 = kiln.constant dense<37> : tensor<i64>
  %k1031 = kiln.constant dense<1031> : tensor<i64>
  %k500 = kiln.constant dense<500.0> : tensor<f32>
  %a = kiln.mul %i, %k37 : (tensor<2x1024xi64>, tensor<i64>) -> tensor<2x1024xi64>
  %b = kiln.add %a, %j : (tensor<2x1024xi64>, tensor<2x1024xi64>) -> tensor<2x1024xi64>
  %r = kiln.rem %b, %k1031 : (tensor<2x1024xi64>, tensor<i64>) -> tensor<2x1024xi64>
  %f = kiln.cast %r : tensor<2x1024xi64> to tensor<2x1024xf32>
  %x = kiln.sub %f, %k500 : (tensor<2x1024xf32>, tensor<f32>) -> tensor<2x1024xf32>
  %s = kiln.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x1024xf32>) -> tensor<2xf32>
  // CHECK: [12784,  12777]
  %us = tensor.cast %s : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  %m = kiln.reduce_max %x {axes = array<i64: 1>} : (tensor<2x1024xf32>) -> tensor<2xf32>
  // CHECK: [530,  530]
  %um = tensor.cast %m : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%um) : (tensor<*xf32>) -> ()
  return
}
