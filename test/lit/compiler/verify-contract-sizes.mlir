// RUN: kiln-opt %s -split-input-file -kiln-verify-contract=phase=graph -verify-diagnostics

// Checks that a value whose static dims hold more than 2^48 bytes is
// refused, naming the op (it used to compile into an artifact whose sizes
// wrapped: an arena of 0 KiB, a heap overwritten at run time).
func.func @main(%x: tensor<1x4xf32> {kiln.name = "x"}) -> (tensor<4611686018427387904x4xf32> {kiln.name = "y"}) {
  // expected-error @+1 {{'kiln.expand' op result 0 is 'tensor<4611686018427387904x4xf32>': more than 2^48 bytes, beyond what Kiln compiles}}
  %y = kiln.expand %x {shape = array<i64: 4611686018427387904, 4>} : (tensor<1x4xf32>) -> tensor<4611686018427387904x4xf32>
  return %y : tensor<4611686018427387904x4xf32>
}

// -----

// Checks that a graph input that large is refused too, and that a
// dynamic dim does not hide the static ones' size.
// expected-error @+1 {{'func.func' op argument 0 is 'tensor<?x281474976710656xf32>': more than 2^48 bytes, beyond what Kiln compiles}}
func.func @main(%x: tensor<?x281474976710656xf32> {kiln.name = "x"}) -> (tensor<?x281474976710656xf32> {kiln.name = "y"}) {
  return %x : tensor<?x281474976710656xf32>
}

// -----

// Checks that large but possible tensors pass (2^32 floats: 16 GiB).
func.func @main(%x: tensor<65536x65536xf32> {kiln.name = "x"}) -> (tensor<65536x65536xf32> {kiln.name = "y"}) {
  %y = kiln.relu %x : (tensor<65536x65536xf32>) -> tensor<65536x65536xf32>
  return %y : tensor<65536x65536xf32>
}
