// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Checks that a constant's declared type must be its value's type.
func.func @constant_type() -> tensor<?xf32> {
  // expected-error @+1 {{result type 'tensor<?xf32>' differs from the value's type 'tensor<2xf32>'}}
  %0 = "kiln.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Checks that a declared result type must agree with the inferred one.
func.func @incompatible_result(%a: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<5xf32>'}}
  %0 = kiln.neg %a : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Checks that float-only ops reject integer tensors.
func.func @exp_of_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = kiln.exp %a : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Checks that clip bounds must not be NaN.
func.func @clip_nan(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{bounds must not be NaN}}
  %0 = kiln.clip %a {min = 0x7FF8000000000000 : f64, max = 1.0} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that clip bounds must be ordered.
func.func @clip_order(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{min (2.000000e+00) is greater than max (1.000000e+00)}}
  %0 = kiln.clip %a {min = 2.0, max = 1.0} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that binary operands must broadcast.
func.func @no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{shapes [2, 3] and [4, 3] do not broadcast: dim 0 is 2 vs 4}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Checks that binary operands must share an element type.
func.func @mixed_elements(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = kiln.mul %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Checks that select's two values must share an element type.
func.func @select_elements(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+1 {{on_true and on_false element types differ: 'f32' vs 'f16'}}
  %0 = kiln.select %c, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Checks that cast keeps the shape.
func.func @cast_shape(%a: tensor<3xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %0 = kiln.cast %a : tensor<3xf32> to tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Checks that matmul needs matrices.
func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x2xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{matmul operands must have rank >= 2, got 1 and 2}}
  %0 = kiln.matmul %a, %b : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Checks that matmul contraction sizes must agree.
func.func @matmul_k(%a: tensor<4x3xf32>, %b: tensor<5x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{matmul contraction sizes differ: 3 vs 5}}
  %0 = kiln.matmul %a, %b : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// Checks that matmul batch dims must broadcast.
func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x3x2xf32>) -> tensor<2x4x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{matmul batch dims: shapes [2] and [3] do not broadcast}}
  %0 = kiln.matmul %a, %b : (tensor<2x4x3xf32>, tensor<3x3x2xf32>) -> tensor<2x4x2xf32>
  return %0 : tensor<2x4x2xf32>
}

// -----

// Checks that conv input has 1 to 3 spatial dims.
func.func @conv_rank(%x: tensor<1x3xf32>, %w: tensor<4x3xf32>) -> tensor<1x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{input must be [N, C, D...] with 1 to 3 spatial dims, got rank 2}}
  %0 = kiln.conv %x, %w {strides = array<i64>, pads = array<i64>, dilations = array<i64>, groups = 1 : i64}
      : (tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

// Checks that conv weight rank matches the input's.
func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{weight rank 3 differs from input rank 4}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Checks that conv groups are positive.
func.func @conv_groups(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{groups must be positive, got 0}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 0 : i64}
      : (tensor<1x3x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6xf32>
  return %0 : tensor<1x4x6xf32>
}

// -----

// Checks that conv input channels divide into groups.
func.func @conv_group_channels(%x: tensor<1x3x8xf32>, %w: tensor<4x1x3xf32>) -> tensor<1x4x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{input channels 3 are not divisible by groups 2}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 2 : i64}
      : (tensor<1x3x8xf32>, tensor<4x1x3xf32>) -> tensor<1x4x6xf32>
  return %0 : tensor<1x4x6xf32>
}

// -----

// Checks that conv weight channels match the input's.
func.func @conv_weight_channels(%x: tensor<1x4x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{weight expects 3 input channels (3 x 1 groups), input has 4}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 1 : i64}
      : (tensor<1x4x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6xf32>
  return %0 : tensor<1x4x6xf32>
}

// -----

// Checks that conv output channels divide into groups.
func.func @conv_out_channels(%x: tensor<1x4x8xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{output channels 3 are not divisible by groups 2}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 2 : i64}
      : (tensor<1x4x8xf32>, tensor<3x2x3xf32>) -> tensor<1x3x6xf32>
  return %0 : tensor<1x3x6xf32>
}

