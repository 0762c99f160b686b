// The CUDA backend's code generation on a small function: one GPU module
// of kernels lowered to PTX for each GPU (libdevice linked in for math),
// launches as calls of the entry point's forwarders, constants passed as
// device copies, the host code in the LLVM dialect.
// RUN: kiln-opt %s -kiln-cuda-codegen | FileCheck %s

// CHECK: module attributes {
// CHECK-SAME: kiln_cuda.constants = [memref<4xf32>]
// CHECK-SAME: kiln_cuda.kernels = ["main_kernel", "main_kernel_0"]
// The constants (bounds, steps) are sunk into each launch before
// outlining: a kernel's arguments are its buffers and the host's run-time
// values only, never a constant.
// CHECK-SAME: kiln_cuda.launches = [{args = [memref<?x4xf32>, memref<?x4xf32>], kernel = 0 : i64}, {args = [memref<4xf32>, memref<4xf32>], kernel = 1 : i64}]
// The rows of 4 f32 (arguments: 16-byte aligned) are one vector load and
// store a thread; the constant table (a global of no declared alignment)
// is read an element a thread.
// CHECK-SAME: kiln_cuda.ptx = {sm_80 = "{{.*}}.target sm_80{{.*}}.entry main_kernel({{.*}}.maxntid 256, 1, 1{{.*}}ld.global.v4.b32{{.*}}st.global.v4.b32{{.*}}.entry main_kernel_0({{.*}}ld.global.b32{{.*}}st.global.b32{{.*}}", sm_90 = "{{.*}}.target sm_90{{.*}}"}
// CHECK-NOT: gpu.module
// CHECK-NOT: gpu.binary
// CHECK: llvm.func @main(
// CHECK: llvm.call @__kiln_cuda_launch_0(
// CHECK: llvm.call @__kiln_cuda_constant_0(
// CHECK: llvm.call @__kiln_cuda_launch_1(
// CHECK: llvm.func @_mlir_ciface___kiln_cuda_launch_0(
// Math functions come from libdevice, linked into the PTX: no call is
// left to resolve when the module loads.
// CHECK-NOT: .extern .func __nv_expf

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

func.func @main(%a: memref<?x4xf32>, %b: memref<?x4xf32>, %c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %a, %c0 : memref<?x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x4xf32>
    %y = math.exp %x : f32
    memref.store %y, %b[%i, %j] : memref<?x4xf32>
    scf.reduce
  }
  %t = memref.get_global @table : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %t[%i] : memref<4xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %c[%i] : memref<4xf32>
    scf.reduce
  }
  return
}
