// Dense arrays of index, which MLIR 22's parser crashes on (the kiln-ir
// fuzz target found it in a max pool's pads): one written out, one through
// a chain of type aliases. Neither a string nor a comment holding the same
// text is an error: array<index: 3>, nor is one after an escaped quote.
!size = index
!pad = !size
func.func @main(%x: tensor<1x1x4x4xf32> {kiln.name = "x\"array<index: 2>"}) -> tensor<1x1x2x2xf32> {
  %m = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                         pads = array<index: 0, 0, 0, 0>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  %n = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                         pads = array<!pad: 0, 0, 0, 0>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %m : tensor<1x1x2x2xf32>
}
