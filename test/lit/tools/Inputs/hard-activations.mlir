// HardSwish, x * clip(x / 6 + 1/2, 0, 1), and the hard sigmoid,
// clip(alpha * x + beta, 0, 1), as the ONNX importer writes them: after a
// convolution's bias (the splat constant either operand of its mul), in a
// squeeze-excitation's gate (HardSigmoid's default alpha 0.2), after a
// linear layer's bias (x the mul's rhs), before a global average pool
// (mobilenet_v3's head); and x * clip(x / 4 + 1/2, 0, 1), which is not
// HardSwish (no library has it).
module {
  func.func @main(%x: tensor<?x8x6x6xf32> {kiln.name = "x"}, %m: tensor<?x16xf32> {kiln.name = "m"}) -> (tensor<?x4x6x6xf32> {kiln.name = "conv_hardswish"}, tensor<?x4x6x6xf32> {kiln.name = "excited"}, tensor<?x12xf32> {kiln.name = "linear_hardswish"}, tensor<?x4x6x6xf32> {kiln.name = "not_hardswish"}, tensor<?x16x1x1xf32> {kiln.name = "pooled"}) {
    %sixth = kiln.constant dense<0.166666672> : tensor<f32>
    %half = kiln.constant dense<5.000000e-01> : tensor<f32>
    %w = kiln.constant dense<0.05> : tensor<4x8x3x3xf32>
    %b = kiln.constant dense<[[[-0.5]], [[0.25]], [[0.0]], [[1.0]]]> : tensor<4x1x1xf32>
    %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<?x4x6x6xf32>
    %cb = kiln.add %c, %b : (tensor<?x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<?x4x6x6xf32>
    %h0 = kiln.mul %sixth, %cb : (tensor<f32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %h1 = kiln.add %h0, %half : (tensor<?x4x6x6xf32>, tensor<f32>) -> tensor<?x4x6x6xf32>
    %h2 = kiln.clip %h1 {max = 1.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %y = kiln.mul %cb, %h2 : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %p = kiln.reduce_mean %y {axes = array<i64: 2, 3>, keepdims = true} : (tensor<?x4x6x6xf32>) -> tensor<?x4x1x1xf32>
    %ws = kiln.constant dense<[[[[1.0]], [[-2.0]], [[0.5]], [[3.0]]], [[[-1.0]], [[2.0]], [[0.25]], [[1.0]]], [[[2.0]], [[1.0]], [[-3.0]], [[0.5]]], [[[0.0]], [[1.5]], [[1.0]], [[-1.0]]]]> : tensor<4x4x1x1xf32>
    %fifth = kiln.constant dense<2.000000e-01> : tensor<f32>
    %f = kiln.conv %p, %ws {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x1x1xf32>
    %g0 = kiln.mul %f, %fifth : (tensor<?x4x1x1xf32>, tensor<f32>) -> tensor<?x4x1x1xf32>
    %g1 = kiln.add %half, %g0 : (tensor<f32>, tensor<?x4x1x1xf32>) -> tensor<?x4x1x1xf32>
    %g = kiln.clip %g1 {max = 1.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<?x4x1x1xf32>) -> tensor<?x4x1x1xf32>
    %e = kiln.mul %g, %y : (tensor<?x4x1x1xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %wm = kiln.constant dense<0.125> : tensor<16x12xf32>
    %bm = kiln.constant dense<-0.75> : tensor<12xf32>
    %mm = kiln.matmul %m, %wm : (tensor<?x16xf32>, tensor<16x12xf32>) -> tensor<?x12xf32>
    %mb = kiln.add %mm, %bm : (tensor<?x12xf32>, tensor<12xf32>) -> tensor<?x12xf32>
    %l0 = kiln.mul %mb, %sixth : (tensor<?x12xf32>, tensor<f32>) -> tensor<?x12xf32>
    %l1 = kiln.add %l0, %half : (tensor<?x12xf32>, tensor<f32>) -> tensor<?x12xf32>
    %l2 = kiln.clip %l1 {max = 1.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<?x12xf32>) -> tensor<?x12xf32>
    %ly = kiln.mul %l2, %mb : (tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x12xf32>
    %quarter = kiln.constant dense<2.500000e-01> : tensor<f32>
    %w2 = kiln.constant dense<-0.03> : tensor<4x8x3x3xf32>
    %c2 = kiln.conv %x, %w2 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<?x4x6x6xf32>
    %n0 = kiln.mul %c2, %quarter : (tensor<?x4x6x6xf32>, tensor<f32>) -> tensor<?x4x6x6xf32>
    %n1 = kiln.add %n0, %half : (tensor<?x4x6x6xf32>, tensor<f32>) -> tensor<?x4x6x6xf32>
    %n2 = kiln.clip %n1 {max = 1.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %ny = kiln.mul %c2, %n2 : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
    %w3 = kiln.constant dense<0.07> : tensor<16x8x1x1xf32>
    %b3 = kiln.constant dense<[[[-0.5]], [[0.25]], [[0.0]], [[1.0]], [[-0.5]], [[0.25]], [[0.0]], [[1.0]], [[-0.5]], [[0.25]], [[0.0]], [[1.0]], [[-0.5]], [[0.25]], [[0.0]], [[1.0]]]> : tensor<16x1x1xf32>
    %c3 = kiln.conv %x, %w3 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<16x8x1x1xf32>) -> tensor<?x16x6x6xf32>
    %c3b = kiln.add %c3, %b3 : (tensor<?x16x6x6xf32>, tensor<16x1x1xf32>) -> tensor<?x16x6x6xf32>
    %k0 = kiln.mul %c3b, %sixth : (tensor<?x16x6x6xf32>, tensor<f32>) -> tensor<?x16x6x6xf32>
    %k1 = kiln.add %k0, %half : (tensor<?x16x6x6xf32>, tensor<f32>) -> tensor<?x16x6x6xf32>
    %k2 = kiln.clip %k1 {max = 1.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<?x16x6x6xf32>) -> tensor<?x16x6x6xf32>
    %k = kiln.mul %c3b, %k2 : (tensor<?x16x6x6xf32>, tensor<?x16x6x6xf32>) -> tensor<?x16x6x6xf32>
    %pooled = kiln.reduce_mean %k {axes = array<i64: 2, 3>, keepdims = true} : (tensor<?x16x6x6xf32>) -> tensor<?x16x1x1xf32>
    return %y, %e, %ly, %ny, %pooled : tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>, tensor<?x12xf32>, tensor<?x4x6x6xf32>, tensor<?x16x1x1xf32>
  }
}