// -----

// Checks that conv kernels have static spatial dims.
func.func @conv_dynamic_kernel(%x: tensor<1x3x8xf32>, %w: tensor<4x3x?xf32>) -> tensor<1x4x?xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{kernel spatial dims must be static}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 1 : i64}
      : (tensor<1x3x8xf32>, tensor<4x3x?xf32>) -> tensor<1x4x?xf32>
  return %0 : tensor<1x4x?xf32>
}

// -----

// Checks that window attributes have one entry per spatial dim.
func.func @window_arity(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expected 2 kernel sizes, strides and dilations and 4 pads for 2 spatial dims, got 2, 1, 2 and 4}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// Checks that window sizes are positive.
func.func @window_stride(%x: tensor<1x3x8xf32>) -> tensor<1x3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{spatial dim 0: kernel size, stride and dilation must be positive}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 0>, pads = array<i64: 0, 0>, dilations = array<i64: 1>}
      : (tensor<1x3x8xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

// Checks that window pads are not negative.
func.func @window_pads(%x: tensor<1x3x8xf32>) -> tensor<1x3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{spatial dim 0: pads must not be negative}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: -1, 0>, dilations = array<i64: 1>}
      : (tensor<1x3x8xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

// Checks that a window must fit in the padded input.
func.func @window_fit(%x: tensor<1x3x2xf32>) -> tensor<1x3x1xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{spatial dim 0: window of extent 5 does not fit in a padded input of 2}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 5>, strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>}
      : (tensor<1x3x2xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

// -----


// Checks that batch_norm needs a channel dim.
func.func @batch_norm_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input must have rank >= 2 ([N, C, ...]), got 1}}
  %0 = kiln.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-05 : f32}
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that batch_norm parameters are per-channel vectors.
func.func @batch_norm_channels(%x: tensor<1x4x2xf32>, %c: tensor<4xf32>, %m: tensor<3xf32>) -> tensor<1x4x2xf32> {
  // expected-error @+1 {{mean must be a vector of 4 channels, got 'tensor<3xf32>'}}
  %0 = kiln.batch_norm %x, %c, %c, %m, %c {epsilon = 1.0e-05 : f32}
      : (tensor<1x4x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// -----

// Checks that layer_norm's axis is in range.
func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = kiln.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32}
      : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Checks that layer_norm's scale broadcasts to the normalised dims.
func.func @layer_norm_scale(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale of type 'tensor<4xf32>' does not broadcast to the normalised dims}}
  %0 = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32}
      : (tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Checks that softmax's axis is in range.
func.func @softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kiln.softmax' op axis -1 is out of range for rank 2}}
  %0 = kiln.softmax %x {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Checks that reduction axes are in range.
func.func @reduce_axis(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = kiln.reduce_sum %x {axes = array<i64: 2>} : (tensor<2x8xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Checks that reduction axes are sorted and unique.
func.func @reduce_axes_order(%x: tensor<2x8xf32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = kiln.reduce_max %x {axes = array<i64: 1, 0>} : (tensor<2x8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Checks that reshape allows one -1.
func.func @reshape_two_inferred(%x: tensor<2x6xf32>) -> tensor<?x?xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{reshape: shape has more than one -1}}
  %0 = kiln.reshape %x {shape = array<i64: -1, -1>} : (tensor<2x6xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Checks that reshape entries are sizes, 0 or -1.
func.func @reshape_bad_entry(%x: tensor<2x6xf32>) -> tensor<?x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{reshape: shape entry -3 is not a size, 0 or -1}}
  %0 = kiln.reshape %x {shape = array<i64: -3, 6>} : (tensor<2x6xf32>) -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}

// -----

// Checks that a 0 entry refers to an input dim.
func.func @reshape_copy_range(%x: tensor<12xf32>) -> tensor<12x1xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{reshape: shape entry 1 is 0 but the input has rank 1}}
  %0 = kiln.reshape %x {shape = array<i64: 12, 0>} : (tensor<12xf32>) -> tensor<12x1xf32>
  return %0 : tensor<12x1xf32>
}

// -----

// Checks that -1 must divide the element count.
func.func @reshape_indivisible(%x: tensor<2x6xf32>) -> tensor<5x?xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{reshape: cannot infer the -1 entry: 12 elements do not divide into 5}}
  %0 = kiln.reshape %x {shape = array<i64: 5, -1>} : (tensor<2x6xf32>) -> tensor<5x?xf32>
  return %0 : tensor<5x?xf32>
}

