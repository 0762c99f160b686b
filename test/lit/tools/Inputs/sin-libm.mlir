// sin, which the CPU backend leaves to libm's sinf.
func.func @main(%x: tensor<4x32xf32> {kiln.name = "x"}) -> (tensor<4x32xf32> {kiln.name = "y"}) {
  %y = kiln.sin %x : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
