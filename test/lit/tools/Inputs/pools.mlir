// Pools oneDNN runs (max with padding and ceil_mode, average with and
// without padded positions counted, average in ceil mode without them) and
// two it does not (a dilated max; an average in ceil mode counting padded
// positions, where ONNX counts the explicit padding but not the ceil-mode
// overflow), after a convolution so that layouts meet; the last max leaves
// the input's last row and column unread (a high padding of -1 to oneDNN).
module {
  func.func @main(%arg0: tensor<?x16x9x9xf32> {kiln.name = "x"}) -> (tensor<?x16x5x5xf32> {kiln.name = "max"}, tensor<?x16x5x5xf32> {kiln.name = "avg_in"}, tensor<?x16x5x5xf32> {kiln.name = "avg_ex"}, tensor<?x16x7x7xf32> {kiln.name = "dilated"}, tensor<?x16x5x5xf32> {kiln.name = "avg_ceil_ex"}, tensor<?x16x5x5xf32> {kiln.name = "avg_ceil_in"}, tensor<?x16x4x4xf32> {kiln.name = "max_drop"}) {
    %w = kiln.constant dense<0.01> : tensor<16x16x3x3xf32>
    %c = kiln.conv %arg0, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x16x9x9xf32>, tensor<16x16x3x3xf32>) -> tensor<?x16x9x9xf32>
    %m = kiln.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<?x16x9x9xf32>) -> tensor<?x16x5x5xf32>
    %a = kiln.avg_pool %arg0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad = true} : (tensor<?x16x9x9xf32>) -> tensor<?x16x5x5xf32>
    %e = kiln.avg_pool %arg0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x16x9x9xf32>) -> tensor<?x16x5x5xf32>
    %ce = kiln.avg_pool %c {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<?x16x9x9xf32>) -> tensor<?x16x5x5xf32>
    %ci = kiln.avg_pool %arg0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : (tensor<?x16x9x9xf32>) -> tensor<?x16x5x5xf32>
    %d = kiln.max_pool %arg0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 2>} : (tensor<?x16x9x9xf32>) -> tensor<?x16x7x7xf32>
    %md = kiln.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x16x9x9xf32>) -> tensor<?x16x4x4xf32>
    return %m, %a, %e, %d, %ce, %ci, %md : tensor<?x16x5x5xf32>, tensor<?x16x5x5xf32>, tensor<?x16x5x5xf32>, tensor<?x16x7x7xf32>, tensor<?x16x5x5xf32>, tensor<?x16x5x5xf32>, tensor<?x16x4x4xf32>
  }
}
