// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Checks that constants round-trip as dense literals and as dense resources.
// CHECK-LABEL: func @constants
// CHECK: kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: kiln.constant dense_resource<weight0> : tensor<2x2xf32>
// CHECK: kiln.constant dense<true> : tensor<3xi1>
func.func @constants() -> (tensor<2xf32>, tensor<2x2xf32>, tensor<3xi1>) {
  %0 = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = kiln.constant dense_resource<weight0> : tensor<2x2xf32>
  %2 = kiln.constant dense<true> : tensor<3xi1>
  return %0, %1, %2 : tensor<2xf32>, tensor<2x2xf32>, tensor<3xi1>
}
{-#
  dialect_resources: {
    builtin: {
      weight0: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Checks that every unary elementwise op round-trips, with dynamic dims.
// CHECK-LABEL: func @unary
// CHECK: kiln.neg %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kiln.abs
// CHECK: kiln.sign
// CHECK: kiln.exp
// CHECK: kiln.log
// CHECK: kiln.sqrt
// CHECK: kiln.rsqrt
// CHECK: kiln.reciprocal
// CHECK: kiln.relu
// CHECK: kiln.sigmoid
// CHECK: kiln.tanh
// CHECK: kiln.erf
// CHECK: kiln.sin
// CHECK: kiln.cos
// CHECK: kiln.atan
// CHECK: kiln.floor
// CHECK: kiln.ceil
// CHECK: kiln.round
// CHECK: kiln.gelu %{{.*}} : (tensor<2x?xf32>)
// CHECK: kiln.gelu %{{.*}} approximation tanh : (tensor<2x?xf32>)
// CHECK: kiln.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK: kiln.not %{{.*}} : (tensor<4xi1>) -> tensor<4xi1>
// CHECK: kiln.abs %{{.*}} : (tensor<4xi32>) -> tensor<4xi32>
func.func @unary(%x: tensor<2x?xf32>, %b: tensor<4xi1>, %i: tensor<4xi32>) {
  %0 = kiln.neg %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = kiln.abs %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %2 = kiln.sign %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %3 = kiln.exp %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %4 = kiln.log %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %5 = kiln.sqrt %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %6 = kiln.rsqrt %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %7 = kiln.reciprocal %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %8 = kiln.relu %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %9 = kiln.sigmoid %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %10 = kiln.tanh %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %11 = kiln.erf %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %12 = kiln.sin %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %13 = kiln.cos %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %atan = kiln.atan %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %14 = kiln.floor %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %15 = kiln.ceil %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %16 = kiln.round %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %17 = kiln.gelu %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %18 = kiln.gelu %x approximation tanh : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %19 = kiln.clip %x {min = 0.0, max = 6.0} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %20 = kiln.not %b : (tensor<4xi1>) -> tensor<4xi1>
  %21 = kiln.abs %i : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

// Checks that binary ops, compare, select and cast round-trip with
// broadcasting operand shapes.
// CHECK-LABEL: func @binary
// CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: kiln.sub
// CHECK: kiln.mul
// CHECK: kiln.div
// CHECK: kiln.rem
// CHECK: kiln.pow
// CHECK: kiln.max
// CHECK: kiln.min
// CHECK: kiln.and
// CHECK: kiln.or
// CHECK: kiln.xor
// CHECK: kiln.shift_left %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK: kiln.shift_right
// CHECK: kiln.compare lt, %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xi1>
// CHECK: kiln.compare ne
// CHECK: kiln.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x3xi1>, tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: kiln.cast %{{.*}} : tensor<4x1xf32> to tensor<4x1xi64>
func.func @binary(%a: tensor<4x1xf32>, %b: tensor<3xf32>, %p: tensor<2xi1>, %q: tensor<1xi1>, %u: tensor<4xui8>) {
  %0 = kiln.add %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = kiln.sub %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = kiln.mul %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %3 = kiln.div %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %4 = kiln.rem %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %5 = kiln.pow %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %6 = kiln.max %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %7 = kiln.min %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %8 = kiln.and %p, %q : (tensor<2xi1>, tensor<1xi1>) -> tensor<2xi1>
  %9 = kiln.or %p, %q : (tensor<2xi1>, tensor<1xi1>) -> tensor<2xi1>
  %10 = kiln.xor %p, %q : (tensor<2xi1>, tensor<1xi1>) -> tensor<2xi1>
  %shl = kiln.shift_left %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %shr = kiln.shift_right %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %11 = kiln.compare lt, %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %12 = kiln.compare ne, %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %13 = kiln.select %11, %a, %b : (tensor<4x3xi1>, tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %14 = kiln.cast %a : tensor<4x1xf32> to tensor<4x1xi64>
  return
}

// -----

// Checks that matmul, conv and pooling round-trip, including a dynamic
// batch and 1-D / 3-D convolutions.
// CHECK-LABEL: func @contractions_and_windows
// CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<?x128x64xf32>, tensor<64x32xf32>) -> tensor<?x128x32xf32>
// CHECK: kiln.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>}
// CHECK-SAME: -> tensor<?x64x112x112xf32>
// CHECK: kiln.conv {{.*}} -> tensor<1x4x6xf32>
// CHECK: kiln.conv {{.*}} -> tensor<1x4x2x2x2xf32>
// CHECK: kiln.max_pool {{.*}} -> tensor<?x64x56x56xf32>
// CHECK: kiln.avg_pool {{.*}}count_include_pad = true{{.*}} -> tensor<?x64x56x56xf32>
func.func @contractions_and_windows(%a: tensor<?x128x64xf32>, %b: tensor<64x32xf32>,
    %img: tensor<?x3x224x224xf32>, %w: tensor<64x3x7x7xf32>,
    %seq: tensor<1x4x8xf32>, %dw: tensor<4x1x3xf32>,
    %vol: tensor<1x2x4x4x4xf32>, %w3: tensor<4x2x3x3x3xf32>) {
  %0 = kiln.matmul %a, %b : (tensor<?x128x64xf32>, tensor<64x32xf32>) -> tensor<?x128x32xf32>
  %1 = kiln.conv %img, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>,
                           dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<?x64x112x112xf32>
  %2 = kiln.conv %seq, %dw {strides = array<i64: 1>, pads = array<i64: 0, 0>,
                            dilations = array<i64: 1>, groups = 4 : i64}
      : (tensor<1x4x8xf32>, tensor<4x1x3xf32>) -> tensor<1x4x6xf32>
  %3 = kiln.conv %vol, %w3 {strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>,
                            dilations = array<i64: 1, 1, 1>, groups = 1 : i64}
      : (tensor<1x2x4x4x4xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x2x2x2xf32>
  %4 = kiln.max_pool %1 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<?x64x112x112xf32>) -> tensor<?x64x56x56xf32>
  %5 = kiln.avg_pool %1 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>,
                         count_include_pad = true}
      : (tensor<?x64x112x112xf32>) -> tensor<?x64x56x56xf32>
  return
}

// -----

// Checks that normalisation, softmax and reductions round-trip.
// CHECK-LABEL: func @normalisation_and_reductions
// CHECK: kiln.batch_norm {{.*}} {epsilon = 9.99999974E-6 : f32}
// CHECK: kiln.layer_norm {{.*}} {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK: kiln.softmax %{{.*}} {axis = 2 : i64}
// CHECK: kiln.log_softmax %{{.*}} {axis = 1 : i64}
// CHECK: kiln.reduce_sum %{{.*}} {axes = array<i64: 1, 2>, keepdims = true} : (tensor<1x128x768xf32>) -> tensor<1x1x1xf32>
// CHECK: kiln.reduce_mean %{{.*}} {axes = array<i64: 2>} : (tensor<1x128x768xf32>) -> tensor<1x128xf32>
// CHECK: kiln.reduce_max
// CHECK: kiln.reduce_min
// CHECK: kiln.reduce_prod
// CHECK: kiln.argmax %{{.*}} {axis = 2 : i64, keepdims = false} : (tensor<1x128x768xf32>) -> tensor<1x128xi64>
// CHECK: kiln.argmin %{{.*}} {axis = 1 : i64, select_last_index = true} : (tensor<1x128x768xf32>) -> tensor<1x1x768xi64>
func.func @normalisation_and_reductions(%x: tensor<1x64x8x8xf32>, %c: tensor<64xf32>,
    %t: tensor<1x128x768xf32>, %g: tensor<768xf32>) {
  %0 = kiln.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-05 : f32}
      : (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  %1 = kiln.layer_norm %t, %g, %g {axis = 2 : i64, epsilon = 1.0e-12 : f32}
      : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  %2 = kiln.softmax %t {axis = 2 : i64} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  %3 = kiln.log_softmax %t {axis = 1 : i64} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  %4 = kiln.reduce_sum %t {axes = array<i64: 1, 2>, keepdims = true} : (tensor<1x128x768xf32>) -> tensor<1x1x1xf32>
  %5 = kiln.reduce_mean %t {axes = array<i64: 2>} : (tensor<1x128x768xf32>) -> tensor<1x128xf32>
  %6 = kiln.reduce_max %t {axes = array<i64: 2>} : (tensor<1x128x768xf32>) -> tensor<1x128xf32>
  %7 = kiln.reduce_min %t {axes = array<i64: 2>} : (tensor<1x128x768xf32>) -> tensor<1x128xf32>
  %8 = kiln.reduce_prod %t {axes = array<i64: 2>} : (tensor<1x128x768xf32>) -> tensor<1x128xf32>
  %9 = kiln.argmax %t {axis = 2 : i64, keepdims = false} : (tensor<1x128x768xf32>) -> tensor<1x128xi64>
  %10 = kiln.argmin %t {axis = 1 : i64, select_last_index = true} : (tensor<1x128x768xf32>) -> tensor<1x1x768xi64>
  return
}

// -----

// Checks that the data-movement ops round-trip, with dynamic batch dims.
// CHECK-LABEL: func @data_movement
// CHECK: kiln.reshape %{{.*}} {shape = array<i64: 0, -1, 12, 64>} : (tensor<?x128x768xf32>) -> tensor<?x128x12x64xf32>
// CHECK: kiln.transpose %{{.*}} {permutation = array<i64: 0, 2, 1, 3>}
// CHECK: kiln.expand %{{.*}} {shape = array<i64: 4, 1, 3>} : (tensor<?x3xf32>) -> tensor<4x?x3xf32>
// CHECK: kiln.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK: %{{.*}}:3 = kiln.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 768, 768, 768>}
// CHECK: kiln.slice %{{.*}} {ends = array<i64: 2, 9223372036854775807>, starts = array<i64: 0, 1>, steps = array<i64: 1, 2>} : (tensor<2x10xf32>) -> tensor<2x5xf32>
// CHECK: kiln.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<100x16xf32>, tensor<?x8xi64>) -> tensor<?x8x16xf32>
// CHECK: kiln.pad %{{.*}} {pads = array<i64: 0, 1, 0, 1>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
// CHECK: kiln.pad %{{.*}} mode reflect {pads = array<i64: 0, 1, 0, 1>}
func.func @data_movement(%h: tensor<?x128x768xf32>, %v: tensor<?x3xf32>,
    %a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %qkv: tensor<1x128x2304xf32>,
    %s: tensor<2x10xf32>, %table: tensor<100x16xf32>, %ids: tensor<?x8xi64>) {
  %0 = kiln.reshape %h {shape = array<i64: 0, -1, 12, 64>} : (tensor<?x128x768xf32>) -> tensor<?x128x12x64xf32>
  %1 = kiln.transpose %0 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x12x64xf32>) -> tensor<?x12x128x64xf32>
  %2 = kiln.expand %v {shape = array<i64: 4, 1, 3>} : (tensor<?x3xf32>) -> tensor<4x?x3xf32>
  %3 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %4:3 = kiln.split %qkv {axis = 2 : i64, sizes = array<i64: 768, 768, 768>}
      : (tensor<1x128x2304xf32>) -> (tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>)
  %5 = kiln.slice %s {starts = array<i64: 0, 1>, ends = array<i64: 2, 9223372036854775807>, steps = array<i64: 1, 2>}
      : (tensor<2x10xf32>) -> tensor<2x5xf32>
  %6 = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<?x8xi64>) -> tensor<?x8x16xf32>
  %7 = kiln.pad %a {pads = array<i64: 0, 1, 0, 1>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  %8 = kiln.pad %a mode reflect {pads = array<i64: 0, 1, 0, 1>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return
}

// -----

// Checks that a result type may be less refined than the inferred one.
// CHECK-LABEL: func @less_refined_results
// CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
func.func @less_refined_results(%a: tensor<4xf32>) -> tensor<?xf32> {
  %0 = kiln.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Checks that a kernel with its yield, and a library call, round-trip.
// CHECK-LABEL: func @kernels
// CHECK: %[[K:.*]] = kiln.kernel epilogue(%{{.*}}, %{{.*}}) : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32> {
// CHECK: kiln.yield %{{.*}} : tensor<8x4xf32>
// CHECK: kiln.library_call 2(%{{.*}}, %{{.*}}) : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
func.func @kernels(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %k = kiln.kernel epilogue(%x, %w) : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>):
    %m = kiln.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %r = kiln.relu %m : (tensor<8x4xf32>) -> tensor<8x4xf32>
    kiln.yield %r : tensor<8x4xf32>
  }
  %c = kiln.library_call 2(%x, %w) : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %k, %c : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Checks that stop_gradient round-trips.
// CHECK-LABEL: func @stop_gradient
// CHECK: kiln.stop_gradient %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @stop_gradient(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.stop_gradient %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Checks that dropout and random_uniform round-trip.
// CHECK-LABEL: func @dropout_random
// CHECK: kiln.dropout %arg0 {ratio = 1.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: kiln.random_uniform %arg1 {seed = 7 : i64, shape = array<i64: 2, 3>} : (tensor<i64>) -> tensor<2x3xf32>
func.func @dropout_random(%x: tensor<2x3xf32>, %step: tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = kiln.dropout %x {ratio = 0.1 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kiln.random_uniform %step {seed = 7 : i64, shape = array<i64: 2, 3>} : (tensor<i64>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Checks that the run-time shape ops round-trip: dims as a tensor, an iota
// and a reshape over a shape read when the model runs (a constant entry
// gives a static dim).
// CHECK-LABEL: func @runtime_shapes
// CHECK: kiln.shape_of %{{.*}} : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK: kiln.iota %{{.*}} {axis = 1 : i64} : (tensor<2xi64>) -> tensor<?x?xi64>
// CHECK: kiln.dynamic_reshape %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: kiln.dynamic_reshape %{{.*}}, %{{.*}} {allow_zero = true} : (tensor<0x3xf32>, tensor<3xi64>) -> tensor<3x0x2xf32>
func.func @runtime_shapes(%x: tensor<?x3xf32>, %shape: tensor<2xi64>, %y: tensor<0x3xf32>) {
  %0 = kiln.shape_of %x : (tensor<?x3xf32>) -> tensor<2xi64>
  %1 = kiln.iota %shape {axis = 1 : i64} : (tensor<2xi64>) -> tensor<?x?xi64>
  %2 = kiln.dynamic_reshape %x, %0 : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %c = kiln.constant dense<[3, 0, 2]> : tensor<3xi64>
  %3 = kiln.dynamic_reshape %y, %c {allow_zero = true} : (tensor<0x3xf32>, tensor<3xi64>) -> tensor<3x0x2xf32>
  return
}

// -----

// Checks the ops of opsets 18-28: bitcast, bitwise logic on integers, the
// wrap pad.
// CHECK-LABEL: func @newer_opsets
// CHECK: kiln.bitcast %{{.*}} : tensor<4xf32> to tensor<4xi32>
// CHECK: kiln.bitcast %{{.*}} : tensor<4xi1> to tensor<4xui8>
// CHECK: kiln.xor %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK: kiln.pad %{{.*}} mode wrap
func.func @newer_opsets(%x: tensor<4xf32>, %b: tensor<4xi1>) {
  %0 = kiln.bitcast %x : tensor<4xf32> to tensor<4xi32>
  %1 = kiln.bitcast %b : tensor<4xi1> to tensor<4xui8>
  %2 = kiln.xor %0, %0 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = kiln.pad %x mode wrap {pads = array<i64: 1, 1>} : (tensor<4xf32>) -> tensor<6xf32>
  return
}

// -----

// Checks that transposed convolutions (dynamic batch, output padding,
// groups) and topk (k an attribute or a run-time count, 0, along an axis
// known only at run time) round-trip with their inferred types.
// CHECK-LABEL: func @composites
// CHECK: kiln.conv_transpose %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
// CHECK-SAME: -> tensor<?x3x8x8xf32>
// CHECK: kiln.conv_transpose {{.*}} -> tensor<1x6x4xf32>
// CHECK: kiln.topk %{{.*}} {axis = 1 : i64, k = 3 : i64} : (tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK: kiln.topk %{{.*}}, %{{.*}} {axis = 0 : i64, largest = false} : (tensor<5x2xi32>, tensor<1xi64>) -> (tensor<?x2xi32>, tensor<?x2xi64>)
// CHECK: kiln.topk %{{.*}} {axis = 1 : i64, k = 4 : i64} : (tensor<3x?xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)
// CHECK: kiln.topk %{{.*}} {axis = 1 : i64, k = 0 : i64} : (tensor<2x10xf32>) -> (tensor<2x0xf32>, tensor<2x0xi64>)
func.func @composites(%x: tensor<?x8x4x4xf32>, %w: tensor<8x3x3x3xf32>,
    %s: tensor<1x4x5xf32>, %g: tensor<4x3x3xf32>, %t: tensor<2x10xf32>,
    %i: tensor<5x2xi32>, %k: tensor<1xi64>, %d: tensor<3x?xf32>) {
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>,
                                   dilations = array<i64: 1, 1>,
                                   output_padding = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<?x8x4x4xf32>, tensor<8x3x3x3xf32>) -> tensor<?x3x8x8xf32>
  %1 = kiln.conv_transpose %s, %g {strides = array<i64: 1>, pads = array<i64: 0, 5>,
                                   dilations = array<i64: 2>, output_padding = array<i64: 0>,
                                   groups = 2 : i64}
      : (tensor<1x4x5xf32>, tensor<4x3x3xf32>) -> tensor<1x6x4xf32>
  %v, %j = kiln.topk %t {axis = 1 : i64, k = 3 : i64}
      : (tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  %u, %l = kiln.topk %i, %k {axis = 0 : i64, largest = false}
      : (tensor<5x2xi32>, tensor<1xi64>) -> (tensor<?x2xi32>, tensor<?x2xi64>)
  %dv, %di = kiln.topk %d {axis = 1 : i64, k = 4 : i64}
      : (tensor<3x?xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)
  %zv, %zi = kiln.topk %t {axis = 1 : i64, k = 0 : i64}
      : (tensor<2x10xf32>) -> (tensor<2x0xf32>, tensor<2x0xi64>)
  return
}
