// RUN: kiln-opt %s -split-input-file -canonicalize | FileCheck %s

// Checks that adding or subtracting a splat zero folds away.
// CHECK-LABEL: func @add_sub_zero
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: kiln.add
// CHECK-NOT: kiln.sub
// CHECK: return %[[X]], %[[X]]
func.func @add_sub_zero(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.add %zero, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.sub %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that multiplying or dividing by a splat one folds away.
// CHECK-LABEL: func @mul_div_one
// CHECK-SAME: (%[[X:.*]]: tensor<4xi32>)
// CHECK-NOT: kiln.mul
// CHECK-NOT: kiln.div
// CHECK: return %[[X]], %[[X]]
func.func @mul_div_one(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %one = kiln.constant dense<1> : tensor<4xi32>
  %0 = kiln.mul %x, %one : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = kiln.div %x, %one : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// Checks that an identity that would broadcast its operand does not fold.
// CHECK-LABEL: func @broadcasting_identity_stays
// CHECK: kiln.add
func.func @broadcasting_identity_stays(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  %zero = kiln.constant dense<0.0> : tensor<2x4xf32>
  %0 = kiln.add %x, %zero : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Checks that arithmetic on same-typed constants is folded.
// CHECK-LABEL: func @constant_arithmetic
// CHECK-NOT: kiln.add
// CHECK-NOT: kiln.mul
// CHECK: %[[C:.*]] = kiln.constant dense<[1.500000e+01, 1.800000e+01]> : tensor<2xf32>
// CHECK: return %[[C]]
func.func @constant_arithmetic() -> tensor<2xf32> {
  %a = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = kiln.constant dense<[4.0, 4.0]> : tensor<2xf32>
  %0 = kiln.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = kiln.mul %0, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = kiln.sub %1, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = kiln.sub %2, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %3 : tensor<2xf32>
}

// -----

// Checks that integer constants fold with wrap-around arithmetic.
// CHECK-LABEL: func @integer_constants
// CHECK: kiln.constant dense<[-128, 6]> : tensor<2xi8>
func.func @integer_constants() -> tensor<2xi8> {
  %a = kiln.constant dense<[127, 3]> : tensor<2xi8>
  %b = kiln.constant dense<[1, 3]> : tensor<2xi8>
  %0 = kiln.add %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

// Checks that double negation and negation of a constant fold.
// CHECK-LABEL: func @neg
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK-NOT: kiln.neg
// CHECK: %[[C:.*]] = kiln.constant dense<-2.000000e+00> : tensor<3xf32>
// CHECK: return %[[X]], %[[C]]
func.func @neg(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = kiln.neg %x : (tensor<3xf32>) -> tensor<3xf32>
  %1 = kiln.neg %0 : (tensor<3xf32>) -> tensor<3xf32>
  %c = kiln.constant dense<2.0> : tensor<3xf32>
  %2 = kiln.neg %c : (tensor<3xf32>) -> tensor<3xf32>
  return %1, %2 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Checks that a select on a splat condition picks its operand.
// CHECK-LABEL: func @select_splat
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK-NOT: kiln.select
// CHECK: return %[[A]], %[[B]]
func.func @select_splat(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %t = kiln.constant dense<true> : tensor<3xi1>
  %f = kiln.constant dense<false> : tensor<3xi1>
  %0 = kiln.select %t, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = kiln.select %f, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Checks that a select on a splat condition stays when the other operand
// may stretch the chosen one at run time ([?] and [?]: 1 and 3), and
// folds when the other cannot ([1]).
// CHECK-LABEL: func @select_splat_dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<?xf32>, %[[B:.*]]: tensor<?xf32>, %[[C:.*]]: tensor<1xf32>)
// CHECK: %[[S:.*]] = kiln.select
// CHECK-NOT: kiln.select
// CHECK: return %[[S]], %[[A]]
func.func @select_splat_dynamic(%a: tensor<?xf32>, %b: tensor<?xf32>, %c: tensor<1xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %t = kiln.constant dense<true> : tensor<i1>
  %0 = kiln.select %t, %a, %b : (tensor<i1>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %1 = kiln.select %t, %a, %c : (tensor<i1>, tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}

// -----

// Checks that no-op data movement folds away: same-type cast, identity
// transpose, same-shape reshape and expand, one-input concat, full slice,
// zero pad and a reduction over no axes.
// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = kiln.cast %x : tensor<2x3xf32> to tensor<2x3xf32>
  %1 = kiln.transpose %x {permutation = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = kiln.reshape %x {shape = array<i64: 2, -1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = kiln.expand %x {shape = array<i64: 1, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = kiln.concat %x {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = kiln.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 9223372036854775807>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = kiln.pad %x {pads = array<i64: 0, 0, 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = kiln.reduce_sum %x {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Checks that ops that change something do not fold: a real transpose, a
// partial slice, a widening cast.
// CHECK-LABEL: func @not_identities
// CHECK: kiln.transpose
// CHECK: kiln.slice
// CHECK: kiln.cast
func.func @not_identities(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x2xf64>) {
  %0 = kiln.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = kiln.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 2, 2>, steps = array<i64: 1, 1>} : (tensor<2x2xf32>) -> tensor<1x2xf32>
  %2 = kiln.cast %x : tensor<2x2xf32> to tensor<2x2xf64>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x2xf64>
}

// -----

// Checks that a reshape of a constant becomes a constant.
// CHECK-LABEL: func @reshape_constant
// CHECK-NOT: kiln.reshape
// CHECK: kiln.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi64>
func.func @reshape_constant() -> tensor<2x2xi64> {
  %c = kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %0 = kiln.reshape %c {shape = array<i64: 2, 2>} : (tensor<4xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

// Checks that two transposes compose into one.
// CHECK-LABEL: func @compose_transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = kiln.transpose %[[X]] {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[T]]
func.func @compose_transposes(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.transpose %x {permutation = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = kiln.transpose %0 {permutation = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// Checks that a transpose and its inverse cancel.
// CHECK-LABEL: func @inverse_transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.transpose
// CHECK: return %[[X]]
func.func @inverse_transposes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = kiln.transpose %0 {permutation = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Checks that two reshapes compose, resolving a copied dim through the
// intermediate's static size.
// CHECK-LABEL: func @compose_reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.*]] = kiln.reshape %[[X]] {shape = array<i64: 6, 2, 2>} : (tensor<2x3x4xf32>) -> tensor<6x2x2xf32>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[R]]
func.func @compose_reshapes(%x: tensor<2x3x4xf32>) -> tensor<6x2x2xf32> {
  %0 = kiln.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = kiln.reshape %0 {shape = array<i64: 0, 2, 2>} : (tensor<6x4xf32>) -> tensor<6x2x2xf32>
  return %1 : tensor<6x2x2xf32>
}

// -----

// Checks that reshapes that copy a dynamic batch dim still compose.
// CHECK-LABEL: func @compose_dynamic_reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<?x128x768xf32>)
// CHECK: kiln.reshape %[[X]] {shape = array<i64: 0, 128, 12, 64>}
// CHECK-NOT: kiln.reshape
func.func @compose_dynamic_reshapes(%x: tensor<?x128x768xf32>) -> tensor<?x128x12x64xf32> {
  %0 = kiln.reshape %x {shape = array<i64: 0, 128, 768>} : (tensor<?x128x768xf32>) -> tensor<?x128x768xf32>
  %1 = kiln.reshape %0 {shape = array<i64: 0, 128, 12, 64>} : (tensor<?x128x768xf32>) -> tensor<?x128x12x64xf32>
  return %1 : tensor<?x128x12x64xf32>
}

// -----

// Checks that reshapes do not compose when a copied dynamic dim would
// refer to a different source dim.
// CHECK-LABEL: func @dynamic_reshapes_stay
// CHECK: kiln.reshape
// CHECK: kiln.reshape
func.func @dynamic_reshapes_stay(%x: tensor<4x?xf32>) -> tensor<?x2xf32> {
  %0 = kiln.reshape %x {shape = array<i64: -1, 2>} : (tensor<4x?xf32>) -> tensor<?x2xf32>
  %1 = kiln.reshape %0 {shape = array<i64: 0, 2>} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %1 : tensor<?x2xf32>
}

// -----

// Checks that x + 0 does not fold when a dynamic dim of x could be 1 at run
// time and be stretched by the zero.
// CHECK-LABEL: func @dynamic_identity_stays
// CHECK: kiln.add
func.func @dynamic_identity_stays(%x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.add %x, %zero : (tensor<?xf32>, tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Checks that x + 0 folds when the zero broadcasts into a dynamic x without
// stretching it.
// CHECK-LABEL: func @dynamic_identity_folds
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NOT: kiln.add
// CHECK: return %[[X]]
func.func @dynamic_identity_folds(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %zero = kiln.constant dense<0.0> : tensor<1x4xf32>
  %0 = kiln.add %x, %zero : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Checks that arithmetic on constants folds across broadcasting, integer
// division by zero included (0, as the lowering gives at run time).
// CHECK-LABEL: func @broadcast_constants
// CHECK-DAG: kiln.constant dense<[11, 22, 33]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<[2, 4, 6]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<[0, 2, 3]> : tensor<3xi64>
// CHECK-NOT: kiln.div
// CHECK-NOT: kiln.add
// CHECK-NOT: kiln.mul
func.func @broadcast_constants() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) {
  %a = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  %ten = kiln.constant dense<10> : tensor<i64>
  %two = kiln.constant dense<[2]> : tensor<1xi64>
  %zero = kiln.constant dense<[0, 1, 1]> : tensor<3xi64>
  %m = kiln.mul %a, %ten : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %s = kiln.add %m, %a : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %d = kiln.mul %a, %two : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi64>
  %z = kiln.div %a, %zero : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %s, %d, %z : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>
}

// -----

// Checks that comparisons, select and cast fold on constants, with NaN
// comparing unordered.
// CHECK-LABEL: func @compare_select_cast
// CHECK-DAG: kiln.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-DAG: kiln.constant dense<true> : tensor<3xi1>
// CHECK-DAG: kiln.constant dense<[5.000000e+00, 2.000000e+00, 5.000000e+00]> : tensor<3xf32>
// CHECK-DAG: kiln.constant dense<[1, -2, 0]> : tensor<3xi32>
// CHECK-NOT: kiln.compare
// CHECK-NOT: kiln.select
// CHECK-NOT: kiln.cast
func.func @compare_select_cast() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xf32>, tensor<3xi32>) {
  %a = kiln.constant dense<[1.0, 2.0, 0x7FC00000]> : tensor<3xf32>
  %b = kiln.constant dense<[1.5, -2.5, 0.0]> : tensor<3xf32>
  %lt = kiln.compare gt, %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %ne = kiln.compare ne, %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %five = kiln.constant dense<5.0> : tensor<f32>
  %s = kiln.select %lt, %a, %five : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %c = kiln.cast %b : tensor<3xf32> to tensor<3xi32>
  return %lt, %ne, %s, %c : tensor<3xi1>, tensor<3xi1>, tensor<3xf32>, tensor<3xi32>
}

// -----

// Checks that a cast of NaN to an integer is not folded (undefined).
// CHECK-LABEL: func @cast_nan_stays
// CHECK: kiln.cast
func.func @cast_nan_stays() -> tensor<1xi32> {
  %a = kiln.constant dense<[0x7FC00000]> : tensor<1xf32>
  %c = kiln.cast %a : tensor<1xf32> to tensor<1xi32>
  return %c : tensor<1xi32>
}

// -----

// Checks that data movement on constants folds: gather (with a negative
// index), concat, slice (reversed), transpose and expand.
// CHECK-LABEL: func @data_movement_constants
// CHECK-DAG: kiln.constant dense<[30, 10]> : tensor<2xi64>
// CHECK-DAG: kiln.constant dense<[10, 20, 30, 7]> : tensor<4xi64>
// CHECK-DAG: kiln.constant dense<[30, 20, 10]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<{{\[\[}}1, 3], [2, 4]]> : tensor<2x2xi64>
// CHECK-DAG: kiln.constant dense<{{\[\[}}10, 20, 30], [10, 20, 30]]> : tensor<2x3xi64>
// CHECK-NOT: kiln.gather
// CHECK-NOT: kiln.concat
// CHECK-NOT: kiln.slice
// CHECK-NOT: kiln.transpose
// CHECK-NOT: kiln.expand
func.func @data_movement_constants() -> (tensor<2xi64>, tensor<4xi64>, tensor<3xi64>, tensor<2x2xi64>, tensor<2x3xi64>) {
  %a = kiln.constant dense<[10, 20, 30]> : tensor<3xi64>
  %i = kiln.constant dense<[-1, 0]> : tensor<2xi64>
  %g = kiln.gather %a, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %seven = kiln.constant dense<[7]> : tensor<1xi64>
  %c = kiln.concat %a, %seven {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %r = kiln.slice %a {starts = array<i64: -1>, ends = array<i64: -9223372036854775807>, steps = array<i64: -1>} : (tensor<3xi64>) -> tensor<3xi64>
  %m = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %t = kiln.transpose %m {permutation = array<i64: 1, 0>} : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %e = kiln.expand %a {shape = array<i64: 2, 1>} : (tensor<3xi64>) -> tensor<2x3xi64>
  return %g, %c, %r, %t, %e : tensor<2xi64>, tensor<4xi64>, tensor<3xi64>, tensor<2x2xi64>, tensor<2x3xi64>
}

// -----

// Checks that a gather with an out-of-range constant index is not folded.
// CHECK-LABEL: func @gather_out_of_range_stays
// CHECK: kiln.gather
func.func @gather_out_of_range_stays() -> tensor<1xi64> {
  %a = kiln.constant dense<[10, 20, 30]> : tensor<3xi64>
  %i = kiln.constant dense<[3]> : tensor<1xi64>
  %g = kiln.gather %a, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %g : tensor<1xi64>
}

// -----

// Checks that unsigned integers fold with unsigned comparison (255 < 1 is
// false, not -1 < 1), division and casts.
// CHECK-LABEL: func @unsigned_constants
// CHECK-DAG: kiln.constant dense<false> : tensor<2xi1>
// CHECK-DAG: kiln.constant dense<[127, 1]> : tensor<2xui8>
// CHECK-DAG: kiln.constant dense<[2.550000e+02, 2.000000e+00]> : tensor<2xf32>
func.func @unsigned_constants() -> (tensor<2xi1>, tensor<2xui8>, tensor<2xf32>) {
  %a = kiln.constant dense<[255, 2]> : tensor<2xui8>
  %b = kiln.constant dense<[1, 2]> : tensor<2xui8>
  %two = kiln.constant dense<2> : tensor<ui8>
  %lt = kiln.compare lt, %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xi1>
  %d = kiln.div %a, %two : (tensor<2xui8>, tensor<ui8>) -> tensor<2xui8>
  %f = kiln.cast %a : tensor<2xui8> to tensor<2xf32>
  return %lt, %d, %f : tensor<2xi1>, tensor<2xui8>, tensor<2xf32>
}

// -----

// Checks that dropout is the identity outside a training step (the
// training step replaces it before anything folds).
// CHECK-LABEL: func @dropout
// CHECK-NEXT: return %arg0
func.func @dropout(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.dropout %x {ratio = 2.500000e-01 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Checks that transpose(matmul(transpose(x), dy)) (a weight gradient)
// becomes matmul(transpose(dy), x): one transpose instead of two.
// CHECK-LABEL: func @transpose_matmul
// CHECK: %[[T:.*]] = kiln.transpose %arg1 {permutation = array<i64: 1, 0>} : (tensor<8x32xf32>) -> tensor<32x8xf32>
// CHECK: %[[M:.*]] = kiln.matmul %[[T]], %arg0 : (tensor<32x8xf32>, tensor<8x64xf32>) -> tensor<32x64xf32>
// CHECK: return %[[M]]
func.func @transpose_matmul(%x: tensor<8x64xf32>, %dy: tensor<8x32xf32>) -> tensor<32x64xf32> {
  %xt = kiln.transpose %x {permutation = array<i64: 1, 0>} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  %m = kiln.matmul %xt, %dy : (tensor<64x8xf32>, tensor<8x32xf32>) -> tensor<64x32xf32>
  %t = kiln.transpose %m {permutation = array<i64: 1, 0>} : (tensor<64x32xf32>) -> tensor<32x64xf32>
  return %t : tensor<32x64xf32>
}

// -----

// Checks that a transposed matmul of plain operands stays (the rewrite
// would transpose both operands instead of the result).
// CHECK-LABEL: func @transpose_matmul_plain
// CHECK: kiln.matmul %arg0, %arg1
// CHECK: kiln.transpose
func.func @transpose_matmul_plain(%a: tensor<8x64xf32>, %b: tensor<64x32xf32>) -> tensor<32x8xf32> {
  %m = kiln.matmul %a, %b : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %t = kiln.transpose %m {permutation = array<i64: 1, 0>} : (tensor<8x32xf32>) -> tensor<32x8xf32>
  return %t : tensor<32x8xf32>
}

// -----

// Checks that shape_of of a static tensor folds to its dims, and of a
// dynamic one does not.
// CHECK-LABEL: func @shape_of
// CHECK: %[[C:.*]] = kiln.constant dense<[2, 3]> : tensor<2xi64>
// CHECK: %[[D:.*]] = kiln.shape_of %{{.*}} : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK: return %[[C]], %[[D]]
func.func @shape_of(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<2xi64>) {
  %0 = kiln.shape_of %x : (tensor<2x3xf32>) -> tensor<2xi64>
  %1 = kiln.shape_of %y : (tensor<?x3xf32>) -> tensor<2xi64>
  return %0, %1 : tensor<2xi64>, tensor<2xi64>
}

// -----

// Checks that rem, max and min of constants fold (shape arithmetic stays
// static), rem keeping the dividend's sign, rem by zero giving 0 (as the
// lowering does at run time).
// CHECK-LABEL: func @rem_max_min
// CHECK-DAG: kiln.constant dense<[1, -1, 0]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<[7, -3, 4]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<[3, -7, 0]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<[1.500000e+00, -5.000000e-01]> : tensor<2xf32>
// CHECK-DAG: kiln.constant dense<0> : tensor<1xi64>
// CHECK-NOT: kiln.rem
// CHECK-NOT: kiln.max
// CHECK-NOT: kiln.min
func.func @rem_max_min() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2xf32>, tensor<1xi64>) {
  %a = kiln.constant dense<[7, -7, 4]> : tensor<3xi64>
  %b = kiln.constant dense<[3, -3, 0]> : tensor<3xi64>
  %c = kiln.constant dense<[3, 2, 2]> : tensor<3xi64>
  %fa = kiln.constant dense<[5.5, -4.5]> : tensor<2xf32>
  %fb = kiln.constant dense<[2.0, 2.0]> : tensor<2xf32>
  %z = kiln.constant dense<[0]> : tensor<1xi64>
  %one = kiln.constant dense<[5]> : tensor<1xi64>
  %0 = kiln.rem %a, %c : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = kiln.max %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %2 = kiln.min %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %3 = kiln.rem %fa, %fb : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %4 = kiln.rem %one, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %0, %1, %2, %3, %4 : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2xf32>, tensor<1xi64>
}

// -----

// Checks that the signed INT_MIN / -1 folds to INT_MIN and INT_MIN % -1 to
// 0 (the wrapped results the lowering gives; the instruction would trap),
// and that unsigned division by zero folds to 0.
// CHECK-LABEL: func @division_overflow
// CHECK-DAG: %[[Q:.*]] = kiln.constant dense<[-128, 64, -2]> : tensor<3xi8>
// CHECK-DAG: %[[R:.*]] = kiln.constant dense<[0, 0, -1]> : tensor<3xi8>
// CHECK-DAG: %[[U:.*]] = kiln.constant dense<[0, 100]> : tensor<2xui8>
// CHECK-NOT: kiln.div
// CHECK-NOT: kiln.rem
// CHECK: return %[[Q]], %[[R]], %[[U]]
func.func @division_overflow() -> (tensor<3xi8>, tensor<3xi8>, tensor<2xui8>) {
  %a = kiln.constant dense<[-128, -128, -7]> : tensor<3xi8>
  %b = kiln.constant dense<[-1, -2, 3]> : tensor<3xi8>
  %u = kiln.constant dense<[200, 200]> : tensor<2xui8>
  %v = kiln.constant dense<[0, 2]> : tensor<2xui8>
  %q = kiln.div %a, %b : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  %r = kiln.rem %a, %b : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  %w = kiln.div %u, %v : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  return %q, %r, %w : tensor<3xi8>, tensor<3xi8>, tensor<2xui8>
}

// -----

// Checks that logical ops on boolean constants fold, with broadcasting.
// CHECK-LABEL: func @logical
// CHECK-DAG: kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: kiln.constant dense<true> : tensor<2xi1>
// CHECK-DAG: kiln.constant dense<[false, true]> : tensor<2xi1>
// CHECK-NOT: kiln.and
// CHECK-NOT: kiln.or
// CHECK-NOT: kiln.xor
func.func @logical() -> (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) {
  %a = kiln.constant dense<[true, false]> : tensor<2xi1>
  %t = kiln.constant dense<true> : tensor<i1>
  %0 = kiln.and %a, %t : (tensor<2xi1>, tensor<i1>) -> tensor<2xi1>
  %1 = kiln.or %a, %t : (tensor<2xi1>, tensor<i1>) -> tensor<2xi1>
  %2 = kiln.xor %a, %t : (tensor<2xi1>, tensor<i1>) -> tensor<2xi1>
  return %0, %1, %2 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
}

// -----

// Checks that not of a boolean constant folds (the expanded form of
// Attention-23 decides its key/value head repeat through Not and Where).
// CHECK-LABEL: func @not_constant
// CHECK: kiln.constant dense<[false, true]> : tensor<2xi1>
// CHECK-NOT: kiln.not
func.func @not_constant() -> tensor<2xi1> {
  %a = kiln.constant dense<[true, false]> : tensor<2xi1>
  %0 = kiln.not %a : (tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}
