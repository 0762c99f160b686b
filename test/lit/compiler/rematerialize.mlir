// RUN: kiln-opt %s --kiln-rematerialize --split-input-file --mlir-print-debuginfo | FileCheck %s

// Forward values read by backward elementwise ops of their shape, whose
// operands the backward pass has anyway (here an argument): recomputed
// right before each reader, marked backward, and gone from the forward.
// CHECK-LABEL: func.func @recomputed(
// CHECK-SAME: kiln_rematerialized = array<i64: 2, 32>
// CHECK-NEXT: %[[N:.*]] = kiln.neg %arg0 {{.*}}loc(#[[NEG:[a-z0-9]*]])
// CHECK-NEXT: kiln.mul %arg1, %[[N]]
// CHECK-NEXT: %[[S:.*]] = kiln.sigmoid %arg0
// CHECK-NEXT: kiln.mul %arg0, %[[S]]
// CHECK: #[[Y:.*]] = loc("y")
// CHECK: #[[NEG]] = loc("kiln.backward"(#[[Y]]))
func.func @recomputed(%x: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = kiln.neg %x : (tensor<4xf32>) -> tensor<4xf32> loc("y")
  %s = kiln.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32> loc("s")
  %d = kiln.mul %g, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("kiln.backward"("dy"))
  %e = kiln.mul %x, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("kiln.backward"("ds"))
  return %d, %e : tensor<4xf32>, tensor<4xf32>
}

// -----

// Kept: a value whose operand the backward pass would have to save for it
// (%t is read by no backward op), and a value a backward op reads that is
// not elementwise of its shape (the copy would be a kernel of its own,
// which CSE merges back).
// CHECK-LABEL: func.func @kept(
// CHECK-SAME: kiln_rematerialized = array<i64: 0, 0>
// CHECK: %[[T:.*]] = kiln.exp %arg0
// CHECK: %[[Y:.*]] = kiln.neg %[[T]]
// CHECK: %[[Z:.*]] = kiln.relu %arg0
// CHECK: kiln.mul %arg1, %[[Y]]
// CHECK: kiln.reduce_sum %[[Z]]
func.func @kept(%x: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %t = kiln.exp %x : (tensor<4xf32>) -> tensor<4xf32> loc("t")
  %y = kiln.neg %t : (tensor<4xf32>) -> tensor<4xf32> loc("y")
  %z = kiln.relu %x : (tensor<4xf32>) -> tensor<4xf32> loc("z")
  %d = kiln.mul %g, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("kiln.backward"("dy"))
  %r = kiln.reduce_sum %z {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32> loc("kiln.backward"("dz"))
  return %d, %r : tensor<4xf32>, tensor<f32>
}