// -----

// Checks that reshape keeps the element count.
func.func @reshape_count(%x: tensor<2x6xf32>) -> tensor<4x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{reshape: reshape of 12 elements into [4, 4] (16 elements)}}
  %0 = kiln.reshape %x {shape = array<i64: 4, 4>} : (tensor<2x6xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Checks that a permutation has one entry per dim.
func.func @transpose_arity(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{permutation has 3 entries for rank 2}}
  %0 = kiln.transpose %x {permutation = array<i64: 1, 0, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Checks that a permutation names each dim once.
func.func @transpose_repeat(%x: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{permutation is not a permutation of [0, 2)}}
  %0 = kiln.transpose %x {permutation = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Checks that expand sizes are not negative.
func.func @expand_negative(%x: tensor<3xf32>) -> tensor<?x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expand shape entries must not be negative, got -1}}
  %0 = kiln.expand %x {shape = array<i64: -1, 3>} : (tensor<3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Checks that expand follows broadcasting.
func.func @expand_incompatible(%x: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expand: shapes [3] and [4] do not broadcast: dim 0 is 3 vs 4}}
  %0 = kiln.expand %x {shape = array<i64: 4>} : (tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that concat needs an input.
func.func @concat_empty() -> tensor<0xf32> {
  // expected-error @+1 {{expected 1 or more operands, but found 0}}
  %0 = kiln.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

// Checks that concat's axis is in range.
func.func @concat_axis(%a: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0 = kiln.concat %a, %a {axis = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that concat inputs share a rank.
func.func @concat_rank(%a: tensor<2xf32>, %b: tensor<2x1xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{concat input 1 has rank 2, expected 1}}
  %0 = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that concat inputs agree off the axis.
func.func @concat_size(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{concat input 1 has size 4 in dim 1, expected 3}}
  %0 = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Checks that split needs sizes.
func.func @split_empty(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 1 or more results}}
  kiln.split %x {axis = 0 : i64, sizes = array<i64>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Checks that split sizes are not negative.
func.func @split_negative(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{split sizes must not be negative, got -1}}
  %0:2 = kiln.split %x {axis = 0 : i64, sizes = array<i64: 5, -1>} : (tensor<4xf32>) -> (tensor<5xf32>, tensor<?xf32>)
  return
}

// -----

// Checks that split sizes cover the dim.
func.func @split_total(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{split sizes add up to 3 but dim 0 has 4}}
  %0:2 = kiln.split %x {axis = 0 : i64, sizes = array<i64: 1, 2>} : (tensor<4xf32>) -> (tensor<1xf32>, tensor<2xf32>)
  return
}

// -----

// Checks that split's axis is in range.
func.func @split_axis(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 3 is out of range for rank 1}}
  %0:2 = kiln.split %x {axis = 3 : i64, sizes = array<i64: 2, 2>} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return
}

// -----

// Checks that slice has one start, end and step per dim.
func.func @slice_arity(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{slice needs one start, end and step per dim (2), got 1, 2 and 2}}
  %0 = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Checks that slice steps are not zero.
func.func @slice_step(%x: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{slice step of dim 0 is zero}}
  %0 = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 0>} : (tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Checks that gather's axis is in range.
func.func @gather_axis(%x: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<4x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = kiln.gather %x, %i {axis = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Checks that gather indices are integers.
func.func @gather_indices(%x: tensor<4x3xf32>, %i: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Checks that pad has two pads per dim.
func.func @pad_arity(%x: tensor<4xf32>) -> tensor<6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{pad needs 2 pads for rank 1, got 1}}
  %0 = kiln.pad %x {pads = array<i64: 2>} : (tensor<4xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Checks that negative pads cannot crop below zero.
func.func @pad_crop(%x: tensor<4xf32>) -> tensor<0xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{pads crop dim 0 of size 4 below zero}}
  %0 = kiln.pad %x {pads = array<i64: -3, -3>} : (tensor<4xf32>) -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

// Checks that argmax's axis is in range.
func.func @argmax_axis(%x: tensor<4xf32>) -> tensor<4xi64> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0 = kiln.argmax %x {axis = 1 : i64} : (tensor<4xf32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @kernel_arity(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.kernel' op has 1 operands but its body takes 2}}
  %k = kiln.kernel epilogue(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    kiln.yield %a : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}

// -----

func.func @kernel_operand_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.kernel' op operand 0 is 'tensor<4xf32>' but the body takes 'tensor<8xf32>'}}
  %k = kiln.kernel epilogue(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<8xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}

// -----

func.func @kernel_yield_type(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'kiln.kernel' op yields 'tensor<4xf32>' but returns 'tensor<8xf32>'}}
  %k = kiln.kernel epilogue(%x) : (tensor<4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield %a : tensor<4xf32>
  }
  return %k : tensor<8xf32>
}

// -----

// Checks that a kernel's kind is one of the dialect's kernel kinds.
func.func @kernel_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected}}
  %k = kiln.kernel gather(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield %a : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}

// -----

// Checks that kiln.library_call belongs on what a backend can claim.
func.func @library_call_on_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.relu' op 'kiln.library_call' belongs on a kiln.kernel, kiln.conv, kiln.matmul, a pool, kiln.concat, kiln.reduce_mean or kiln.mul}}
  %y = kiln.relu %x {kiln.library_call = 0 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that a library call's index is a non-negative integer.
func.func @library_call_index(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.matmul' op 'kiln.library_call' must be a non-negative integer}}
  %y = kiln.matmul %x, %w {kiln.library_call = "first"} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Checks that kiln.residual_operand names one of the op's operands.
func.func @residual_operand(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.library_call' op 'kiln.residual_operand' names operand 5 of 2}}
  %y = kiln.library_call 0(%x, %w) {kiln.residual_operand = 5 : i64} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Checks that kiln.output_into belongs on a claimed convolution (one with
// kiln.library_inputs) or its library call.
func.func @output_into_unclaimed(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'kiln.relu' op 'kiln.output_into' belongs on a claimed convolution or its kiln.library_call}}
  %y = kiln.relu %x {kiln.output_into = 0 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Checks that kiln.output_window belongs on a claimed convolution or pool.
func.func @output_window_unclaimed(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  // expected-error @+1 {{'kiln.relu' op 'kiln.output_window' belongs on a claimed convolution or pool, or its kiln.library_call}}
  %y = kiln.relu %x {kiln.output_window = array<i64: 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  return %y : tensor<1x2x?x?xf32>
}

// -----

// Checks that kiln.output_window holds four values per spatial dim and the
// ceil mode (here the three of an older form).
func.func @output_window_size(%x: tensor<1x2x?x?xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x?x?xf32> {
  // expected-error @+1 {{'kiln.library_call' op 'kiln.output_window' must hold an extent, a stride, a low and a high padding (each non-negative) per spatial dim, then the ceil mode}}
  %y = kiln.library_call 0(%x, %w) {kiln.library_inputs = 2 : i64, kiln.output_window = array<i64: 3, 3, 1, 1, 2, 2>} : (tensor<1x2x?x?xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x?x?xf32>
  return %y : tensor<1x2x?x?xf32>
}

// -----

// Checks that kiln.output_window's strides are at least 1.
func.func @output_window_stride(%x: tensor<1x2x?x?xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x?x?xf32> {
  // expected-error @+1 {{'kiln.library_call' op 'kiln.output_window' has an extent or stride below 1}}
  %y = kiln.library_call 0(%x, %w) {kiln.library_inputs = 2 : i64, kiln.output_window = array<i64: 3, 3, 1, 0, 1, 1, 1, 1, 0>} : (tensor<1x2x?x?xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x?x?xf32>
  return %y : tensor<1x2x?x?xf32>
}

// -----

// Checks that kiln.output_window's ceil mode is 0 or 1.
func.func @output_window_ceil(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  // expected-error @+1 {{'kiln.library_call' op 'kiln.output_window' has a ceil mode other than 0 or 1}}
  %y = kiln.library_call 0(%x) {kiln.library_inputs = 1 : i64, kiln.output_window = array<i64: 3, 3, 2, 2, 0, 0, 0, 0, 2>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  return %y : tensor<1x2x?x?xf32>
}

// -----

// Checks that kiln.output_into is a channel, not negative.
func.func @output_into_negative(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'kiln.library_call' op 'kiln.output_into' must be a non-negative integer}}
  %y = kiln.library_call 0(%x, %w) {kiln.library_inputs = 2 : i64, kiln.output_into = -1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Checks that kiln.outer_dims is within a reduction kernel's rank.
func.func @outer_dims_range(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'kiln.kernel' op 'kiln.outer_dims' = 3 is outside [1, 2]}}
  %k = kiln.kernel reduction(%x) {kiln.outer_dims = 3 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %s = kiln.softmax %a {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    kiln.yield %s : tensor<2x4xf32>
  }
  return %k : tensor<2x4xf32>
}

// -----

// Checks that kiln.outer_dims belongs on reduction kernels only.
func.func @outer_dims_on_elementwise(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.kernel' op 'kiln.outer_dims' belongs on a reduction kiln.kernel}}
  %k = kiln.kernel elementwise(%x) {kiln.outer_dims = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = kiln.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}

// -----

// Checks that a function argument's kiln.name is a string.
// expected-error @+1 {{'func.func' op 'kiln.name' must be a string}}
func.func @name_type(%x: tensor<4xf32> {kiln.name = 3 : i64}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Checks that kiln.name belongs on arguments and results, not on ops.
func.func @name_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.relu' op 'kiln.name' belongs on a function's arguments and results}}
  %y = kiln.relu %x {kiln.name = "y"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that a kiln attribute the dialect does not declare is an error.
func.func @unknown_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.relu' op has an unknown kiln attribute 'kiln.fast'}}
  %y = kiln.relu %x {kiln.fast} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that a memory plan is a dictionary with the arena's size.
// expected-error @+1 {{'func.func' op 'kiln.memory_plan' must be a dictionary with arena_bytes}}
func.func @memory_plan() attributes {kiln.memory_plan = {planned = 1 : i64}} {
  return
}

// -----

// Checks that a dropout ratio is in [0, 1).
func.func @dropout_ratio(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.dropout' op ratio must be in [0, 1), got 1}}
  %y = kiln.dropout %x {ratio = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that random_uniform's result has its shape attribute's dims.
func.func @random_shape(%step: tensor<i64>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'kiln.random_uniform' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{'kiln.random_uniform' op failed to infer returned types}}
  %u = kiln.random_uniform %step {seed = 0 : i64, shape = array<i64: 2, 3>} : (tensor<i64>) -> tensor<2x4xf32>
  return %u : tensor<2x4xf32>
}

// -----

// Checks that an iota's shape operand is a 1-D tensor of static length.
func.func @iota_shape_rank(%s: tensor<?xi64>) -> tensor<?xi64> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{a shape operand must be a 1-D tensor of static length}}
  %0 = kiln.iota %s {axis = 0 : i64} : (tensor<?xi64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// Checks that a constant negative iota size is refused when compiling.
func.func @iota_negative() -> tensor<?xi64> {
  %s = kiln.constant dense<[-2]> : tensor<1xi64>
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{iota: a size is negative (-2)}}
  %0 = kiln.iota %s {axis = 0 : i64} : (tensor<1xi64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// Checks that an iota's axis is one of its dims.
func.func @iota_axis(%s: tensor<2xi64>) -> tensor<?x?xi64> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = kiln.iota %s {axis = 2 : i64} : (tensor<2xi64>) -> tensor<?x?xi64>
  return %0 : tensor<?x?xi64>
}

// -----

// Checks that a constant shape of a dynamic reshape has at most one -1.
func.func @dynamic_reshape_two_inferred(%x: tensor<2x6xf32>) -> tensor<?x?xf32> {
  %s = kiln.constant dense<[-1, -1]> : tensor<2xi64>
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dynamic_reshape: more than one -1}}
  %0 = kiln.dynamic_reshape %x, %s : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Checks that a constant shape of a dynamic reshape keeps the element count.
func.func @dynamic_reshape_count(%x: tensor<2x6xf32>) -> tensor<?x?xf32> {
  %s = kiln.constant dense<[5, 2]> : tensor<2xi64>
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dynamic_reshape: 12 elements cannot take the shape of 10}}
  %0 = kiln.dynamic_reshape %x, %s : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Checks that a bitcast keeps the bit width (a bool becomes 8 bits).
func.func @bitcast_width(%x: tensor<4xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{bit widths differ: 'f32' to 'i64'}}
  %0 = kiln.bitcast %x : tensor<4xf32> to tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Checks that conv_transpose's weight holds the input's channels first.
func.func @conv_transpose_channels(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x6x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{weight has 4 input channels, input has 3}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64}
      : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  return %0 : tensor<1x3x6x6xf32>
}

// -----

// Checks that conv_transpose's spatial dims are static (its expansion
// zero-stuffs them).
func.func @conv_transpose_dynamic(%x: tensor<1x3x?x4xf32>, %w: tensor<3x3x3x3xf32>) -> tensor<1x3x?x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{conv_transpose needs a static weight and static input dims past the batch}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64}
      : (tensor<1x3x?x4xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x?x6xf32>
  return %0 : tensor<1x3x?x6xf32>
}

// -----

// Checks that conv_transpose has one output padding per spatial dim.
func.func @conv_transpose_attrs(%x: tensor<1x3x4xf32>, %w: tensor<3x3x3xf32>) -> tensor<1x3x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expected 1 strides, dilations and output paddings and 2 pads for 1 spatial dims}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64}
      : (tensor<1x3x4xf32>, tensor<3x3x3xf32>) -> tensor<1x3x6xf32>
  return %0 : tensor<1x3x6xf32>
}

// -----

// Checks that topk's k fits the axis.
func.func @topk_k(%x: tensor<2x5xf32>) -> (tensor<2x6xf32>, tensor<2x6xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{topk k = 6 is outside [0, 5]}}
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 6 : i64} : (tensor<2x5xf32>) -> (tensor<2x6xf32>, tensor<2x6xi64>)
  return %v, %i : tensor<2x6xf32>, tensor<2x6xi64>
}

// -----

// Checks that topk takes k once: the attribute or the count.
func.func @topk_both(%x: tensor<2x5xf32>, %k: tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{topk takes k either as the attribute or as the operand count, not both or neither}}
  %v, %i = kiln.topk %x, %k {axis = 1 : i64, k = 2 : i64} : (tensor<2x5xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  return %v, %i : tensor<2x?xf32>, tensor<2x?xi64>
}

// -----

// Checks that topk's k is not negative, along an axis of any length.
func.func @topk_negative(%x: tensor<2x?xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{topk k = -1 is negative}}
  %v, %i = kiln.topk %x {axis = 1 : i64, k = -1 : i64} : (tensor<2x?xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>)
  return %v, %i : tensor<2x1xf32>, tensor<2x1xi64>
}
