// exp, tanh, erf and log on their own and exp inside a softmax's row loop
// (a vectorised row loop): the functions kiln-approximate-math expands.
func.func @main(%x: tensor<6x32xf32> {kiln.name = "x"})
    -> (tensor<6x32xf32> {kiln.name = "exp"}, tensor<6x32xf32> {kiln.name = "tanh"},
        tensor<6x32xf32> {kiln.name = "erf"}, tensor<6x32xf32> {kiln.name = "log"},
        tensor<6x32xf32> {kiln.name = "softmax"}) {
  %e = kiln.exp %x : (tensor<6x32xf32>) -> tensor<6x32xf32>
  %t = kiln.tanh %x : (tensor<6x32xf32>) -> tensor<6x32xf32>
  %r = kiln.erf %x : (tensor<6x32xf32>) -> tensor<6x32xf32>
  %l = kiln.log %x : (tensor<6x32xf32>) -> tensor<6x32xf32>
  %s = kiln.softmax %x {axis = 1 : i64} : (tensor<6x32xf32>) -> tensor<6x32xf32>
  return %e, %t, %r, %l, %s
      : tensor<6x32xf32>, tensor<6x32xf32>, tensor<6x32xf32>, tensor<6x32xf32>, tensor<6x32xf32>
}
