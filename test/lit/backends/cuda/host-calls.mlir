// RUN: kiln-opt %s -split-input-file -kiln-gpu-map-loops -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-gpu-map-loops=emulate=1 -verify-diagnostics | FileCheck %s

// A string operation (a call of a kiln_string_* function, whose C the
// artifact carries) runs on the host, on copies of its device buffers:
// the call becomes a call of a C-interface function the artifact defines
// (__kiln_cuda_host_<n>: the operands in device memory read back, the
// function called on the copies, the last operand written back), the
// callee, operand types and which operands are device memory recorded in
// the module's kiln_cuda.host_calls. The loop nests around it stay
// kernels. Emulated alike (the copies are copies on the CPU).

// Lower-casing an input that a kernel copied first: the input is device
// memory, the result too; the kernel that reads the result comes after.
// CHECK:       module attributes {kiln_cuda.host_calls = [{args = [memref<?xi64, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>], callee = "kiln_string_lower", staged = [true, true]}]}
// CHECK-LABEL: func.func @lower
// CHECK:       scf.parallel
// CHECK:       } {mapping
// CHECK:       call @__kiln_cuda_host_0(%{{.*}}, %{{.*}}) : (memref<?xi64, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>) -> ()
// CHECK-NOT:   call @kiln_string_lower
// CHECK:       scf.parallel
// CHECK:       } {mapping
// CHECK:       func.func private @__kiln_cuda_host_0(memref<?xi64, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
func.func private @kiln_string_lower(memref<?xi64, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
func.func @lower(%in: memref<4xi64>, %out: memref<4xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %copy = memref.alloc() : memref<4xi64>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %in[%i] : memref<4xi64>
    memref.store %x, %copy[%i] : memref<4xi64>
    scf.reduce
  }
  %lowered = memref.alloc() : memref<4xi64>
  %a = memref.cast %copy : memref<4xi64> to memref<?xi64, strided<[?], offset: ?>>
  %b = memref.cast %lowered : memref<4xi64> to memref<?xi64, strided<[?], offset: ?>>
  call @kiln_string_lower(%a, %b) : (memref<?xi64, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>) -> ()
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %lowered[%i] : memref<4xi64>
    memref.store %x, %out[%i] : memref<4xi64>
    scf.reduce
  }
  return
}

// -----

// Constants of the artifact (the words of a stop-word list) are host
// memory: passed as they are (staged false); the result is a bool per
// string (i1, a byte in memory).
// CHECK:       module attributes {kiln_cuda.host_calls = [{args = [memref<?xi64, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>, memref<?xi1, strided<[?], offset: ?>>], callee = "kiln_string_in_set", staged = [true, false, true]}]}
// CHECK-LABEL: func.func @in_set
// CHECK:       memref.get_global @words
// CHECK:       call @__kiln_cuda_host_0(
memref.global "private" constant @words : memref<2xi64> = dense<[1, 2]>
func.func private @kiln_string_in_set(memref<?xi64, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>, memref<?xi1, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
func.func @in_set(%in: memref<3xi64>, %out: memref<3xi1>) {
  %words = memref.get_global @words : memref<2xi64>
  %a = memref.cast %in : memref<3xi64> to memref<?xi64, strided<[?], offset: ?>>
  %w = memref.cast %words : memref<2xi64> to memref<?xi64, strided<[?], offset: ?>>
  %o = memref.cast %out : memref<3xi1> to memref<?xi1, strided<[?], offset: ?>>
  call @kiln_string_in_set(%a, %w, %o) : (memref<?xi64, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>, memref<?xi1, strided<[?], offset: ?>>) -> ()
  return
}

// -----

// Only buffers of one dim: what the string functions take.
func.func private @kiln_string_upper(memref<2x2xi64>, memref<2x2xi64>)
func.func @two_dims(%in: memref<2x2xi64>, %out: memref<2x2xi64>) {
  // expected-error @+1 {{the CUDA backend cannot pass 'memref<2x2xi64>' to host function kiln_string_upper (1-D buffers of integers or floats only)}}
  call @kiln_string_upper(%in, %out) : (memref<2x2xi64>, memref<2x2xi64>) -> ()
  return
}
