// A graph input of rank 9: more than the runtime's KILN_MAX_RANK (8).
module {
  func.func @main(%x: tensor<1x1x1x1x1x1x1x1x2xf32> {kiln.name = "deep"}) -> (tensor<1x1x1x1x1x1x1x1x2xf32> {kiln.name = "y"}) {
    %y = kiln.relu %x : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
    return %y : tensor<1x1x1x1x1x1x1x1x2xf32>
  }
}
