// A concatenation whose leading inputs are exactly an earlier one's (same
// axis, same block, at least two) takes that one in their place, the
// longest such (kiln-cuda-chain-concats, which the CUDA backend's library
// claims run): DenseNet's concat(x0, f1, ..., fk) becomes
// concat(concat(x0, ..., fk-1), fk), one copy on the GPU instead of k.
// RUN: kiln-opt %s --kiln-cuda-chain-concats | FileCheck %s
// The numbers, with and without: chain-concats-run.mlir.

// CHECK-LABEL: func.func @dense_block
// CHECK-SAME:  (%[[X:.*]]: tensor<?x2x3x3xf32>, %[[F1:.*]]: tensor<?x1x3x3xf32>, %[[F2:.*]]: tensor<?x1x3x3xf32>, %[[F3:.*]]: tensor<?x1x3x3xf32>)
// CHECK:       %[[C1:.*]] = kiln.concat %[[X]], %[[F1]] {axis = 1 : i64}
// CHECK:       %[[C2:.*]] = kiln.concat %[[C1]], %[[F2]] {axis = 1 : i64} : (tensor<?x3x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x4x3x3xf32>
// CHECK:       %[[C3:.*]] = kiln.concat %[[C2]], %[[F3]] {axis = 1 : i64} : (tensor<?x4x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x5x3x3xf32>
// The longest prefix: c1's two inputs, then f3 and f1.
// CHECK:       kiln.concat %[[C1]], %[[F3]], %[[F1]] {axis = 1 : i64}
// Left alone: another axis; a prefix only after it; all of its inputs.
// CHECK:       kiln.concat %[[X]], %[[X]] {axis = 2 : i64}
// CHECK:       kiln.concat %[[F1]], %[[F1]], %[[F1]] {axis = 2 : i64}
// CHECK:       kiln.concat %[[F1]], %[[F2]], %[[F3]] {axis = 1 : i64}
// CHECK:       kiln.concat %[[F1]], %[[F2]] {axis = 1 : i64}
// CHECK:       kiln.concat %[[F3]], %[[F2]] {axis = 1 : i64}
// CHECK:       kiln.concat %[[F3]], %[[F2]] {axis = 1 : i64}
func.func @dense_block(%x: tensor<?x2x3x3xf32>, %f1: tensor<?x1x3x3xf32>, %f2: tensor<?x1x3x3xf32>, %f3: tensor<?x1x3x3xf32>) -> (tensor<?x5x3x3xf32>, tensor<?x5x3x3xf32>, tensor<?x2x6x3xf32>, tensor<?x1x9x3xf32>, tensor<?x3x3x3xf32>, tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>) {
  %c1 = kiln.concat %x, %f1 {axis = 1 : i64} : (tensor<?x2x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x3x3x3xf32>
  %c2 = kiln.concat %x, %f1, %f2 {axis = 1 : i64} : (tensor<?x2x3x3xf32>, tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x4x3x3xf32>
  %c3 = kiln.concat %x, %f1, %f2, %f3 {axis = 1 : i64} : (tensor<?x2x3x3xf32>, tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x5x3x3xf32>
  %other = kiln.concat %x, %f1, %f3, %f1 {axis = 1 : i64} : (tensor<?x2x3x3xf32>, tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x5x3x3xf32>
  %rows = kiln.concat %x, %x {axis = 2 : i64} : (tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>) -> tensor<?x2x6x3xf32>
  %f13 = kiln.concat %f1, %f1, %f1 {axis = 2 : i64} : (tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x1x9x3xf32>
  %later = kiln.concat %f1, %f2, %f3 {axis = 1 : i64} : (tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x3x3x3xf32>
  %prefix = kiln.concat %f1, %f2 {axis = 1 : i64} : (tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x2x3x3xf32>
  %same1 = kiln.concat %f3, %f2 {axis = 1 : i64} : (tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x2x3x3xf32>
  %same2 = kiln.concat %f3, %f2 {axis = 1 : i64} : (tensor<?x1x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x2x3x3xf32>
  return %c3, %other, %rows, %f13, %later, %prefix, %same1, %same2 : tensor<?x5x3x3xf32>, tensor<?x5x3x3xf32>, tensor<?x2x6x3xf32>, tensor<?x1x9x3xf32>, tensor<?x3x3x3xf32>, tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>
}
