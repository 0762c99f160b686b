// A squeeze-excitation block between two convolutions: h = relu(conv(x)),
// s = sigmoid(conv(relu(conv(mean(h))))), y = conv(s * h); then the same
// scale of the graph input x (no library call produces it) and a scale of
// y by a constant (a call of its own, in y's layout).
module {
  func.func @main(%x: tensor<?x16x8x8xf32> {kiln.name = "x"}) -> (tensor<?x8x8x8xf32> {kiln.name = "y"}, tensor<?x16x8x8xf32> {kiln.name = "scaled_input"}, tensor<?x8x8x8xf32> {kiln.name = "constant_scale"}) {
    %w = kiln.constant dense<0.02> : tensor<16x16x3x3xf32>
    %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<?x16x8x8xf32>
    %h = kiln.relu %c : (tensor<?x16x8x8xf32>) -> tensor<?x16x8x8xf32>
    %p = kiln.reduce_mean %h {axes = array<i64: 2, 3>, keepdims = true} : (tensor<?x16x8x8xf32>) -> tensor<?x16x1x1xf32>
    %w1 = kiln.constant dense<0.1> : tensor<4x16x1x1xf32>
    %f1 = kiln.conv %p, %w1 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x16x1x1xf32>, tensor<4x16x1x1xf32>) -> tensor<?x4x1x1xf32>
    %r1 = kiln.relu %f1 : (tensor<?x4x1x1xf32>) -> tensor<?x4x1x1xf32>
    %w2 = kiln.constant dense<-0.3> : tensor<16x4x1x1xf32>
    %f2 = kiln.conv %r1, %w2 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<16x4x1x1xf32>) -> tensor<?x16x1x1xf32>
    %s = kiln.sigmoid %f2 : (tensor<?x16x1x1xf32>) -> tensor<?x16x1x1xf32>
    %e = kiln.mul %s, %h : (tensor<?x16x1x1xf32>, tensor<?x16x8x8xf32>) -> tensor<?x16x8x8xf32>
    %w3 = kiln.constant dense<0.05> : tensor<8x16x1x1xf32>
    %y = kiln.conv %e, %w3 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x16x8x8xf32>, tensor<8x16x1x1xf32>) -> tensor<?x8x8x8xf32>
    %xi = kiln.mul %x, %s : (tensor<?x16x8x8xf32>, tensor<?x16x1x1xf32>) -> tensor<?x16x8x8xf32>
    %k = kiln.constant dense<[[[[1.5]], [[-2.0]], [[0.5]], [[1.0]], [[3.0]], [[0.25]], [[-1.0]], [[2.0]]]]> : tensor<1x8x1x1xf32>
    %yk = kiln.mul %y, %k : (tensor<?x8x8x8xf32>, tensor<1x8x1x1xf32>) -> tensor<?x8x8x8xf32>
    return %y, %xi, %yk : tensor<?x8x8x8xf32>, tensor<?x16x8x8xf32>, tensor<?x8x8x8xf32>
  }
}
