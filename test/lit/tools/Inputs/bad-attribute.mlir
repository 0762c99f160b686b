func.func @f(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  %0 = kiln.reduce_sum %a {axes = 1 : i64} : (tensor<4x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
