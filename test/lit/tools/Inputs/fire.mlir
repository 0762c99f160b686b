// A squeezenet-style fire module: a squeeze convolution, two expand
// convolutions joined by a concat that a convolution and a max pool read,
// then a global average pool (reduce_mean over H and W). Also: a concat
// of a graph input and a convolution's output (mixed layouts), one of
// three inputs, one along H (stays generated code).
module {
  func.func @main(%x: tensor<?x16x8x8xf32> {kiln.name = "x"}) -> (tensor<?x16x1x1xf32> {kiln.name = "gap"}, tensor<?x24x4x4xf32> {kiln.name = "pooled"}, tensor<?x28x8x8xf32> {kiln.name = "mixed"}, tensor<?x36x8x8xf32> {kiln.name = "triple"}, tensor<?x16x16x8xf32> {kiln.name = "rows"}) {
    %ws = kiln.constant dense<0.05> : tensor<8x16x1x1xf32>
    %w1 = kiln.constant dense<0.02> : tensor<12x8x1x1xf32>
    %w3 = kiln.constant dense<-0.01> : tensor<12x8x3x3xf32>
    %wn = kiln.constant dense<0.03> : tensor<16x24x3x3xf32>
    %s0 = kiln.conv %x, %ws {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x16x8x8xf32>, tensor<8x16x1x1xf32>) -> tensor<?x8x8x8xf32>
    %s = kiln.relu %s0 : (tensor<?x8x8x8xf32>) -> tensor<?x8x8x8xf32>
    %e1 = kiln.conv %s, %w1 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x8x8x8xf32>, tensor<12x8x1x1xf32>) -> tensor<?x12x8x8xf32>
    %e3 = kiln.conv %s, %w3 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x8x8x8xf32>, tensor<12x8x3x3xf32>) -> tensor<?x12x8x8xf32>
    %c = kiln.concat %e1, %e3 {axis = 1 : i64} : (tensor<?x12x8x8xf32>, tensor<?x12x8x8xf32>) -> tensor<?x24x8x8xf32>
    %n = kiln.conv %c, %wn {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x24x8x8xf32>, tensor<16x24x3x3xf32>) -> tensor<?x16x8x8xf32>
    %gap = kiln.reduce_mean %n {axes = array<i64: 2, 3>, keepdims = true} : (tensor<?x16x8x8xf32>) -> tensor<?x16x1x1xf32>
    %p = kiln.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x24x8x8xf32>) -> tensor<?x24x4x4xf32>
    %mixed = kiln.concat %x, %e1 {axis = 1 : i64} : (tensor<?x16x8x8xf32>, tensor<?x12x8x8xf32>) -> tensor<?x28x8x8xf32>
    %triple = kiln.concat %e1, %e3, %e1 {axis = 1 : i64} : (tensor<?x12x8x8xf32>, tensor<?x12x8x8xf32>, tensor<?x12x8x8xf32>) -> tensor<?x36x8x8xf32>
    %rows = kiln.concat %x, %x {axis = 2 : i64} : (tensor<?x16x8x8xf32>, tensor<?x16x8x8xf32>) -> tensor<?x16x16x8xf32>
    return %gap, %p, %mixed, %triple, %rows : tensor<?x16x1x1xf32>, tensor<?x24x4x4xf32>, tensor<?x28x8x8xf32>, tensor<?x36x8x8xf32>, tensor<?x16x16x8xf32>
  }
}
