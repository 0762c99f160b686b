// RUN: kiln-opt %s -split-input-file -kiln-convert-to-linalg -verify-diagnostics

// Checks that an op without a lowering yet fails with its location instead
// of being left behind silently (reflect padding).
func.func @not_lowered(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{failed to legalize operation 'kiln.pad'}}
  %0 = kiln.pad %x mode reflect {pads = array<i64: 0, 1, 0, 1>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Checks that unsigned element types are refused rather than lowered with
// signed semantics.
func.func @unsigned_add(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{failed to legalize operation 'kiln.add'}}
  %0 = kiln.add %x, %x : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}
