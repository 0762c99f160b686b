// RUN: kiln-opt %s -split-input-file -kiln-convert-to-linalg -verify-diagnostics

// Checks that ops without a lowering yet fail with their location instead
// of being left behind silently.
func.func @not_lowered(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{failed to legalize operation 'kiln.conv'}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
