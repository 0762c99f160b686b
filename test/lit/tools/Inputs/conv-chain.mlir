// Three convolutions: the second adds the first's output (a residual),
// the third's output is the graph's output.
module {
  func.func @main(%arg0: tensor<?x16x8x8xf32> {kiln.name = "x"}) -> (tensor<?x16x8x8xf32> {kiln.name = "y"}) {
    %w = kiln.constant dense<0.01> : tensor<16x16x3x3xf32>
    %0 = kiln.conv %arg0, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<?x16x8x8xf32>
    %1 = kiln.relu %0 : (tensor<?x16x8x8xf32>) -> tensor<?x16x8x8xf32>
    %2 = kiln.conv %1, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<?x16x8x8xf32>
    %3 = kiln.add %2, %1 : (tensor<?x16x8x8xf32>, tensor<?x16x8x8xf32>) -> tensor<?x16x8x8xf32>
    %4 = kiln.relu %3 : (tensor<?x16x8x8xf32>) -> tensor<?x16x8x8xf32>
    %5 = kiln.conv %4, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<?x16x8x8xf32>
    return %5 : tensor<?x16x8x8xf32>
  }
}
