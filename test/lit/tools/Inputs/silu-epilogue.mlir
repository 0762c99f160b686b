// SiLU, x * sigmoid(x), after a convolution's bias, a linear layer's
// bias, and a convolution whose output the model also returns (that one's
// SiLU reads a value with a third user: not an epilogue).
module {
  func.func @main(%x: tensor<?x8x6x6xf32> {kiln.name = "x"}, %m: tensor<?x16xf32> {kiln.name = "m"}) -> (tensor<?x4x6x6xf32> {kiln.name = "conv_silu"}, tensor<?x12xf32> {kiln.name = "linear_silu"}, tensor<?x4x6x6xf32> {kiln.name = "shared"}, tensor<?x4x6x6xf32> {kiln.name = "pre"}) {
    %w = kiln.constant dense<0.05> : tensor<4x8x3x3xf32>
    %b = kiln.constant dense<[[[-0.5]], [[0.25]], [[0.0]], [[1.0]]]> : tensor<4x1x1xf32>
    %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<?x4x6x6xf32>
    %cb = kiln.add %c, %b : (tensor<?x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<?x4x6x6xf32>
    %s = kiln.sigmoid %cb : (tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %y = kiln.mul %cb, %s : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %w2 = kiln.constant dense<-0.03> : tensor<4x8x3x3xf32>
    %wm = kiln.constant dense<0.125> : tensor<16x12xf32>
    %bm = kiln.constant dense<-0.75> : tensor<12xf32>
    %mm = kiln.matmul %m, %wm : (tensor<?x16xf32>, tensor<16x12xf32>) -> tensor<?x12xf32>
    %mb = kiln.add %mm, %bm : (tensor<?x12xf32>, tensor<12xf32>) -> tensor<?x12xf32>
    %ms = kiln.sigmoid %mb : (tensor<?x12xf32>) -> tensor<?x12xf32>
    %my = kiln.mul %ms, %mb : (tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x12xf32>
    %c2 = kiln.conv %x, %w2 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<?x4x6x6xf32>
    %s2 = kiln.sigmoid %c2 : (tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %y2 = kiln.mul %c2, %s2 : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    return %y, %my, %y2, %c2 : tensor<?x4x6x6xf32>, tensor<?x12xf32>, tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>
  }
}
