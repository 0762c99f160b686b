// A convolution, pools (a max pool in ceil mode among them), a residual,
// a squeezenet fire module's concat of two convolutions, a global average
// pool and a squeeze-excitation's channel scale over an image whose batch
// and spatial dims are known only at run time: oneDNN runs each, with a
// primitive per input shape (the last max pool, unpadded, leaves the last
// row or column unread at some sizes: a negative high padding).
module {
  func.func @main(%arg0: tensor<?x8x?x?xf32> {kiln.name = "x"}) -> (tensor<?x8x?x?xf32> {kiln.name = "max"}, tensor<?x8x?x?xf32> {kiln.name = "avg"}, tensor<?x8x?x?xf32> {kiln.name = "res"}, tensor<?x8x?x?xf32> {kiln.name = "ceil"}, tensor<?x8x?x?xf32> {kiln.name = "cat"}, tensor<?x8x1x1xf32> {kiln.name = "gap"}, tensor<?x8x?x?xf32> {kiln.name = "se"}, tensor<?x8x?x?xf32> {kiln.name = "floor"}) {
    %w = kiln.constant dense<0.02> : tensor<8x8x3x3xf32>
    %w2 = kiln.constant dense<-0.03> : tensor<8x8x1x1xf32>
    %c = kiln.conv %arg0, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
    %r = kiln.relu %c : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
    %m = kiln.max_pool %r {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
    %a = kiln.avg_pool %arg0 {kernel_shape = array<i64: 2, 3>, strides = array<i64: 1, 2>, pads = array<i64: 1, 0, 0, 2>, dilations = array<i64: 1, 1>, count_include_pad = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
    %p = kiln.conv %m, %w2 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
    %s = kiln.add %p, %m : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
    %cm = kiln.max_pool %arg0 {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
    %we1 = kiln.constant dense<0.05> : tensor<4x8x1x1xf32>
    %we3 = kiln.constant dense<-0.01> : tensor<4x8x3x3xf32>
    %c1 = kiln.conv %arg0, %we1 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x8x?x?xf32>, tensor<4x8x1x1xf32>) -> tensor<?x4x?x?xf32>
    %e1 = kiln.relu %c1 : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %c3 = kiln.conv %arg0, %we3 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x8x?x?xf32>, tensor<4x8x3x3xf32>) -> tensor<?x4x?x?xf32>
    %e3 = kiln.relu %c3 : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %w8 = kiln.constant dense<0.04> : tensor<8x8x1x1xf32>
    %c1e = kiln.conv %arg0, %w8 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
    %cat = kiln.concat %e1, %e3 {axis = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x8x?x?xf32>
    %gap = kiln.reduce_mean %arg0 {axes = array<i64: 2, 3>, keepdims = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x1x1xf32>
    %sg = kiln.sigmoid %gap : (tensor<?x8x1x1xf32>) -> tensor<?x8x1x1xf32>
    %se = kiln.mul %c1e, %sg : (tensor<?x8x?x?xf32>, tensor<?x8x1x1xf32>) -> tensor<?x8x?x?xf32>
    %fm = kiln.max_pool %arg0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
    return %m, %a, %s, %cm, %cat, %gap, %se, %fm : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x1x1xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>
  }
}
