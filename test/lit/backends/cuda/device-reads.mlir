// RUN: kiln-opt %s -split-input-file -kiln-gpu-map-loops -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-gpu-map-loops=emulate=1 -verify-diagnostics | FileCheck %s

// Values the model computes on the device that the host needs (a count
// that sizes an allocation, as NonZero's; a branch) are read from device
// memory by the host: each load the host uses becomes a call of a
// C-interface function the artifact defines (through
// kiln_runtime_services.read_device), recorded in the module's
// kiln_cuda.device_reads. Emulated alike (the read a copy on the CPU).

// A count read back sizes the output; the loop nest that fills it is a
// kernel as before.
// CHECK:       module attributes {kiln_cuda.device_reads = [memref<1xi64>]}
// CHECK-LABEL: func.func @count_sizes_output
// CHECK:       %[[N:.*]] = call @__kiln_cuda_read_0(%{{.*}}, %c0) : (memref<1xi64>, index) -> i64
// CHECK-NOT:   memref.load
// CHECK:       %[[I:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK:       memref.alloc(%[[I]])
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK:       } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK:       func.func private @__kiln_cuda_read_0(memref<1xi64>, index) -> i64 attributes {llvm.emit_c_interface}
func.func @count_sizes_output(%count: memref<1xi64>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.load %count[%c0] : memref<1xi64>
  %i = arith.index_cast %n : i64 to index
  %out = memref.alloc(%i) : memref<?xf32>
  scf.parallel (%j) = (%c0) to (%i) step (%c1) {
    memref.store %zero, %out[%j] : memref<?xf32>
    scf.reduce
  }
  return %out : memref<?xf32>
}

// -----

// Scalar code whose value the host uses (a branch on it) and that a store
// ends: its loads are read by the host (an i1 as a byte, then truncated;
// a strided view's element at its indices), the arithmetic stays on the
// host, the store becomes a kernel of one thread of its own.
// CHECK:       module attributes {kiln_cuda.device_reads = [memref<4xi1>, memref<2x2xf32, strided<[4, 1], offset: 2>>]}
// CHECK-LABEL: func.func @branch_and_store
// CHECK:       %[[B:.*]] = call @__kiln_cuda_read_0(%arg0, %c1) : (memref<4xi1>, index) -> i8
// CHECK:       %[[FLAG:.*]] = arith.trunci %[[B]] : i8 to i1
// CHECK:       %[[X:.*]] = call @__kiln_cuda_read_1(%{{.*}}, %c1, %c0) : (memref<2x2xf32, strided<[4, 1], offset: 2>>, index, index) -> f32
// CHECK:       %[[Y:.*]] = arith.select %[[FLAG]], %[[X]]
// CHECK:       scf.parallel
// CHECK:         memref.store %[[Y]], %arg2[]
// CHECK:       } {mapping
// CHECK:       scf.if %[[FLAG]]
// CHECK:         func.call @report
// CHECK:       func.func private @__kiln_cuda_read_0(memref<4xi1>, index) -> i8
// CHECK:       func.func private @__kiln_cuda_read_1(memref<2x2xf32, strided<[4, 1], offset: 2>>, index, index) -> f32
func.func private @report()
func.func @branch_and_store(%flags: memref<4xi1>, %a: memref<4x4xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %view = memref.subview %a[0, 2] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
  %flag = memref.load %flags[%c1] : memref<4xi1>
  %x = memref.load %view[%c1, %c0] : memref<2x2xf32, strided<[4, 1], offset: 2>>
  %y = arith.select %flag, %x, %one : f32
  memref.store %y, %out[] : memref<f32>
  scf.if %flag {
    func.call @report() : () -> ()
  }
  return
}

// -----

// Scalar code that only the device uses (its values end in its store)
// stays one kernel of one thread: nothing is read back.
// CHECK-NOT:   kiln_cuda.device_reads
// CHECK-LABEL: func.func @device_only
// CHECK-NOT:   call @__kiln_cuda_read
// CHECK:       scf.parallel
// CHECK:         memref.load %arg0[%c0]
// CHECK:         arith.mulf
// CHECK:         memref.store
// CHECK:       } {mapping
func.func @device_only(%a: memref<2xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<2xf32>
  %y = arith.mulf %x, %x : f32
  memref.store %y, %out[] : memref<f32>
  return
}

// -----

// A loop nest between a load and its store: the load is read before the
// nest runs (the order of the host's code), the store its own kernel.
// CHECK-LABEL: func.func @interrupted
// CHECK:       %[[X:.*]] = call @__kiln_cuda_read_0(%arg0, %c0)
// CHECK:       scf.parallel
// CHECK:         memref.store %cst, %arg0
// CHECK:       scf.parallel
// CHECK:         memref.store %[[X]], %arg1[]
func.func @interrupted(%a: memref<2xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.load %a[%c0] : memref<2xf32>
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    memref.store %zero, %a[%i] : memref<2xf32>
    scf.reduce
  }
  memref.store %x, %out[] : memref<f32>
  return
}

// -----

// A constant of the artifact (a global; a view of it) is the host's own
// memory (kernels get a device copy): the host loads it.
// CHECK-NOT:   kiln_cuda.device_reads
// CHECK-LABEL: func.func @constant
// CHECK:       %[[G:.*]] = memref.get_global @sizes
// CHECK:       %[[V:.*]] = memref.subview %[[G]]
// CHECK:       %[[N:.*]] = memref.load %[[V]][%c0]
// CHECK:       memref.alloc(%[[N]])
// CHECK-NOT:   call @__kiln_cuda_read
memref.global "private" constant @sizes : memref<4xindex> = dense<[1, 2, 3, 4]>
func.func @constant() -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @sizes : memref<4xindex>
  %v = memref.subview %g[2] [2] [1] : memref<4xindex> to memref<2xindex, strided<[1], offset: 2>>
  %n = memref.load %v[%c0] : memref<2xindex, strided<[1], offset: 2>>
  %out = memref.alloc(%n) : memref<?xf32>
  return %out : memref<?xf32>
}

// -----

// An element type the host cannot read back is refused, naming it.
func.func @half(%a: memref<2xf16>) -> index {
  %c0 = arith.constant 0 : index
  // expected-error @below {{the CUDA backend cannot read a 'f16' from device memory on the host}}
  %x = memref.load %a[%c0] : memref<2xf16>
  %i = arith.fptoui %x : f16 to i32
  %n = arith.index_cast %i : i32 to index
  return %n : index
}
