// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-verify-contract=phase=fuse

// Checks that an epilogue kernel that starts with its matmul passes.
func.func @epilogue(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %k = kiln.kernel epilogue(%x, %w, %b) : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x4xf32>, %c: tensor<4x3xf32>, %d: tensor<3xf32>):
    %m = kiln.matmul %a, %c : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %s = kiln.add %m, %d : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    kiln.yield %s : tensor<2x3xf32>
  }
  return %k : tensor<2x3xf32>
}

// -----

// Checks that an epilogue kernel without a convolution or matmul at its
// start breaks the fuse contract.
func.func @no_root(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.kernel' op epilogue kernel must start with a convolution or matmul}}
  %k = kiln.kernel epilogue(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = kiln.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}

// -----

// Checks that a reduction kernel without kiln.outer_dims breaks the contract.
func.func @no_outer_dims(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'kiln.kernel' op reduction kernel has no kiln.outer_dims}}
  %k = kiln.kernel reduction(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %s = kiln.softmax %a {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    kiln.yield %s : tensor<2x4xf32>
  }
  return %k : tensor<2x4xf32>
}

// -----

// Checks that the graph contract still holds after fuse.
func.func @unrefined(%x: tensor<2x4xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{'kiln.relu' op result is 'tensor<2x?xf32>' where 'tensor<2x4xf32>' is inferred}}
  %y = kiln.relu %x : (tensor<2x4xf32>) -> tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}
