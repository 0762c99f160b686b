// Attention in sequence-first layout (PyTorch's nn.MultiheadAttention
// exported to ONNX): Q, K and V are [S, B*H, D]; Q moves to [B*H, S, D]
// and K to [B*H, D, S] (permutation [1, 2, 0]) for the scores Q K^T.
func.func @main(%q: tensor<5x6x4xf32> {kiln.name = "q"}, %k: tensor<5x6x4xf32> {kiln.name = "k"})
    -> (tensor<6x5x5xf32> {kiln.name = "scores"}) {
  %qt = kiln.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<5x6x4xf32>) -> tensor<6x5x4xf32>
  %kt = kiln.transpose %k {permutation = array<i64: 1, 2, 0>} : (tensor<5x6x4xf32>) -> tensor<6x4x5xf32>
  %scores = kiln.matmul %qt, %kt : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  return %scores : tensor<6x5x5xf32>
}
