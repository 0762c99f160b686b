// RUN: kiln-opt %s --kiln-differentiate --mlir-print-debuginfo | FileCheck %s

// Every op the backward pass adds carries the mark "kiln.backward" around
// the location of the forward op it differentiates; the forward ops keep
// theirs.
// CHECK: #[[FWD:loc[0-9]+]] = loc("y")
// CHECK-LABEL: func.func @main(
// CHECK: kiln.exp %arg0 {{.*}}loc(#[[FWD]])
// CHECK: kiln.mul %arg1, %{{.*}}loc(#[[BWD:loc[0-9]+]])
// CHECK: #[[BWD]] = loc("kiln.backward"(#[[FWD]]))
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "y"}) {
  %y = kiln.exp %x : (tensor<4xf32>) -> tensor<4xf32> loc("y")
  return %y : tensor<4xf32>
}
