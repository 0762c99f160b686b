// The whole CUDA code generation on a function whose host code needs a
// value from device memory (a count sizing its output, as a NonZero's),
// and whose kernel takes an integer's absolute value (math.absi, which a
// reflect pad with run-time pads makes; NVVM's patterns leave it to
// convert-math-to-llvm: abs.s64 in the PTX).
// RUN: kiln-opt %s -kiln-cuda-codegen | FileCheck %s

// CHECK: module attributes {
// CHECK-SAME: kiln_cuda.device_reads = [memref<1xi64>]
// CHECK-SAME: kiln_cuda.ptx = {sm_80 = "{{.*}}abs.s64{{.*}}"
// CHECK: llvm.func @main(
// CHECK: llvm.call @__kiln_cuda_read_0(
// CHECK: llvm.call @__kiln_cuda_launch_0(
// The descriptor by pointer and the index: what the artifact's forwarder
// (CudaArtifact.cpp) takes.
// CHECK: llvm.func private @__kiln_cuda_read_0(
// CHECK: llvm.call @_mlir_ciface___kiln_cuda_read_0(%{{.*}}, %arg5) : (!llvm.ptr, i64) -> i64

func.func @main(%count: memref<1xi64>, %a: memref<8xi64>) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.load %count[%c0] : memref<1xi64>
  %i = arith.index_cast %n : i64 to index
  %out = memref.alloc(%i) : memref<?xi64>
  scf.parallel (%j) = (%c0) to (%i) step (%c1) {
    %x = memref.load %a[%j] : memref<8xi64>
    %y = math.absi %x : i64
    memref.store %y, %out[%j] : memref<?xi64>
    scf.reduce
  }
  return %out : memref<?xi64>
}
