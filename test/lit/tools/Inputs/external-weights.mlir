// kiln IR whose weights are in a file beside it (docs/Contracts.md): w (128
// floats) at offset 0, b (2 floats, unused) at 512.
module attributes {kiln.weights_file = "model.weights",
                   kiln.weights = {"w" = array<i64: 0, 512>, "b" = array<i64: 512, 8>}} {
  func.func @main(%x: tensor<2x128xf32> {kiln.name = "x"}) -> (tensor<2x128xf32> {kiln.name = "y"}) {
    %w = "kiln.constant"() <{value = dense_resource<w> : tensor<128xf32>}> : () -> tensor<128xf32>
    %b = "kiln.constant"() <{value = dense_resource<b> : tensor<2xf32>}> : () -> tensor<2xf32>
    %y = "kiln.mul"(%x, %w) : (tensor<2x128xf32>, tensor<128xf32>) -> tensor<2x128xf32>
    return %y : tensor<2x128xf32>
  }
}
