// A layer normalisation over rows of 768 and a softmax over rows of 128,
// through Kiln's phases and the whole CUDA code generation: each row on
// a warp, its temporaries lane-private (24 and 4 slots a lane), the lane
// loops unrolled, so that the PTX keeps them in registers: no local
// memory (before, each thread held a whole row there: 3,136 and 576
// bytes). And no 64-bit division: the bounds and divisors are constants
// in the kernels, not parameters.
// RUN: kiln-opt %s --kiln-plan | kiln-opt -kiln-cuda-codegen | FileCheck %s
// CHECK: kiln_cuda.ptx = {sm_80 = "{{.*}}.entry main_kernel({{.*}}shfl.sync.bfly{{.*}}.entry main_kernel_0({{.*}}shfl.sync.bfly{{.*}}", sm_90
// CHECK-NOT: .local
// CHECK-NOT: div.u64
// CHECK-NOT: rem.u64

func.func @main(%x: tensor<64x768xf32>, %a: tensor<64x128xf32>) -> (tensor<64x768xf32>, tensor<64x128xf32>) {
  %g = kiln.constant dense<1.5> : tensor<768xf32>
  %b = kiln.constant dense<0.5> : tensor<768xf32>
  %n = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<64x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<64x768xf32>
  %s = kiln.softmax %a {axis = 1 : i64} : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %n, %s : tensor<64x768xf32>, tensor<64x128xf32>
}
