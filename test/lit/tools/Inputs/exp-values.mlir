// exp over a row (a vectorised row loop, as a softmax's) and on its own.
func.func @main(%x: tensor<4x32xf32> {kiln.name = "x"})
    -> (tensor<4x32xf32> {kiln.name = "exp"}, tensor<4x32xf32> {kiln.name = "softmax"}) {
  %e = kiln.exp %x : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %s = kiln.softmax %x {axis = 1 : i64} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %e, %s : tensor<4x32xf32>, tensor<4x32xf32>
}
