// RUN: kiln-opt %s -split-input-file -kiln-fuse | FileCheck %s

// Checks that a convolution, its per-channel bias and relu become one
// kernel on the convolution's operands and the bias.
// CHECK-LABEL: func @conv_bias_relu
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
// CHECK: %[[B:.*]] = kiln.constant
// CHECK: %[[K:.*]] = kiln.kernel epilogue(%[[X]], %[[W]], %[[B]])
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<1x3x8x8xf32>, %[[A1:.*]]: tensor<4x3x3x3xf32>, %[[A2:.*]]: tensor<4x1x1xf32>):
// CHECK-NEXT: %[[C:.*]] = kiln.conv %[[A0]], %[[A1]]
// CHECK-NEXT: %[[S:.*]] = kiln.add %[[C]], %[[A2]]
// CHECK-NEXT: %[[R:.*]] = kiln.relu %[[S]]
// CHECK-NEXT: kiln.yield %[[R]]
// CHECK: return %[[K]]
func.func @conv_bias_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %b = kiln.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                         dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %a = kiln.add %c, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = kiln.relu %a : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

// Checks that a matmul takes a bias along its last dim, a residual and an
// activation, in that order.
// CHECK-LABEL: func @matmul_bias_residual_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>, %[[RES:.*]]: tensor<8x4xf32>)
// CHECK: %[[K:.*]] = kiln.kernel epilogue(%[[X]], %[[W]], %{{.*}}, %[[RES]])
// CHECK: kiln.matmul
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.gelu
// CHECK-NEXT: kiln.yield
// CHECK: return %[[K]]
func.func @matmul_bias_residual_gelu(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>,
                                     %res: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %b = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %a = kiln.add %m, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %s = kiln.add %res, %a : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %g = kiln.gelu %s : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}

// -----

// Checks that a result with a second user ends the chain: fusing would
// compute the convolution twice or keep the intermediate anyway.
// CHECK-LABEL: func @two_users
// CHECK-NOT: kiln.kernel
// CHECK: kiln.conv
// CHECK: kiln.relu
func.func @two_users(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>)
    -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                         dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = kiln.relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %c, %r : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// Checks that an add of a tensor that is neither a per-channel constant nor
// of the result's shape does not fuse (it is a broadcast, not a bias).
// CHECK-LABEL: func @broadcast_add
// CHECK-NOT: kiln.kernel
func.func @broadcast_add(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %v: tensor<4xf32>) -> tensor<8x4xf32> {
  %m = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %a = kiln.add %m, %v : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %a : tensor<8x4xf32>
}

// -----

