// A model that returns nothing (its artifact would not load).
module {
  func.func @main(%x: tensor<2xf32> {kiln.name = "x"}) {
    %y = kiln.relu %x : (tensor<2xf32>) -> tensor<2xf32>
    return
  }
}
