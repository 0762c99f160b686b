

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
      v: "0x00000000000000000000000000000000000000000000000000000000000000000000000000000000000016709549135231139839"
    }
  }
#-}

