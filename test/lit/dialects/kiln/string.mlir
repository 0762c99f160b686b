// RUN: kiln-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Checks that kiln.string round-trips and infers its result from the first
// operand's shape and `element_type`.
// CHECK-LABEL: func @kinds
// CHECK: kiln.string %arg0 {element_type = i64, kind = "lower"} : (tensor<?xi64>) -> tensor<?xi64>
// CHECK: kiln.string %arg0 {element_type = f32, kind = "parse"} : (tensor<?xi64>) -> tensor<?xf32>
// CHECK: kiln.string %arg1 {element_type = i64, kind = "format"} : (tensor<3xf64>) -> tensor<3xi64>
// CHECK: kiln.string %arg0, %arg2 {element_type = i1, kind = "in_set_nocase"} : (tensor<?xi64>, tensor<7xi8>) -> tensor<?xi1>
// CHECK: kiln.string %arg0, %arg0 {element_type = i1, kind = "equal"} : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi1>
func.func @kinds(%s: tensor<?xi64>, %x: tensor<3xf64>, %words: tensor<7xi8>)
    -> (tensor<?xi64>, tensor<?xf32>, tensor<3xi64>, tensor<?xi1>, tensor<?xi1>) {
  %0 = kiln.string %s {kind = "lower", element_type = i64} : (tensor<?xi64>) -> tensor<?xi64>
  %1 = kiln.string %s {kind = "parse", element_type = f32} : (tensor<?xi64>) -> tensor<?xf32>
  %2 = kiln.string %x {kind = "format", element_type = i64} : (tensor<3xf64>) -> tensor<3xi64>
  %3 = kiln.string %s, %words {kind = "in_set_nocase", element_type = i1}
      : (tensor<?xi64>, tensor<7xi8>) -> tensor<?xi1>
  %4 = kiln.string %s, %s {kind = "equal", element_type = i1}
      : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi1>
  return %0, %1, %2, %3, %4 : tensor<?xi64>, tensor<?xf32>, tensor<3xi64>, tensor<?xi1>, tensor<?xi1>
}

// -----

func.func @unknown_kind(%s: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{has an unknown kind 'reverse'}}
  %0 = kiln.string %s {kind = "reverse", element_type = i64} : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @format_of_f16(%x: tensor<2xf16>) -> tensor<2xi64> {
  // expected-error @+1 {{'format' turns f32, f64 or i64 into i64 handles}}
  %0 = kiln.string %x {kind = "format", element_type = i64} : (tensor<2xf16>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @parse_to_i1(%s: tensor<2xi64>) -> tensor<2xi1> {
  // expected-error @+1 {{'parse' makes f32, f64 or i64}}
  %0 = kiln.string %s {kind = "parse", element_type = i1} : (tensor<2xi64>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @words_not_bytes(%s: tensor<2xi64>, %w: tensor<2xi64>) -> tensor<2xi1> {
  // expected-error @+1 {{'in_set' takes its text as a 1-D i8 tensor}}
  %0 = kiln.string %s, %w {kind = "in_set", element_type = i1} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @equal_shapes(%a: tensor<2xi64>, %b: tensor<3xi64>) -> tensor<2xi1> {
  // expected-error @+1 {{'equal' reads two handle tensors of the same shape}}
  %0 = kiln.string %a, %b {kind = "equal", element_type = i1} : (tensor<2xi64>, tensor<3xi64>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @lower_takes_one(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{'lower' takes 1 operand(s)}}
  %0 = kiln.string %a, %a {kind = "lower", element_type = i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}
