// RUN: kiln-opt %s -split-input-file -kiln-convert-to-linalg -verify-diagnostics

// Checks that an op without a lowering yet fails with its location and the
// lowering's reason instead of being left behind silently: a convolution
// whose input channels are known only at run time.
func.func @dynamic_channels(%x: tensor<1x?x8x8xf32>, %w: tensor<4x?x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{kiln.conv is not lowered: input channels or a kernel size known only at run time are not lowered yet}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x?x8x8xf32>, tensor<4x?x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// An edge pad of a dim that is empty when compiling, into a result with
// elements: there is nothing to read (it read past the buffer before).
func.func @edge_pad_of_empty(%x: tensor<0x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{kiln.pad is not lowered: reads its result from a tensor with no elements (an edge, reflect or wrap pad of an empty dim)}}
  %0 = kiln.pad %x mode edge {pads = array<i64: 1, 0, 1, 0>} : (tensor<0x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
