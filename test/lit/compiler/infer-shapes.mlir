// RUN: kiln-opt %s -split-input-file -kiln-infer-shapes | FileCheck %s

// Checks that refinements flow forward through a chain and into the
// signature of a function nobody calls.
// CHECK-LABEL: func @chain
// CHECK-SAME: -> (tensor<4x3xf32>, tensor<4xf32>)
// CHECK: kiln.add {{.*}} -> tensor<4x3xf32>
// CHECK: kiln.relu {{.*}} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: kiln.reduce_sum {{.*}} : (tensor<4x3xf32>) -> tensor<4xf32>
// CHECK: return {{.*}} : tensor<4x3xf32>, tensor<4xf32>
func.func @chain(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<?x3xf32>, tensor<?xf32>) {
  %0 = kiln.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  %1 = kiln.relu %0 : (tensor<?x?xf32>) -> tensor<?x3xf32>
  %2 = kiln.reduce_sum %1 {axes = array<i64: 1>} : (tensor<?x3xf32>) -> tensor<?xf32>
  return %1, %2 : tensor<?x3xf32>, tensor<?xf32>
}

// -----

// Checks that a dynamic batch dim stays dynamic while the other dims are
// refined through matmul, reshape and transpose.
// CHECK-LABEL: func @dynamic_batch
// CHECK: kiln.matmul {{.*}} -> tensor<?x128x768xf32>
// CHECK: kiln.reshape {{.*}} -> tensor<?x128x12x64xf32>
// CHECK: kiln.transpose {{.*}} -> tensor<?x12x128x64xf32>
// CHECK: return {{.*}} : tensor<?x12x128x64xf32>
func.func @dynamic_batch(%x: tensor<?x128x768xf32>, %w: tensor<768x768xf32>) -> tensor<?x?x?x?xf32> {
  %0 = kiln.matmul %x, %w : (tensor<?x128x768xf32>, tensor<768x768xf32>) -> tensor<?x?x?xf32>
  %1 = kiln.reshape %0 {shape = array<i64: 0, 0, 12, 64>} : (tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %2 = kiln.transpose %1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %2 : tensor<?x?x?x?xf32>
}

// -----

// Checks that conv and pooling sizes are computed from the window rules.
// CHECK-LABEL: func @windows
// CHECK: kiln.conv {{.*}} -> tensor<1x64x112x112xf32>
// CHECK: kiln.max_pool {{.*}} -> tensor<1x64x56x56xf32>
func.func @windows(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<1x64x?x?xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>,
                         dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x?x?xf32>
  %1 = kiln.max_pool %0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x64x?x?xf32>) -> tensor<1x64x?x?xf32>
  return %1 : tensor<1x64x?x?xf32>
}

// -----

// Checks that every result of a multi-result op is refined.
// CHECK-LABEL: func @split
// CHECK: kiln.split {{.*}} -> (tensor<2x3xf32>, tensor<2x5xf32>)
func.func @split(%x: tensor<2x8xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0:2 = kiln.split %x {axis = 1 : i64, sizes = array<i64: 3, 5>} : (tensor<2x8xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>)
  return %0#0, %0#1 : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Checks that a user outside kiln keeps its type through a tensor.cast,
// and that a called function keeps its signature (its return gets a cast).
// CHECK-LABEL: func @callee
// CHECK-SAME: -> tensor<?xf32>
// CHECK: %[[N:.*]] = kiln.neg {{.*}} -> tensor<4xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[N]] : tensor<4xf32> to tensor<?xf32>
// CHECK: %[[D:.*]] = tensor.dim %[[C]]
// CHECK: return %[[C]] : tensor<?xf32>
func.func @callee(%a: tensor<4xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %0 = kiln.neg %a : (tensor<4xf32>) -> tensor<?xf32>
  %d = tensor.dim %0, %c0 : tensor<?xf32>
  return %0 : tensor<?xf32>
}
// CHECK-LABEL: func @caller
func.func @caller(%a: tensor<4xf32>) -> tensor<?xf32> {
  %0 = func.call @callee(%a) : (tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Checks that nothing changes when every type is already exact.
// CHECK-LABEL: func @exact
// CHECK-NOT: tensor.cast
// CHECK: kiln.exp {{.*}} : (tensor<2xf32>) -> tensor<2xf32>
func.func @exact(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = kiln.exp %a : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Checks that the static entries of a shape computed from dims give static
// dims: an iota of [n, 1, 1] made as torch exports token.expand(n, -1, -1)
// (shape_of, gather, concat, a select on a constant condition), of a
// shape_of itself, of a slice and of arithmetic on static dims (12 / 2 * 3
// - 1 = 17). The batch, known only at run time, stays dynamic (the lowering
// computes it on the host).
// CHECK-LABEL: func @shape_entries
// CHECK: kiln.iota {{.*}} -> tensor<?x1x1xi64>
// CHECK: kiln.iota {{.*}} -> tensor<?x12xi64>
// CHECK: kiln.iota {{.*}} -> tensor<12xi64>
// CHECK: kiln.iota {{.*}} -> tensor<17x?xi64>
func.func @shape_entries(%x: tensor<?x12xf32>) -> (tensor<?x?x?xi64>, tensor<?x?xi64>, tensor<?xi64>, tensor<?x?xi64>) {
  %s = kiln.shape_of %x : (tensor<?x12xf32>) -> tensor<2xi64>
  %zero = kiln.constant dense<0> : tensor<1xi64>
  %n = kiln.gather %s, %zero {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %minus1 = kiln.constant dense<-1> : tensor<1xi64>
  %t = kiln.concat %n, %minus1, %minus1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %c = kiln.constant dense<[false, true, true]> : tensor<3xi1>
  %ones = kiln.constant dense<1> : tensor<3xi64>
  %t2 = kiln.select %c, %ones, %t : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %0 = kiln.iota %t2 {axis = 0 : i64} : (tensor<3xi64>) -> tensor<?x?x?xi64>
  %1 = kiln.iota %s {axis = 0 : i64} : (tensor<2xi64>) -> tensor<?x?xi64>
  %last = kiln.slice %s {ends = array<i64: 2>, starts = array<i64: -1>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  %2 = kiln.iota %last {axis = 0 : i64} : (tensor<1xi64>) -> tensor<?xi64>
  %two = kiln.constant dense<2> : tensor<1xi64>
  %three = kiln.constant dense<3> : tensor<1xi64>
  %one = kiln.constant dense<1> : tensor<1xi64>
  %h = kiln.div %last, %two : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %h3 = kiln.mul %h, %three : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m = kiln.sub %h3, %one : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %shape = kiln.concat %m, %n {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %3 = kiln.iota %shape {axis = 0 : i64} : (tensor<2xi64>) -> tensor<?x?xi64>
  return %0, %1, %2, %3 : tensor<?x?x?xi64>, tensor<?x?xi64>, tensor<?xi64>, tensor<?x?xi64>
}
