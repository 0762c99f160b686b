// A dense array through a type alias of index defined below its use: MLIR
// resolves only aliases defined above, so its parser reports the alias as
// undefined (no crash), and Kiln leaves the error to it.
func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %m = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                         pads = array<!pad: 0, 0, 0, 0>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %m : tensor<1x1x2x2xf32>
}
!pad = index
