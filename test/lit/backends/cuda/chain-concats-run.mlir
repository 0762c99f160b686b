// Concatenations chained (kiln-cuda-chain-concats) give the same numbers:
// lowered to LLVM and run with and without the chaining, a DenseNet-style
// block (each concatenation extending the one before) and one taking a
// shorter prefix then other inputs.
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | FileCheck %s --check-prefix=NUM
// RUN: kiln-opt %s --kiln-cuda-chain-concats --kiln-lower-to-llvm | %mlir-runner | FileCheck %s --check-prefix=NUM
// RUN: kiln-opt %s --kiln-cuda-chain-concats | FileCheck %s
// CHECK: %[[C1:.*]] = kiln.concat %{{.*}}, %{{.*}} {axis = 1 : i64}
// CHECK: %[[C2:.*]] = kiln.concat %[[C1]], %{{.*}} {axis = 1 : i64}
// CHECK: kiln.concat %[[C2]], %{{.*}} {axis = 1 : i64}
// CHECK: kiln.concat %[[C1]], %{{.*}}, %{{.*}} {axis = 1 : i64}

// NUM:      {{\[\[\[\[}}1,   2],
// NUM-NEXT:    [3,   4]],
// NUM-NEXT:   {{\[\[}}10,   20],
// NUM-NEXT:    [30,   40]],
// NUM-NEXT:   {{\[\[}}-1,   -2],
// NUM-NEXT:    [-3,   -4]],
// NUM-NEXT:   {{\[\[}}0.5,   0.25],
// NUM-NEXT:    [0.125,   0]]]]
// NUM:      {{\[\[\[\[}}1,   2],
// NUM-NEXT:    [3,   4]],
// NUM-NEXT:   {{\[\[}}10,   20],
// NUM-NEXT:    [30,   40]],
// NUM-NEXT:   {{\[\[}}0.5,   0.25],
// NUM-NEXT:    [0.125,   0]],
// NUM-NEXT:   {{\[\[}}-1,   -2],
// NUM-NEXT:    [-3,   -4]]]]
func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = kiln.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %f1 = kiln.constant dense<[[[[10.0, 20.0], [30.0, 40.0]]]]> : tensor<1x1x2x2xf32>
  %f2 = kiln.constant dense<[[[[-1.0, -2.0], [-3.0, -4.0]]]]> : tensor<1x1x2x2xf32>
  %f3 = kiln.constant dense<[[[[0.5, 0.25], [0.125, 0.0]]]]> : tensor<1x1x2x2xf32>
  %c1 = kiln.concat %x, %f1 {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c2 = kiln.concat %x, %f1, %f2 {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c3 = kiln.concat %x, %f1, %f2, %f3 {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x2x2xf32>
  %other = kiln.concat %x, %f1, %f3, %f2 {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x2x2xf32>
  %u3 = tensor.cast %c3 : tensor<1x4x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  %uo = tensor.cast %other : tensor<1x4x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%uo) : (tensor<*xf32>) -> ()
  return
}
