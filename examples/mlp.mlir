// A two-layer MLP in the kiln dialect, written as an importer would emit it:
// result dims left as `?` where the importer did not compute them, and a
// bias added through a no-op reshape. `make demo` runs Kiln's graph phase on
// it: shapes are inferred, the reshape folds away, the signature is refined.
func.func @mlp(%x: tensor<?x784xf32>) -> tensor<?x?xf32> {
  %w1 = kiln.constant dense<0.01> : tensor<784x128xf32>
  %b1 = kiln.constant dense<0.1> : tensor<128xf32>
  %w2 = kiln.constant dense<0.02> : tensor<128x10xf32>
  %b2 = kiln.constant dense<0.0> : tensor<10xf32>
  %0 = kiln.matmul %x, %w1 : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x?xf32>
  %b1r = kiln.reshape %b1 {shape = array<i64: 128>} : (tensor<128xf32>) -> tensor<?xf32>
  %1 = kiln.add %0, %b1r : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %2 = kiln.relu %1 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = kiln.matmul %2, %w2 : (tensor<?x?xf32>, tensor<128x10xf32>) -> tensor<?x?xf32>
  %4 = kiln.add %3, %b2 : (tensor<?x?xf32>, tensor<10xf32>) -> tensor<?x?xf32>
  %5 = kiln.softmax %4 {axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %5 : tensor<?x?xf32>
}
