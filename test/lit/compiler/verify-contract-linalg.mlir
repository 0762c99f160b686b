// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-verify-contract=phase=linalg

// Checks that linalg on tensors and library calls pass.
func.func @lowered(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %y = kiln.library_call 0(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Checks that a kiln op left after the linalg phase breaks its contract.
func.func @left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.relu' op is left after the linalg phase (only kiln.library_call and kiln.string may be)}}
  %y = kiln.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
