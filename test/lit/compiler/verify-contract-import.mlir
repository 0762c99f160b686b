// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-verify-contract=phase=import

// Checks that a model as the import phase leaves it passes.
func.func @main(%x: tensor<?x4xf32> {kiln.name = "x"}) -> (tensor<?x4xf32> {kiln.name = "y"}) {
  %y = kiln.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// Checks that a module without @main breaks the import contract.
// expected-error @+1 {{the import phase must produce func.func @main}}
module {
  func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Checks that an argument without its model name breaks the contract.
// expected-error @+1 {{argument 0 has no kiln.name}}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.name = "y"}) {
  return %x : tensor<4xf32>
}

// -----

// Checks that a result that is not a ranked tensor breaks the contract.
// expected-error @+1 {{result 0 is 'tensor<*xf32>', not a ranked tensor}}
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<*xf32> {kiln.name = "y"}) {
  %y = tensor.cast %x : tensor<4xf32> to tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Checks that an op of another dialect breaks the contract.
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<?xf32> {kiln.name = "y"}) {
  // expected-error @+1 {{'tensor.cast' op is not a kiln op: the import phase leaves only kiln ops, func.return and func.call}}
  %y = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  return %y : tensor<?xf32>
}
