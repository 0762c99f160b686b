func.func @f(%a: tensor<*xf32>) -> tensor<*xf32> {
  %0 = kiln.relu %a : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
