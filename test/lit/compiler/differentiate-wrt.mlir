// RUN: kiln-opt %s --kiln-differentiate="wrt=1" --verify-diagnostics

// A wrt argument that cannot have a gradient is an error naming it.
// expected-error @+1 {{argument 'i' is not a float tensor; it has no gradient}}
func.func @main(%a: tensor<3xf32> {kiln.name = "a"}, %i: tensor<3xi64> {kiln.name = "i"}) -> (tensor<3xf32> {kiln.name = "y"}) {
  %0 = kiln.neg %a : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
