// RUN: kiln-opt %s -split-input-file -kiln-fold-constant-transposes | FileCheck %s

// A 2x3 weight blob transposed: [[1,2,3],[4,5,6]] -> [[1,4],[2,5],[3,6]].
// (The dialect's folder handles small dense literals; weights are blobs.)
// CHECK-LABEL: func @matrix
// CHECK: %[[T:.*]] = kiln.constant dense_resource<transposed> : tensor<3x2xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[T]]
// CHECK: transposed: "0x080000000000803F0000804000000040{{0000A040|0000a040}}00004040{{0000C040|0000c040}}"
func.func @matrix() -> tensor<3x2xf32> {
  %w = kiln.constant dense_resource<w> : tensor<2x3xf32>
  %t = kiln.transpose %w {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x080000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}

// -----

// Rank 3, permutation (2, 0, 1) of int64 values 0..5 shaped 1x2x3:
// out[k][0][i] = in[0][i][k] -> 0, 3, 1, 4, 2, 5.
// CHECK-LABEL: func @rank3
// CHECK: kiln.constant dense_resource<transposed> : tensor<3x1x2xi64>
// CHECK: transposed: "0x08000000000000000000000003000000000000000100000000000000040000000000000002000000000000000500000000000000"
func.func @rank3() -> tensor<3x1x2xi64> {
  %w = kiln.constant dense_resource<v> : tensor<1x2x3xi64>
  %t = kiln.transpose %w {permutation = array<i64: 2, 0, 1>} : (tensor<1x2x3xi64>) -> tensor<3x1x2xi64>
  return %t : tensor<3x1x2xi64>
}
{-#
  dialect_resources: {
    builtin: {
      v: "0x08000000000000000000000001000000000000000200000000000000030000000000000004000000000000000500000000000000"
    }
  }
#-}

// -----

// A transpose of something else stays.
// CHECK-LABEL: func @not_constant
// CHECK: kiln.transpose
func.func @not_constant(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = kiln.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}