// Checks that the chain ends at the activation: an add after it stays out.
// CHECK-LABEL: func @add_after_activation
// CHECK: %[[K:.*]] = kiln.kernel epilogue
// CHECK: kiln.relu
// CHECK-NEXT: kiln.yield
// CHECK: kiln.add %[[K]]
func.func @add_after_activation(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %r: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %m = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %a = kiln.relu %m : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = kiln.add %a, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// Checks that a bias after the residual is not taken (the epilogue's order
// is bias, residual, activation).
// CHECK-LABEL: func @bias_after_residual
// CHECK: %[[K:.*]] = kiln.kernel epilogue
// CHECK: kiln.matmul
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.yield
// CHECK: kiln.add %[[K]]
func.func @bias_after_residual(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %r: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %b = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %s = kiln.add %m, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %a = kiln.add %s, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %a : tensor<8x4xf32>
}

// -----

// Checks that a convolution without epilogue stays as it is.
// CHECK-LABEL: func @alone
// CHECK-NOT: kiln.kernel
// CHECK: kiln.conv
func.func @alone(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                         dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %c : tensor<1x4x6x6xf32>
}

// -----

// Checks that a chain of elementwise ops becomes one elementwise kernel
// reading what the chain reads from outside.
// CHECK-LABEL: func @elementwise_chain
// CHECK: %[[K:.*]] = kiln.kernel elementwise(%arg0, %arg1)
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8x4xf32>, %[[Y:.*]]: tensor<8x4xf32>):
// CHECK-NEXT: %[[E:.*]] = kiln.exp %[[X]]
// CHECK-NEXT: %[[A:.*]] = kiln.add %[[E]], %[[Y]]
// CHECK-NEXT: %[[R:.*]] = kiln.relu %[[A]]
// CHECK-NEXT: kiln.yield %[[R]]
// CHECK: return %[[K]]
func.func @elementwise_chain(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = kiln.exp %x : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %a = kiln.add %e, %y : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = kiln.relu %a : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// Checks that a tree (two computed operands) becomes one kernel, and that
// an operand broadcast from a smaller shape is read, not computed inside.
// CHECK-LABEL: func @elementwise_tree
// CHECK: %[[S:.*]] = kiln.sqrt %arg2
// CHECK: kiln.kernel elementwise(%arg0, %arg1, %[[S]])
// CHECK: kiln.mul
// CHECK: kiln.neg
// CHECK: kiln.sub
// CHECK: kiln.add
// CHECK-NEXT: kiln.yield
func.func @elementwise_tree(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>, %v: tensor<4xf32>) -> tensor<8x4xf32> {
  %m = kiln.mul %a, %b : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %n = kiln.neg %a : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = kiln.sqrt %v : (tensor<4xf32>) -> tensor<4xf32>
  %d = kiln.sub %n, %s : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = kiln.add %m, %d : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// Checks that a value with a second user is not computed inside a kernel
// (it would be computed twice): exp stays outside, the add and relu fuse.
// CHECK-LABEL: func @elementwise_shared
// CHECK: %[[E:.*]] = kiln.exp %arg0
// CHECK: %[[K:.*]] = kiln.kernel elementwise(%[[E]], %arg1)
// CHECK-NOT: kiln.exp
// CHECK: kiln.yield
// CHECK: return %[[E]], %[[K]]
func.func @elementwise_shared(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %e = kiln.exp %x : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %a = kiln.add %e, %y : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = kiln.relu %a : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %e, %r : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Checks that one elementwise op alone is not a kernel.
// CHECK-LABEL: func @elementwise_alone
// CHECK-NOT: kiln.kernel
func.func @elementwise_alone(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = kiln.exp %x : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %e : tensor<8x4xf32>
}

// -----

// Checks that a reduction over the trailing dims takes its elementwise
// prologue and epilogue into one reduction kernel over rows of dim 0.
// CHECK-LABEL: func @reduction_prologue_epilogue
// CHECK: %[[K:.*]] = kiln.kernel reduction(%arg0) {kiln.outer_dims = 1 : i64}
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8x4xf32>):
// CHECK-NEXT: %[[E:.*]] = kiln.exp %[[X]]
// CHECK-NEXT: %[[S:.*]] = kiln.reduce_sum %[[E]]
// CHECK-NEXT: %[[L:.*]] = kiln.log %[[S]]
// CHECK-NEXT: kiln.yield %[[L]]
// CHECK: return %[[K]]
func.func @reduction_prologue_epilogue(%x: tensor<8x4xf32>) -> tensor<8x1xf32> {
  %e = kiln.exp %x : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = kiln.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %l = kiln.log %s : (tensor<8x1xf32>) -> tensor<8x1xf32>
  return %l : tensor<8x1xf32>
}

// -----

// Checks attention's scaled softmax (the scaling is its prologue) and a
// layer normalisation with its residual add, over rows of the first dims.
// CHECK-LABEL: func @softmax_and_layer_norm
// CHECK: kiln.kernel reduction(%arg0, %{{.*}}) {kiln.outer_dims = 3 : i64}
// CHECK: kiln.div
// CHECK-NEXT: kiln.softmax
// CHECK: kiln.kernel reduction(%arg1, %arg2, %arg3, %arg4) {kiln.outer_dims = 2 : i64}
// CHECK: kiln.add
// CHECK-NEXT: kiln.layer_norm
func.func @softmax_and_layer_norm(%q: tensor<?x12x128x128xf32>, %a: tensor<?x128x768xf32>, %b: tensor<?x128x768xf32>,
                                  %g: tensor<768xf32>, %h: tensor<768xf32>) -> (tensor<?x12x128x128xf32>, tensor<?x128x768xf32>) {
  %c = kiln.constant dense<8.0> : tensor<f32>
  %d = kiln.div %q, %c : (tensor<?x12x128x128xf32>, tensor<f32>) -> tensor<?x12x128x128xf32>
  %p = kiln.softmax %d {axis = 3 : i64} : (tensor<?x12x128x128xf32>) -> tensor<?x12x128x128xf32>
  %r = kiln.add %a, %b : (tensor<?x128x768xf32>, tensor<?x128x768xf32>) -> tensor<?x128x768xf32>
  %n = kiln.layer_norm %r, %g, %h {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<?x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x128x768xf32>
  return %p, %n : tensor<?x12x128x128xf32>, tensor<?x128x768xf32>
}

// -----

// Checks the reductions that are not row kernels: over dim 0 (no rows),
// without keepdims, softmax along a dim that is not the last, a dynamic
// reduced dim; and that a prologue value with another user stays outside.
// CHECK-LABEL: func @not_row_reductions
// CHECK: kiln.reduce_sum %arg0 {axes = array<i64: 0>
// CHECK: kiln.reduce_sum %arg0 {axes = array<i64: 1>} :
// CHECK: kiln.softmax %arg0 {axis = 0 : i64}
// CHECK: kiln.reduce_max %arg1
// CHECK: %[[E:.*]] = kiln.exp %arg0
// CHECK: kiln.kernel reduction(%[[E]])
// CHECK-NOT: kiln.exp
// CHECK: kiln.yield
func.func @not_row_reductions(%x: tensor<8x4xf32>, %y: tensor<8x?xf32>)
    -> (tensor<1x4xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<8x1xf32>, tensor<8x1xf32>, tensor<8x4xf32>) {
  %a = kiln.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : (tensor<8x4xf32>) -> tensor<1x4xf32>
  %b = kiln.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<8x4xf32>) -> tensor<8xf32>
  %c = kiln.softmax %x {axis = 0 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %d = kiln.reduce_max %y {axes = array<i64: 1>, keepdims = true} : (tensor<8x?xf32>) -> tensor<8x1xf32>
  %e = kiln.exp %x : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %f = kiln.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  return %a, %b, %c, %d, %f, %e : tensor<1x4xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<8x1xf32>, tensor<8x1xf32>, tensor<8x4xf32>
}

// -----

// Checks that SiLU written as x * sigmoid(x) ends a convolution's
// epilogue (after its residual), and that one whose sigmoid has another
// user stays out (the sigmoid is needed outside the kernel anyway).
// CHECK-LABEL: func @conv_residual_silu
// CHECK: %[[K:.*]] = kiln.kernel epilogue
// CHECK: %[[C:.*]] = kiln.conv
// CHECK-NEXT: %[[R:.*]] = kiln.add %[[C]],
// CHECK-NEXT: %[[S:.*]] = kiln.sigmoid %[[R]]
// CHECK-NEXT: %[[Y:.*]] = kiln.mul %[[S]], %[[R]]
// CHECK-NEXT: kiln.yield %[[Y]]
// CHECK: %[[C2:.*]] = kiln.conv
// CHECK-NOT: kiln.kernel epilogue
// CHECK: kiln.sigmoid %[[C2]]
// CHECK: return %[[K]]
func.func @conv_residual_silu(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x1x1xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                         dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = kiln.add %c, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = kiln.sigmoid %r : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = kiln.mul %s, %r : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c2 = kiln.conv %y, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                          dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s2 = kiln.sigmoid %c2 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y2 = kiln.mul %c2, %s2 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %y, %y2, %s2 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// Checks that HardSwish, x * clip(x / 6 + 1/2, 0, 1) (the constants either
// operand), ends a convolution's epilogue after its residual, the kernel
// holding copies of its splat constants; that a hard sigmoid,
// clip(alpha * x + beta, 0, 1), ends one too; and that one whose clip has
// another user, and a clip to [0, 6], stay out.
// CHECK-LABEL: func @conv_hard_activations
// CHECK: %[[K:.*]] = kiln.kernel epilogue
// CHECK: %[[C:.*]] = kiln.conv
// CHECK-NEXT: %[[R:.*]] = kiln.add %[[C]],
// CHECK-NEXT: %[[SIXTH:.*]] = kiln.constant dense<0.166666672>
// CHECK-NEXT: %[[S:.*]] = kiln.mul %[[SIXTH]], %[[R]]
// CHECK-NEXT: %[[HALF:.*]] = kiln.constant dense<5.000000e-01>
// CHECK-NEXT: %[[A:.*]] = kiln.add %[[HALF]], %[[S]]
// CHECK-NEXT: %[[G:.*]] = kiln.clip %[[A]]
// CHECK-NEXT: %[[Y:.*]] = kiln.mul %[[G]], %[[R]]
// CHECK-NEXT: kiln.yield %[[Y]]
// CHECK: %[[K2:.*]] = kiln.kernel epilogue
// CHECK: kiln.conv
// CHECK-NEXT: kiln.constant dense<2.000000e-01>
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.constant dense<5.000000e-01>
// CHECK-NEXT: kiln.add
// CHECK-NEXT: %[[G2:.*]] = kiln.clip
// CHECK-NEXT: kiln.yield %[[G2]]
// CHECK: %[[C3:.*]] = kiln.conv
// CHECK-NEXT: %[[G3:.*]] = kiln.kernel elementwise(%[[C3]],
// CHECK: kiln.mul %[[C3]], %[[G3]]
// CHECK: %[[C4:.*]] = kiln.conv
// CHECK-NEXT: kiln.kernel elementwise(%[[C4]],
// CHECK: max = 6.0
// CHECK: return %[[K]], %[[K2]]
func.func @conv_hard_activations(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x1x1xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %sixth = kiln.constant dense<0.166666672> : tensor<f32>
  %fifth = kiln.constant dense<0.2> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                         dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = kiln.add %c, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = kiln.mul %sixth, %r : (tensor<f32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %a = kiln.add %half, %s : (tensor<f32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %g = kiln.clip %a {min = 0.0 : f64, max = 1.0 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = kiln.mul %g, %r : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c2 = kiln.conv %y, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                          dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s2 = kiln.mul %c2, %fifth : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %a2 = kiln.add %s2, %half : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %g2 = kiln.clip %a2 {min = 0.0 : f64, max = 1.0 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c3 = kiln.conv %g2, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                           dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s3 = kiln.mul %c3, %sixth : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %a3 = kiln.add %s3, %half : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %g3 = kiln.clip %a3 {min = 0.0 : f64, max = 1.0 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y3 = kiln.mul %c3, %g3 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c4 = kiln.conv %y3, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                           dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s4 = kiln.mul %c4, %fifth : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %a4 = kiln.add %s4, %half : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %g4 = kiln.clip %a4 {min = 0.0 : f64, max = 6.0 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %y, %g2, %g3, %y3, %g4 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}
