// RUN: kiln-opt %s --kiln-differentiate --split-input-file --verify-diagnostics | FileCheck %s

// The VJP of exp: a cotangent argument for the result, the gradient of the
// argument as a new result, dx = dy * y (the forward value, reused).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32> {kiln.name = "x"}, %[[DY:.*]]: tensor<4xf32> {kiln.name = "grad_y"})
// CHECK-SAME: -> (tensor<4xf32> {kiln.name = "y"}, tensor<4xf32> {kiln.name = "grad_x"})
// CHECK: %[[Y:.*]] = kiln.exp %[[X]]
// CHECK: %[[DX:.*]] = kiln.mul %[[DY]], %[[Y]]
// CHECK: return %[[Y]], %[[DX]]
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "y"}) {
  %y = kiln.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Broadcasting undone by summing: the bias's gradient is summed over the
// rows and reshaped to its shape; a value used twice sums its gradients.
// CHECK-LABEL: func.func @main(
// CHECK: kiln.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: kiln.reshape %{{.*}} {shape = array<i64: 3>} : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK: %[[SUM:.*]] = kiln.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[SUM]], %{{.*}} :
func.func @main(%a: tensor<2x3xf32> {kiln.name = "a"}, %b: tensor<3xf32> {kiln.name = "b"}) -> (tensor<2x3xf32> {kiln.name = "y"}) {
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.mul %0, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Integer values carry no gradient: an argmax on the way is crossed without
// a rule, and only float arguments get gradients.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.*}}: tensor<2xi64> {kiln.name = "i"}, %{{.*}}: tensor<2x3xf32> {kiln.name = "grad_y"})
// CHECK-SAME: -> (tensor<2x3xf32> {kiln.name = "y"}, tensor<2x1xi64> {kiln.name = "k"}, tensor<2x3xf32> {kiln.name = "grad_a"})
func.func @main(%a: tensor<2x3xf32> {kiln.name = "a"}, %i: tensor<2xi64> {kiln.name = "i"}) -> (tensor<2x3xf32> {kiln.name = "y"}, tensor<2x1xi64> {kiln.name = "k"}) {
  %0 = kiln.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kiln.argmax %0 {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  return %0, %1 : tensor<2x3xf32>, tensor<2x1xi64>
}

// -----

// stop_gradient: no gradient through it, and it is gone afterwards.
// CHECK-LABEL: func.func @main(
// CHECK-NOT: kiln.stop_gradient
// CHECK: return
func.func @main(%a: tensor<3xf32> {kiln.name = "a"}) -> (tensor<3xf32> {kiln.name = "y"}) {
  %s = kiln.stop_gradient %a : (tensor<3xf32>) -> tensor<3xf32>
  %0 = kiln.mul %s, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// An op without a rule that the gradient must cross is named.
func.func @main(%x: tensor<2x3xf32> {kiln.name = "x"}) -> (tensor<2xf32> {kiln.name = "y"}) {
  // expected-error @+1 {{'kiln.reduce_prod' op has no gradient rule}}
  %0 = kiln.reduce_prod %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// topk: each kept value's gradient back at its index, one compare against
// the entries' positions along a new last dim, summed over the slots; along
// an axis known only at run time it is refused (no constant positions).
// CHECK-LABEL: func @main
// CHECK: %[[SLOTS:.*]] = kiln.reshape %{{.*}} {shape = array<i64: 0, 0, 1>} : (tensor<2x3xi64>) -> tensor<2x3x1xi64>
// CHECK: %[[AT:.*]] = kiln.compare eq, %[[SLOTS]], %{{.*}} : (tensor<2x3x1xi64>, tensor<1x1x5xi64>) -> tensor<2x3x5xi1>
// CHECK: kiln.select %[[AT]]
// CHECK: kiln.reduce_sum %{{.*}} {axes = array<i64: 1>} : (tensor<2x3x5xf32>) -> tensor<2x5xf32>
func.func @main(%x: tensor<2x5xf32> {kiln.name = "x"}) -> (tensor<2x3xf32> {kiln.name = "y"}) {
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 3 : i64} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %v : tensor<2x3xf32>
}

// -----

func.func @main(%x: tensor<2x?xf32> {kiln.name = "x"}) -> (tensor<2x3xf32> {kiln.name = "y"}) {
  // expected-error @+1 {{'kiln.topk' op gradient of a topk along an axis known only at run time is not supported yet}}
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 3 : i64} : (tensor<2x?xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %v : tensor<2x3xf32>
}
