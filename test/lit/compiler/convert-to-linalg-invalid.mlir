// RUN: kiln-opt %s -split-input-file -kiln-convert-to-linalg -verify-diagnostics

// Checks that an op without a lowering yet fails with its location instead
// of being left behind silently: unsigned element types are refused rather
// than lowered with signed semantics.
func.func @unsigned_add(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{failed to legalize operation 'kiln.add'}}
  %0 = kiln.add %x, %x : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}
