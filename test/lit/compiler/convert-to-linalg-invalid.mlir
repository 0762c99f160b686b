// RUN: kiln-opt %s -split-input-file -kiln-convert-to-linalg -verify-diagnostics

// Checks that an op without a lowering yet fails with its location instead
// of being left behind silently: pooling over dynamic spatial dims.
func.func @dynamic_pool(%x: tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32> {
  // expected-error @+1 {{failed to legalize operation 'kiln.max_pool'}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  return %0 : tensor<1x8x?x?xf32>
}
