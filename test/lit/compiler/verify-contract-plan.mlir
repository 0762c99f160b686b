// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-verify-contract=phase=plan

// Checks that a bufferised function with its memory plan passes.
func.func @planned(%x: memref<4xf32>) -> memref<4xf32> attributes {kiln.memory_plan = {arena_bytes = 0 : i64}} {
  return %x : memref<4xf32>
}

// -----

// Checks that a function without a memory plan breaks the plan contract.
// expected-error @+1 {{'func.func' op has no kiln.memory_plan after the plan phase}}
func.func @unplanned(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}

// -----

// Checks that a tensor left after bufferisation breaks the plan contract.
func.func @tensor_left(%x: memref<4xf32>) -> memref<4xf32> attributes {kiln.memory_plan = {arena_bytes = 0 : i64}} {
  // expected-error @+1 {{'bufferization.to_tensor' op has a tensor ('tensor<4xf32>') after the plan phase: every value is a buffer}}
  %t = bufferization.to_tensor %x : memref<4xf32> to tensor<4xf32>
  return %x : memref<4xf32>
}
