// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-verify-contract=phase=graph

// Checks that exact result types pass.
func.func @exact(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = kiln.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that a `?` where inference knows the size breaks the graph contract.
func.func @unrefined(%x: tensor<2x4xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{'kiln.relu' op result is 'tensor<2x?xf32>' where 'tensor<2x4xf32>' is inferred: the graph phase refines every inferable dim}}
  %y = kiln.relu %x : (tensor<2x4xf32>) -> tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}
