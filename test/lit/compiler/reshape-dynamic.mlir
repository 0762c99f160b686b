// RUN: kiln-opt %s -split-input-file -kiln-lower-to-llvm | FileCheck %s

// Checks that a reshape whose result has two dynamic dims (one copied, one
// inferred) lowers through a shape tensor to the LLVM dialect. As one
// expand_shape group it used to crash the strided-metadata expansion.
// CHECK-LABEL: llvm.func @two_dynamic
// CHECK-NOT: memref.
// CHECK: llvm.return
func.func @two_dynamic(%x: tensor<?x5x6xf32>) -> tensor<?x5x?xf32> {
  %0 = kiln.reshape %x {shape = array<i64: 0, 5, -1>} : (tensor<?x5x6xf32>) -> tensor<?x5x?xf32>
  return %0 : tensor<?x5x?xf32>
}
