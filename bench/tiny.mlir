// One element in, one out: kiln_bench overhead times kiln_session_run on
// it, which is the runtime's own cost per run.
module {
  func.func @main(%arg0: tensor<1xf32> {kiln.name = "x"}) -> (tensor<1xf32> {kiln.name = "y"}) {
    %0 = kiln.relu %arg0 : (tensor<1xf32>) -> tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}
