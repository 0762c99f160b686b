// Convolutions whose outputs are joined along the channels, for the CUDA
// backend's kiln.output_into: a fire module's two expand convolutions
// (each output's only use is the concat: both written into it), a concat
// of a graph input and a convolution over 3x3 planes (the convolution's
// channels start 27 elements in: not 16-byte aligned, so it is copied),
// and a convolution whose output the model also returns (copied).
module {
  func.func @main(%x: tensor<?x16x8x8xf32> {kiln.name = "x"}, %y: tensor<?x3x3x3xf32> {kiln.name = "y"}) -> (tensor<?x24x8x8xf32> {kiln.name = "fire"}, tensor<?x8x3x3xf32> {kiln.name = "odd"}, tensor<?x8x3x3xf32> {kiln.name = "twice"}, tensor<?x5x3x3xf32> {kiln.name = "shared"}) {
    %w1 = kiln.constant dense<0.02> : tensor<12x16x1x1xf32>
    %w3 = kiln.constant dense<-0.01> : tensor<12x16x3x3xf32>
    %wy = kiln.constant dense<0.5> : tensor<5x3x1x1xf32>
    %wg = kiln.constant dense<0.25> : tensor<5x3x1x1xf32>
    %e1 = kiln.conv %x, %w1 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x16x8x8xf32>, tensor<12x16x1x1xf32>) -> tensor<?x12x8x8xf32>
    %r1 = kiln.relu %e1 : (tensor<?x12x8x8xf32>) -> tensor<?x12x8x8xf32>
    %e3 = kiln.conv %x, %w3 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x16x8x8xf32>, tensor<12x16x3x3xf32>) -> tensor<?x12x8x8xf32>
    %fire = kiln.concat %r1, %e3 {axis = 1 : i64} : (tensor<?x12x8x8xf32>, tensor<?x12x8x8xf32>) -> tensor<?x24x8x8xf32>
    %f = kiln.conv %y, %wy {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x3x3x3xf32>, tensor<5x3x1x1xf32>) -> tensor<?x5x3x3xf32>
    %odd = kiln.concat %y, %f {axis = 1 : i64} : (tensor<?x3x3x3xf32>, tensor<?x5x3x3xf32>) -> tensor<?x8x3x3xf32>
    %g = kiln.conv %y, %wg {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x3x3x3xf32>, tensor<5x3x1x1xf32>) -> tensor<?x5x3x3xf32>
    %twice = kiln.concat %g, %y {axis = 1 : i64} : (tensor<?x5x3x3xf32>, tensor<?x3x3x3xf32>) -> tensor<?x8x3x3xf32>
    return %fire, %odd, %twice, %g : tensor<?x24x8x8xf32>, tensor<?x8x3x3xf32>, tensor<?x8x3x3xf32>, tensor<?x5x3x3xf32>
  }
}
