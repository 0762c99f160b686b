// RUN: kiln-opt %s -split-input-file -kiln-fold-pads | FileCheck %s

// Checks that zero padding of H and W before an average pool without
// padding of its own becomes the pool's padding, counted in each divisor
// (the explicit zeros were), and that the pad is gone.
// CHECK-LABEL: func @avg_pool
// CHECK-NOT: kiln.pad
// CHECK: kiln.avg_pool %arg0 {count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 2, 1, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
func.func @avg_pool(%x: tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32> {
  %p = kiln.pad %x {pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 0>} : (tensor<1x8x5x5xf32>) -> tensor<1x8x7x7xf32>
  %y = kiln.avg_pool %p {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x5x5xf32>
  return %y : tensor<1x8x5x5xf32>
}

// -----

// Checks that a pool counting its own padding adds the explicit padding
// to it.
// CHECK-LABEL: func @avg_pool_counting_its_padding
// CHECK: kiln.avg_pool %arg0 {count_include_pad = true, {{.*}}pads = array<i64: 2, 1, 2, 1>
func.func @avg_pool_counting_its_padding(%x: tensor<1x8x5x5xf32>) -> tensor<1x8x7x5xf32> {
  %p = kiln.pad %x {pads = array<i64: 0, 0, 1, 0, 0, 0, 1, 0>} : (tensor<1x8x5x5xf32>) -> tensor<1x8x7x5xf32>
  %y = kiln.avg_pool %p {count_include_pad = true, kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x7x5xf32>) -> tensor<1x8x7x5xf32>
  return %y : tensor<1x8x7x5xf32>
}

// -----

// Checks what stays: a pool that leaves its own padding out of the
// divisor (the explicit zeros are counted, the pool's are not), a pad of
// another value or mode, a pad of the channels, ceil mode, and padding
// that reaches the window's extent.
// CHECK-LABEL: func @kept
// CHECK-COUNT-5: kiln.pad
// CHECK-NOT: kiln.pad
// CHECK-NOT: count_include_pad = true
func.func @kept(%x: tensor<1x8x5x5xf32>) -> (tensor<1x8x7x7xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x10x5x5xf32>, tensor<1x8x4x4xf32>, tensor<1x8x3x3xf32>) {
  %p = kiln.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x8x5x5xf32>) -> tensor<1x8x7x7xf32>
  %a = kiln.avg_pool %p {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %q = kiln.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 1.0 : f64} : (tensor<1x8x5x5xf32>) -> tensor<1x8x7x7xf32>
  %b = kiln.avg_pool %q {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x5x5xf32>
  %r = kiln.pad %x mode reflect {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x8x5x5xf32>) -> tensor<1x8x7x7xf32>
  %c = kiln.avg_pool %r {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x5x5xf32>
  %s = kiln.pad %x {pads = array<i64: 0, 1, 1, 1, 0, 1, 1, 1>} : (tensor<1x8x5x5xf32>) -> tensor<1x10x7x7xf32>
  %d = kiln.avg_pool %s {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x10x7x7xf32>) -> tensor<1x10x5x5xf32>
  %e = kiln.avg_pool %p {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x8x7x7xf32>) -> tensor<1x8x4x4xf32>
  %t = kiln.pad %x {pads = array<i64: 0, 0, 3, 3, 0, 0, 3, 3>} : (tensor<1x8x5x5xf32>) -> tensor<1x8x11x11xf32>
  %f = kiln.avg_pool %t {kernel_shape = array<i64: 3, 3>, strides = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x11x11xf32>) -> tensor<1x8x3x3xf32>
  return %a, %b, %c, %d, %e, %f : tensor<1x8x7x7xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x10x5x5xf32>, tensor<1x8x4x4xf32>, tensor<1x8x3x3xf32>
}

// -----

// Checks that zero padding before a convolution becomes its padding
// (added to its own), and that a pad with another reader stays for it.
// CHECK-LABEL: func @conv
// CHECK: %[[P:.*]] = kiln.pad %arg0
// CHECK: kiln.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 2, 2, 1>, strides = array<i64: 1, 1>}
// CHECK: kiln.pad %[[P]]
func.func @conv(%x: tensor<1x4x5x5xf32>, %w: tensor<2x4x3x3xf32>) -> (tensor<1x2x6x6xf32>, tensor<1x4x7x7xf32>) {
  %p = kiln.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 0>} : (tensor<1x4x5x5xf32>) -> tensor<1x4x7x6xf32>
  %y = kiln.conv %p, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x7x6xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x6x6xf32>
  %z = kiln.pad %p {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>} : (tensor<1x4x7x6xf32>) -> tensor<1x4x7x7xf32>
  return %y, %z : tensor<1x2x6x6xf32>, tensor<1x4x7x7xf32>
}
