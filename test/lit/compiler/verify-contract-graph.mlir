// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-verify-contract=phase=graph

// Checks that exact result types pass.
func.func @exact(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = kiln.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that a `?` where inference knows the size breaks the graph contract.
func.func @unrefined(%x: tensor<2x4xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{'kiln.relu' op result is 'tensor<2x?xf32>' where 'tensor<2x4xf32>' is inferred: the graph phase refines every inferable dim}}
  %y = kiln.relu %x : (tensor<2x4xf32>) -> tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}

// -----

// Checks that a transposed convolution left unexpanded breaks the graph
// contract.
func.func @composite(%x: tensor<1x2x3xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x3x5xf32> {
  // expected-error @+1 {{'kiln.conv_transpose' op is left after the graph phase, whose kiln-expand-composites writes it as primitives}}
  %y = kiln.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>,
                                   dilations = array<i64: 1>, output_padding = array<i64: 0>,
                                   groups = 1 : i64}
      : (tensor<1x2x3xf32>, tensor<2x3x3xf32>) -> tensor<1x3x5xf32>
  return %y : tensor<1x3x5xf32>
}
