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

// -----

// Checks that a topk left unexpanded breaks the graph contract.
func.func @composite(%x: tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>) {
  // expected-error @+1 {{'kiln.topk' op is left after the graph phase, whose kiln-expand-composites writes it as primitives}}
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  return %v, %i : tensor<2x2xf32>, tensor<2x2xi64>
}
