// efficientnet's head: a convolution with a bias, SiLU, then the global
// average pool, which kiln-fuse keeps as one row loop (the SiLU its
// prologue); and the same SiLU on a convolution whose output the model
// also returns (not moved: the convolution has another user).
module {
  func.func @main(%x: tensor<?x8x6x6xf32> {kiln.name = "x"}) -> (tensor<?x16x1x1xf32> {kiln.name = "pooled"}, tensor<?x16x1x1xf32> {kiln.name = "pooled_shared"}, tensor<?x16x6x6xf32> {kiln.name = "shared"}) {
    %w = kiln.constant dense<0.05> : tensor<16x8x1x1xf32>
    %b = kiln.constant dense<[[[-0.5]], [[0.25]], [[0.0]], [[1.0]], [[-0.5]], [[0.25]], [[0.0]], [[1.0]], [[-0.5]], [[0.25]], [[0.0]], [[1.0]], [[-0.5]], [[0.25]], [[0.0]], [[1.0]]]> : tensor<16x1x1xf32>
    %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<16x8x1x1xf32>) -> tensor<?x16x6x6xf32>
    %cb = kiln.add %c, %b : (tensor<?x16x6x6xf32>, tensor<16x1x1xf32>) -> tensor<?x16x6x6xf32>
    %s = kiln.sigmoid %cb : (tensor<?x16x6x6xf32>) -> tensor<?x16x6x6xf32>
    %y = kiln.mul %cb, %s : (tensor<?x16x6x6xf32>, tensor<?x16x6x6xf32>) -> tensor<?x16x6x6xf32>
    %p = kiln.reduce_mean %y {axes = array<i64: 2, 3>, keepdims = true} : (tensor<?x16x6x6xf32>) -> tensor<?x16x1x1xf32>
    %w2 = kiln.constant dense<-0.03> : tensor<16x8x1x1xf32>
    %c2 = kiln.conv %x, %w2 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<16x8x1x1xf32>) -> tensor<?x16x6x6xf32>
    %s2 = kiln.sigmoid %c2 : (tensor<?x16x6x6xf32>) -> tensor<?x16x6x6xf32>
    %y2 = kiln.mul %s2, %c2 : (tensor<?x16x6x6xf32>, tensor<?x16x6x6xf32>) -> tensor<?x16x6x6xf32>
    %p2 = kiln.reduce_mean %y2 {axes = array<i64: 2, 3>, keepdims = true} : (tensor<?x16x6x6xf32>) -> tensor<?x16x1x1xf32>
    return %p, %p2, %c2 : tensor<?x16x1x1xf32>, tensor<?x16x1x1xf32>, tensor<?x16x6x6xf32>
  }
}
