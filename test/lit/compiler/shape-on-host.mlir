// RUN: kiln-opt %s -split-input-file -kiln-convert-to-linalg -canonicalize | FileCheck %s

// Checks that a run-time shape computed from dims (ShuffleNet's channel
// shuffle: x.view(batch, -1, h, w), exported as Shape -> Gather ->
// Reshape -> Concat) is computed on the host from the dims themselves: no
// entry is read from a tensor (on a GPU each was a read back from device
// memory, and the run could not be captured), and the result, with one
// dynamic dim, is an expand_shape of those values (not a reshape through
// a shape buffer that a later size is loaded from), which the
// canonicaliser makes one view of the input.
// CHECK-LABEL: func @shuffle_view
// CHECK-NOT: tensor.extract
// CHECK: tensor.dim %arg1, %c0
// CHECK-NOT: tensor.extract
// CHECK-NOT: tensor.reshape
// CHECK: %[[VIEW:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2], [3], [4]] : tensor<?x24x2x28x28xf32> into tensor<?x48x28x28xf32>
// CHECK-NEXT: return %[[VIEW]]
func.func @shuffle_view(%x: tensor<?x24x2x28x28xf32>, %y: tensor<?x48x28x28xf32>) -> tensor<?x48x28x28xf32> {
  %s = kiln.shape_of %y : (tensor<?x48x28x28xf32>) -> tensor<4xi64>
  %zero = kiln.constant dense<0> : tensor<i64>
  %n = kiln.gather %s, %zero {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %n1 = kiln.reshape %n {shape = array<i64: 1>} : (tensor<i64>) -> tensor<1xi64>
  %minus1 = kiln.constant dense<-1> : tensor<1xi64>
  %hw = kiln.constant dense<28> : tensor<1xi64>
  %target = kiln.concat %n1, %minus1, %hw, %hw {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %r = kiln.dynamic_reshape %x, %target {known_dims = array<i64: -1, 48, 28, 28>} : (tensor<?x24x2x28x28xf32>, tensor<4xi64>) -> tensor<?x48x28x28xf32>
  return %r : tensor<?x48x28x28xf32>
}

// -----

// Checks arithmetic on dims (batch * 2, a slice, a cast, a select on a
// constant condition) on the host too, and that a shape given as an
// input is still read from it.
// CHECK-LABEL: func @arithmetic_and_input
// CHECK-NOT: tensor.extract
// CHECK: arith.muli %dim{{.*}}, %c6 : index
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0 : tensor<?x6xf32>
// CHECK-NEXT: arith.muli %[[N]], %c2 : index
// CHECK-NOT: tensor.extract
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%{{.*}}, 3] : tensor<?xf32> into tensor<?x3xf32>
// CHECK: tensor.extract %arg2
func.func @arithmetic_and_input(%x: tensor<?x6xf32>, %y: tensor<6xf32>, %shape: tensor<1xi64>) -> (tensor<?x3xf32>, tensor<?xf32>) {
  %s = kiln.shape_of %x : (tensor<?x6xf32>) -> tensor<2xi64>
  %first = kiln.slice %s {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  %two = kiln.constant dense<2> : tensor<1xi64>
  %n2 = kiln.mul %first, %two : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %n2i = kiln.cast %n2 : tensor<1xi64> to tensor<1xi32>
  %n2l = kiln.cast %n2i : tensor<1xi32> to tensor<1xi64>
  %three = kiln.constant dense<[3, 99]> : tensor<2xi64>
  %pick = kiln.constant dense<[false, true]> : tensor<2xi1>
  %n2pad = kiln.concat %n2l, %n2l {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %target = kiln.select %pick, %n2pad, %three : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %t = kiln.slice %target {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<2xi64>
  %swapped = kiln.concat %t, %t {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %back = kiln.slice %swapped {starts = array<i64: 1>, ends = array<i64: 3>, steps = array<i64: 1>} : (tensor<4xi64>) -> tensor<2xi64>
  %r = kiln.dynamic_reshape %x, %back {known_dims = array<i64: -1, 3>} : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  %q = kiln.dynamic_reshape %y, %shape {known_dims = array<i64: -1>} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %r, %q : tensor<?x3xf32>, tensor<?xf32>
}

// -----

// Checks a division on the host by a divisor known when compiling, here
// one computed from a static dim (12 / 2 = 6, n * 12 / 6), and that an
// entry divided by a run-time value is read from the tensor (kiln.div
// defines a division by zero on the device; the host's divsi does not).
// CHECK-LABEL: func @division
// CHECK-NOT: tensor.extract %
// CHECK: %[[N12:.*]] = arith.muli %{{.*}}, %c12 : index
// CHECK-NEXT: arith.divsi %[[N12]], %c6 : index
// CHECK-NOT: tensor.extract %
// CHECK: kiln_shape_error
// CHECK: tensor.extract %
func.func @division(%x: tensor<?x12xf32>) -> (tensor<?xi64>, tensor<?xi64>) {
  %s = kiln.shape_of %x : (tensor<?x12xf32>) -> tensor<2xi64>
  %n = kiln.slice %s {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  %c = kiln.slice %s {starts = array<i64: 1>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  %nc = kiln.mul %n, %c : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %two = kiln.constant dense<2> : tensor<1xi64>
  %six = kiln.div %c, %two : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %q = kiln.div %nc, %six : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %0 = kiln.iota %q {axis = 0 : i64} : (tensor<1xi64>) -> tensor<?xi64>
  %r = kiln.div %nc, %n : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %1 = kiln.iota %r {axis = 0 : i64} : (tensor<1xi64>) -> tensor<?xi64>
  return %0, %1 : tensor<?xi64>, tensor<?xi64>
}
