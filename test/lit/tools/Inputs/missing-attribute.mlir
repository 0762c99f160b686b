func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kiln.softmax %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
