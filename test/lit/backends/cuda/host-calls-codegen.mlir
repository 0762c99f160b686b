// The whole CUDA code generation on a function that parses strings (a
// Cast from string): the call of the string function becomes a call of
// the artifact's forwarder between the kernels, by pointer to each
// descriptor (what CudaArtifact.cpp's forwarder takes), and the kernel
// that reads its result is launched after it.
// RUN: kiln-opt %s -kiln-cuda-codegen | FileCheck %s

// CHECK: module attributes {
// CHECK-SAME: kiln_cuda.host_calls = [{args = [memref<?xi64, strided<[?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>], callee = "kiln_string_parse_f32", staged = [true, true]}]
// CHECK: llvm.func @main(
// CHECK: llvm.call @__kiln_cuda_host_0(
// CHECK: llvm.call @__kiln_cuda_launch_0(
// CHECK: llvm.func private @__kiln_cuda_host_0(
// CHECK: llvm.call @_mlir_ciface___kiln_cuda_host_0(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()

func.func private @kiln_string_parse_f32(memref<?xi64, strided<[?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
func.func @main(%in: memref<8xi64>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %parsed = memref.alloc() : memref<8xf32>
  %a = memref.cast %in : memref<8xi64> to memref<?xi64, strided<[?], offset: ?>>
  %b = memref.cast %parsed : memref<8xf32> to memref<?xf32, strided<[?], offset: ?>>
  call @kiln_string_parse_f32(%a, %b) : (memref<?xi64, strided<[?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>) -> ()
  %out = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %parsed[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %out[%i] : memref<8xf32>
    scf.reduce
  }
  return %out : memref<8xf32>
}
