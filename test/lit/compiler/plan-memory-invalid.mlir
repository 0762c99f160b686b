// RUN: not kiln-opt %s -kiln-plan-memory=strategy=nope 2>&1 | FileCheck %s

// Checks that an unknown packing strategy is an error that names the choices.
// CHECK: unknown strategy 'nope' (greedy-by-size, best-fit-by-time, best)
func.func @any() {
  return
}
