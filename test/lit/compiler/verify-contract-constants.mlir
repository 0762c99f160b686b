// RUN: kiln-opt %s -split-input-file -kiln-verify-contract=phase=plan -verify-diagnostics

// Checks that a constant too large for an artifact (a ConstantOfShape of
// 10^11 elements returned as an output) is refused by name after the plan
// phase; it used to make code generation write it out byte by byte (the
// compile never finished).
// expected-error @+1 {{'memref.global' op is a constant 'memref<100000x1000000xf32>' (from the model's constants, 400000000000 bytes): an artifact stores at most 2^31 bytes per constant}}
memref.global "private" constant @big : memref<100000x1000000xf32> = dense<1.0>
func.func @main() attributes {kiln.memory_plan = {arena_bytes = 0 : i64}} {
  return
}

// -----

// Checks that a large constant within the limit passes.
memref.global "private" constant @fine : memref<1024x1024xf32> = dense<1.0>
func.func @main() attributes {kiln.memory_plan = {arena_bytes = 0 : i64}} {
  return
}
