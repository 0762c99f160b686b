// 300,000 softmax rows of 16 through the emulation: rows under 32 stay on
// one thread (kiln-gpu-warp-rows leaves them), so each keeps its row
// temporaries in the host's loop over the mapped threads. The host
// lowering saves and restores the stack each iteration
// (kiln-scope-loop-allocas, shared with the CPU backend); without it the
// emulation grew the stack by every row's buffers and overflowed a default
// 8 MiB stack (the runner crashed) while the CPU's code ran. Every row sums
// to 1; the totals of 4.8 million floats differ from 300,000 by the
// order each pipeline adds them in (the emulation: a block of 64 an
// output; the CPU backend a running sum).
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped | %mlir-runner | FileCheck %s --check-prefix=GPU
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | FileCheck %s --check-prefix=CPU
// GPU: [300090]
// CPU: [296799]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %shape = kiln.constant dense<[300000, 16]> : tensor<2xi64>
  %i = kiln.iota %shape {axis = 1 : i64} : (tensor<2xi64>) -> tensor<300000x16xi64>
  %f = kiln.cast %i : tensor<300000x16xi64> to tensor<300000x16xf32>
  %x = kiln.softmax %f {axis = 1 : i64} : (tensor<300000x16xf32>) -> tensor<300000x16xf32>
  %s = kiln.reduce_sum %x {axes = array<i64: 0, 1>} : (tensor<300000x16xf32>) -> tensor<f32>
  %us = tensor.cast %s : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  return
}
