// Matmuls whose operands are transposes of the last two dims of run-time
// values: a rank-2 A^T B, A B^T (with a bias and relu), and a batched
// A B^T (attention's Q K^T); and one whose transposed operand is a
// constant (transposed at compile time instead).
func.func @main(%a: tensor<6x4xf32> {kiln.name = "a"}, %b: tensor<6x5xf32> {kiln.name = "b"},
                %w: tensor<5x4xf32> {kiln.name = "w"}, %q: tensor<2x3x4xf32> {kiln.name = "q"},
                %k: tensor<2x7x4xf32> {kiln.name = "k"})
    -> (tensor<4x5xf32> {kiln.name = "atb"}, tensor<6x5xf32> {kiln.name = "abt"},
        tensor<2x3x7xf32> {kiln.name = "qkt"}, tensor<6x3xf32> {kiln.name = "const"}) {
  %at = kiln.transpose %a {permutation = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %atb = kiln.matmul %at, %b : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %wt = kiln.transpose %w {permutation = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %m = kiln.matmul %a, %wt : (tensor<6x4xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
  %bias = kiln.constant dense<[0.5, -0.5, 0.25, 0.0, 1.0]> : tensor<5xf32>
  %mb = kiln.add %m, %bias : (tensor<6x5xf32>, tensor<5xf32>) -> tensor<6x5xf32>
  %abt = kiln.relu %mb : (tensor<6x5xf32>) -> tensor<6x5xf32>
  %kt = kiln.transpose %k {permutation = array<i64: 0, 2, 1>} : (tensor<2x7x4xf32>) -> tensor<2x4x7xf32>
  %qkt = kiln.matmul %q, %kt : (tensor<2x3x4xf32>, tensor<2x4x7xf32>) -> tensor<2x3x7xf32>
  %c = kiln.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.5, 0.0, -1.0, 2.0], [1.5, 1.0, 0.0, -2.0]]> : tensor<3x4xf32>
  %ct = kiln.transpose %c {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %const = kiln.matmul %a, %ct : (tensor<6x4xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  return %atb, %abt, %qkt, %const : tensor<4x5xf32>, tensor<6x5xf32>, tensor<2x3x7xf32>, tensor<6x3xf32>
}
