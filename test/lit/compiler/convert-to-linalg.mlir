// RUN: kiln-opt %s -split-input-file -kiln-convert-to-linalg | FileCheck %s

// Checks that a broadcasting binary op becomes one generic that reads the
// smaller operand through its indexing map.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @broadcast_add
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<4x3xf32>)
// CHECK: arith.addf
// CHECK-NOT: kiln.
func.func @broadcast_add(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Checks that a size-1 dim that stretches is read at index 0, and that a
// dynamic dim takes its size from the operand.
// CHECK-DAG: #[[STRETCH:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func @stretch_dynamic
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D:.*]] = tensor.dim %arg0, %[[C0]] : tensor<?x3xf32>
// CHECK: tensor.empty(%[[D]]) : tensor<?x3xf32>
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[STRETCH]], {{.*}}]
// CHECK: arith.mulf
func.func @stretch_dynamic(%a: tensor<?x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %0 = kiln.mul %a, %b : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Checks the scalar forms that are not one instruction: integer division
// and comparison follow signedness, float compare ne is unordered, casts
// pick the right conversion.
// CHECK-LABEL: func @scalar_forms
// CHECK: arith.divsi
// CHECK: arith.cmpf une
// CHECK: arith.cmpi slt
// CHECK: arith.fptosi {{.*}} : f32 to i32
// CHECK: arith.sitofp {{.*}} : i64 to f32
// CHECK: arith.cmpf une
func.func @scalar_forms(%i: tensor<4xi64>, %f: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xi1>, tensor<4xi1>, tensor<4xi32>, tensor<4xf32>, tensor<4xi1>) {
  %0 = kiln.div %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = kiln.compare ne, %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = kiln.compare lt, %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %3 = kiln.cast %f : tensor<4xf32> to tensor<4xi32>
  %4 = kiln.cast %i : tensor<4xi64> to tensor<4xf32>
  %5 = kiln.cast %f : tensor<4xf32> to tensor<4xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi64>, tensor<4xi1>, tensor<4xi1>, tensor<4xi32>, tensor<4xf32>, tensor<4xi1>
}

// -----

// Checks that a reduction fills its accumulator with the identity and
// reduces with reduction iterators; max starts at -inf and propagates NaN.
// CHECK-LABEL: func @reductions
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<2x1xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[INIT]] : tensor<2x1xf32>)
// CHECK: arith.maximumf
func.func @reductions(%x: tensor<2x5xf32>) -> tensor<2x1xf32> {
  %0 = kiln.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x5xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// Checks data movement: transpose, reshape through a 1-D collapse, and
// slices.
// CHECK-LABEL: func @data_movement
// CHECK: linalg.transpose ins(%arg0 : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<6xf32> into tensor<3x2xf32>
// CHECK: tensor.extract_slice %arg0[0, 1] [2, 2] [1, 1] : tensor<2x3xf32> to tensor<2x2xf32>
func.func @data_movement(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x2xf32>) {
  %0 = kiln.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = kiln.reshape %x {shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = kiln.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0, %1, %2 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x2xf32>
}


// -----

// Checks that a convolution with a static batch groups its operands with
// static output shapes (a regression: a constant batch size used to be
// passed as a dynamic size, which bufferisation rejects).
// CHECK-LABEL: func @conv_static_batch
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 1, 4, 6, 6]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x8x3x3xf32>
func.func @conv_static_batch(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32>
  return %0 : tensor<1x8x3x3xf32>
}

// -----

// Checks that concat of static tensors inserts static slices (a
// regression: sizes passed as index values made the slice's type dynamic
// and the insert invalid).
// CHECK-LABEL: func @concat_static
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2xf32>
// The offsets are constants too (kiln.output_into names one).
// CHECK: %[[I:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x2xf32>
// CHECK: tensor.insert_slice %arg1 into %[[I]][2, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x2xf32>
func.func @concat_static(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<4x2xf32> {
  %0 = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// Checks that the offsets stay constants until an input dynamic along the
// axis, and add its size after it.
// CHECK-LABEL: func @concat_dynamic_middle
// CHECK-SAME: (%[[A:.*]]: tensor<2x2xf32>, %[[B:.*]]: tensor<?x2xf32>, %[[C:.*]]: tensor<3x2xf32>)
// CHECK: %[[I:.*]] = tensor.insert_slice %[[A]] into %{{.*}}[0, 0] [2, 2]
// CHECK: %[[J:.*]] = tensor.insert_slice %[[B]] into %[[I]][2, 0] [%{{.*}}, 2]
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[N:.*]] = tensor.dim %[[B]], %{{.*}}
// CHECK: %[[AT:.*]] = arith.addi %[[TWO]], %[[N]] : index
// CHECK: tensor.insert_slice %[[C]] into %[[J]][%[[AT]], 0] [3, 2]
func.func @concat_dynamic_middle(%a: tensor<2x2xf32>, %b: tensor<?x2xf32>, %c: tensor<3x2xf32>) -> tensor<?x2xf32> {
  %0 = kiln.concat %a, %b, %c {axis = 0 : i64} : (tensor<2x2xf32>, tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// Checks that an input with no elements along the axis inserts nothing:
// its constant offset, the axis's full size at the end, would be out of
// bounds (ONNX 1.23's rotary embedding concatenates such a slice).
// CHECK-LABEL: func @concat_empty_piece
// CHECK-SAME: (%[[A:.*]]: tensor<2x0xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK: tensor.insert_slice %[[B]] into %{{.*}}[0, 0] [2, 3] [1, 1]
// CHECK-NOT: tensor.insert_slice
// CHECK: return
func.func @concat_empty_piece(%a: tensor<2x0xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.concat %a, %b, %a {axis = 1 : i64} : (tensor<2x0xf32>, tensor<2x3xf32>, tensor<2x0xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Checks that an operand dim that is dynamic where the result's is a static
// size other than 1 is read at index (size == 1 ? 0 : i): at run time it
// may broadcast. (It used to be mapped like an equal dim, and a 1 read past
// its end.)
// CHECK-LABEL: func @runtime_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[C:.*]]: tensor<?x4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]] : tensor<3x4xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[SIZE:.*]] = tensor.dim %[[C]], %{{.*}}
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[SIZE]]
// CHECK: %[[ROW:.*]] = arith.select %[[ONE]], %{{.*}}, %[[I]]
// CHECK: tensor.extract %[[C]][%[[ROW]], %{{.*}}]
// CHECK-NOT: tensor.cast
func.func @runtime_broadcast(%a: tensor<3x4xf32>, %c: tensor<?x4xf32>) -> tensor<3x4xf32> {
  %0 = kiln.add %a, %c : (tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Checks that unsigned element types are lowered with unsigned semantics
// (divui, maxui, uitofp) and leave only signless types behind.
// CHECK-LABEL: func @unsigned
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xf32>)
// CHECK: arith.divui
// CHECK: arith.maxui
// CHECK: arith.uitofp
// CHECK-NOT: ui8
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xf32>) {
  %0 = kiln.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = kiln.max %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = kiln.cast %a : tensor<4xui8> to tensor<4xf32>
  return %0, %1, %2 : tensor<4xui8>, tensor<4xui8>, tensor<4xf32>
}

// -----

// Checks that where two inputs are dynamic at the same dim, either may be 1
// at run time: both are read at index (size == 1 ? 0 : i) and the result
// dim is the larger size.
// CHECK-LABEL: func @dynamic_meets_dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<?x4xf32>)
// CHECK-DAG: %[[DA:.*]] = tensor.dim %[[A]]
// CHECK-DAG: %[[DB:.*]] = tensor.dim %[[B]]
// CHECK: %[[N:.*]] = arith.maxui %[[DA]], %[[DB]]
// CHECK: tensor.empty(%[[N]])
// CHECK: linalg.generic
// CHECK: arith.select
// CHECK: tensor.extract %[[A]]
// CHECK: arith.select
// CHECK: tensor.extract %[[B]]
func.func @dynamic_meets_dynamic(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = kiln.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Checks that where the inputs dynamic at a dim have their size from the
// same source (x and sigmoid(x); y = x + relu(x) and sigmoid(x) through a
// broadcast of a static 1), neither can be 1 alone: both are read through
// indexing maps (so the sigmoid's loop can fuse into the product's), no
// run-time broadcast. (x * sigmoid(x) at a dynamic batch was two loop
// nests: EfficientNet's every SiLU.)
// CHECK-LABEL: func @same_source
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[O:.*]]: tensor<1x4xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[S]] : tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?x4xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[R]] : tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: %[[YO:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[O]] : tensor<?x4xf32>, tensor<1x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[YO]], %[[S]] : tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @same_source(%x: tensor<?x4xf32>, %o: tensor<1x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %s = kiln.sigmoid %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %m = kiln.mul %x, %s : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %r = kiln.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %y = kiln.add %x, %r : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %yo = kiln.add %y, %o : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %z = kiln.sub %yo, %s : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %m, %z : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Checks that a result type less refined than it could be does not count
// as a source: %w's dim 0 is %x's or the static 3 (if %x's is 1), so its
// product with %x may still broadcast at run time.
// CHECK-LABEL: func @static_operand_not_a_source
// CHECK: tensor.extract
func.func @static_operand_not_a_source(%x: tensor<?x4xf32>, %t: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %w = kiln.add %x, %t : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %m = kiln.mul %w, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %m : tensor<?x4xf32>
}

// -----

// Checks that a library call's batch is its first operand's only when no
// other operand of its rank has a dynamic batch from elsewhere: a batched
// matmul of [1, 2, 2] and [n, 2, 2] is [n, 2, 2], so its product with its
// first operand may broadcast at run time; with a matrix (or a batch from
// the same source) it may not.
// CHECK-LABEL: func @library_call_batch_broadcasts
// CHECK: tensor.extract
func.func @library_call_batch_broadcasts(%a: tensor<?x2x2xf32>, %b: tensor<?x2x2xf32>) -> tensor<?x2x2xf32> {
  %c = kiln.library_call 0(%a, %b) : (tensor<?x2x2xf32>, tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
  %m = kiln.mul %c, %a : (tensor<?x2x2xf32>, tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
  return %m : tensor<?x2x2xf32>
}

// CHECK-LABEL: func @library_call_batch_same
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @library_call_batch_same(%a: tensor<?x2x2xf32>, %w: tensor<2x2xf32>) -> (tensor<?x2x2xf32>, tensor<?x2x2xf32>) {
  %c = kiln.library_call 0(%a, %w) : (tensor<?x2x2xf32>, tensor<2x2xf32>) -> tensor<?x2x2xf32>
  %m = kiln.mul %c, %a : (tensor<?x2x2xf32>, tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
  %r = kiln.relu %a : (tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
  %d = kiln.library_call 0(%a, %r) : (tensor<?x2x2xf32>, tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
  %n = kiln.mul %d, %a : (tensor<?x2x2xf32>, tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
  return %m, %n : tensor<?x2x2xf32>, tensor<?x2x2xf32>
}

// -----

// Checks that random_uniform is one generic over the result's indices:
// the row-major index, SplitMix64's mix of seed, counter and index, its top
// 24 bits scaled to [0, 1).
// CHECK-LABEL: func @random_uniform
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<i64>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.constant -7046029254386353131 : i64
// CHECK: arith.shrui
// CHECK: arith.constant -4658895280553007687 : i64
// CHECK: arith.constant -7723592293110705685 : i64
// CHECK: arith.uitofp {{.*}} : i64 to f32
// CHECK: arith.constant 5.96046448E-8 : f32
func.func @random_uniform(%step: tensor<i64>) -> tensor<2x3xf32> {
  %u = kiln.random_uniform %step {seed = 1 : i64, shape = array<i64: 2, 3>} : (tensor<i64>) -> tensor<2x3xf32>
  return %u : tensor<2x3xf32>
}

// -----

// Checks the run-time shape ops: a dynamic reshape resolves 0 and -1 from
// the shape tensor's entries, checks them (a call of kiln_shape_error,
// declared once, when they do not keep the count) and reshapes through a
// shape tensor; an iota reads its sizes (checked not negative) and yields
// the index along its axis; shape_of reads the dims.
// CHECK-LABEL: func.func private @kiln_shape_error(i32)
// CHECK-LABEL: func @runtime_shapes
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<2xi64>
// CHECK: arith.divui
// CHECK: scf.if
// CHECK-NEXT: arith.constant 2 : i32
// CHECK-NEXT: func.call @kiln_shape_error
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x6xf32> into tensor<12xf32>
// CHECK: tensor.reshape %{{.*}}(%{{.*}}) : (tensor<12xf32>, tensor<2xindex>) -> tensor<?x?xf32>
// CHECK: arith.cmpi sge
// CHECK: scf.if
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: func.call @kiln_shape_error
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xi64>
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: tensor.dim %{{.*}}, %{{.*}} : tensor<?x?xf32>
// CHECK: tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xi64>
func.func @runtime_shapes(%x: tensor<2x6xf32>, %s: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<?x?xi64>, tensor<2xi64>) {
  %0 = kiln.dynamic_reshape %x, %s : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %1 = kiln.iota %s {axis = 0 : i64} : (tensor<2xi64>) -> tensor<?x?xi64>
  %2 = kiln.shape_of %0 : (tensor<?x?xf32>) -> tensor<2xi64>
  return %0, %1, %2 : tensor<?x?xf32>, tensor<?x?xi64>, tensor<2xi64>
}

// -----

// Checks a static reshape of a dynamic tensor (the expanded form of
// Attention-23 builds one): the element count is checked when the model
// runs, then the flat tensor is cast to its static length (this produced
// an invalid tensor.expand_shape before).
// CHECK-LABEL: func.func private @kiln_shape_error(i32)
// CHECK-LABEL: func @static_reshape_of_dynamic
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x6xf32> into tensor<?xf32>
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK-NEXT: arith.constant 2 : i32
// CHECK-NEXT: func.call @kiln_shape_error
// CHECK: tensor.cast %{{.*}} : tensor<?xf32> to tensor<12xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [2, 3, 2] : tensor<12xf32> into tensor<2x3x2xf32>
func.func @static_reshape_of_dynamic(%x: tensor<?x6xf32>) -> tensor<2x3x2xf32> {
  %0 = kiln.reshape %x {shape = array<i64: 2, 3, 2>} : (tensor<?x6xf32>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}

// -----

// Checks the wrap pad (opset 19): the source index modulo the dim, made
// non-negative.
// CHECK-LABEL: func @pad_wrap
// CHECK: linalg.generic
// CHECK: arith.remsi
// CHECK: arith.addi
// CHECK: arith.remsi
// CHECK: tensor.extract
func.func @pad_wrap(%x: tensor<3x4xf32>) -> tensor<3x7xf32> {
  %0 = kiln.pad %x mode wrap {pads = array<i64: 0, 2, 0, 1>} : (tensor<3x4xf32>) -> tensor<3x7xf32>
  return %0 : tensor<3x7xf32>
}

// -----

// Checks bitwise ops on integers and signed shifts (opsets 18 and 28): not
// is xor with all ones; a signed right shift is arithmetic and, for an
// amount out of range, gives the sign fill (x >> (width - 1)).
// CHECK-LABEL: func @bitwise
// CHECK: arith.constant -1 : i32
// CHECK: arith.xori
// CHECK: arith.andi
// CHECK: arith.shrsi
// CHECK: arith.cmpi uge
// CHECK: arith.constant 31 : i32
// CHECK: arith.shrsi
// CHECK: arith.select
func.func @bitwise(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = kiln.not %x : (tensor<4xi32>) -> tensor<4xi32>
  %1 = kiln.and %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = kiln.shift_right %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// Checks bitcast: the bits reinterpreted (a bool zero-extended to 8 bits).
// CHECK-LABEL: func @bitcast
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.extui %{{.*}} : i1 to i8
func.func @bitcast(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi8>) {
  %0 = kiln.bitcast %x : tensor<4xf32> to tensor<4xi32>
  %1 = kiln.bitcast %b : tensor<4xi1> to tensor<4xi8>
  return %0, %1 : tensor<4xi32>, tensor<4xi8>
}

// -----

// Checks a dilated average pool (AveragePool-19): the window sums and the
// divisor counts both read every second position.
// CHECK-LABEL: func @avg_pool_dilated
// CHECK-COUNT-2: linalg.generic
// CHECK: arith.divf
func.func @avg_pool_dilated(%x: tensor<1x3x8xf32>) -> tensor<1x3x3xf32> {
  %0 = kiln.avg_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 2>}
      : (tensor<1x3x8xf32>) -> tensor<1x3x3xf32>
  return %0 : tensor<1x3x3xf32>
}

// -----

// Checks a ceil-mode max pool over spatial dims known only at run time (it
// was refused): ONNX's window count ceil((H + 2 - 3) / 2) + 1, less a last
// window that would start past the input and the low padding, gives the
// extra high padding, computed when the model runs.
// CHECK-LABEL: func @max_pool_ceil_dynamic
// CHECK: %[[H:.*]] = tensor.dim %arg0, %c2
// CHECK: %[[PADDED:.*]] = arith.addi %[[H]], %c2
// CHECK: %[[REACH:.*]] = arith.subi %[[PADDED]], %c3
// CHECK: arith.ceildivsi %[[REACH]], %c2
// CHECK: arith.cmpi sge
// CHECK: arith.select
// CHECK: arith.maxsi
// CHECK: arith.maxsi
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, %{{.*}}, %{{.*}}]
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @max_pool_ceil_dynamic(%x: tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32> {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>,
                         ceil_mode = true}
      : (tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  return %0 : tensor<1x8x?x?xf32>
}

// -----

// Checks partial slices of a dim of run-time length (a regression: they
// failed to legalize): the bounds are clamped at run time as ONNX's Slice
// does, a forward slice is an extract_slice with computed offset and size,
// a reversed one a gathering generic over a buffer of the computed size.
// CHECK-LABEL: func @slice_dynamic_partial
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: arith.addi %[[N]]
// CHECK: arith.ceildivsi
// CHECK: tensor.extract_slice %arg0[%{{.*}}, 0] [%{{.*}}, 3] [1, 1] : tensor<?x3xf32> to tensor<?x3xf32>
// CHECK: arith.ceildivsi
// CHECK: tensor.empty(%{{.*}}) : tensor<?x3xf32>
// CHECK: linalg.generic
// CHECK: tensor.extract %arg0
func.func @slice_dynamic_partial(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %0 = kiln.slice %x {starts = array<i64: -3, 0>, ends = array<i64: -1, 3>, steps = array<i64: 1, 1>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = kiln.slice %x {starts = array<i64: -1, 0>, ends = array<i64: -9223372036854775808, 3>, steps = array<i64: -2, 1>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0, %1 : tensor<?x3xf32>, tensor<?x3xf32>
}

// -----

// Checks a slice of a dim of run-time length whose result the IR declares
// static (kiln IR from kiln_torch: x[0] of a dynamic batch; a regression:
// extract_slice got the run-time count against the static type): the
// declared size, checked when the model runs.
// CHECK-LABEL: func @slice_dynamic_declared_static
// CHECK: arith.ceildivsi
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: arith.cmpi eq, %{{.*}}, %[[C1]] : index
// CHECK: scf.if
// CHECK: func.call @kiln_shape_error
// CHECK: tensor.extract_slice %arg0[%{{.*}}, 0] [1, 7] [1, 1] : tensor<?x7xf32> to tensor<1x7xf32>
func.func @slice_dynamic_declared_static(%x: tensor<?x7xf32>) -> tensor<1x7xf32> {
  %0 = kiln.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 1, 9223372036854775807>, steps = array<i64: 1, 1>} : (tensor<?x7xf32>) -> tensor<1x7xf32>
  return %0 : tensor<1x7xf32>
}

// -----

// Checks a convolution whose output channels (the weight's dim 0) are
// known only at run time (a regression: it failed to legalize): one group,
// the weight grouped with its run-time size.
// CHECK-LABEL: func @conv_dynamic_out_channels
// CHECK: %[[O:.*]] = tensor.dim %arg1, %c0
// CHECK: tensor.expand_shape %arg1 {{\[\[}}0, 1], [2], [3], [4]] output_shape [1, %[[O]], 2, 3, 3]
// CHECK: linalg.generic
// CHECK: tensor.collapse_shape {{.*}} into tensor<?x?x2x2xf32>
func.func @conv_dynamic_out_channels(%x: tensor<?x2x4x4xf32>, %w: tensor<?x2x3x3xf32>) -> tensor<?x?x2x2xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x2x4x4xf32>, tensor<?x2x3x3xf32>) -> tensor<?x?x2x2xf32>
  return %0 : tensor<?x?x2x2xf32>
}

// -----

// Checks a grouped (depthwise) convolution whose output channels are known
// only at run time (a regression: it failed to legalize): each group's
// channels are the weight's dim 0 divided by the groups.
// CHECK-LABEL: func @conv_dynamic_out_channels_grouped
// CHECK: %[[O:.*]] = tensor.dim %arg1, %c0
// CHECK: %[[G:.*]] = arith.divui %[[O]], %c4
// CHECK: tensor.expand_shape %arg1 {{\[\[}}0, 1], [2], [3]] output_shape [4, %[[G]], 1, 3]
// CHECK: tensor.empty(%{{.*}}, %[[G]]) : tensor<?x4x?x6xf32>
// CHECK: linalg.generic
// CHECK: tensor.collapse_shape {{.*}} into tensor<?x?x6xf32>
func.func @conv_dynamic_out_channels_grouped(%x: tensor<?x4x8xf32>, %w: tensor<?x1x3xf32>) -> tensor<?x?x6xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 4 : i64} : (tensor<?x4x8xf32>, tensor<?x1x3xf32>) -> tensor<?x?x6xf32>
  return %0 : tensor<?x?x6xf32>
}

// -----

// Checks a convolution over spatial dims known only at run time: each
// output dim counts the windows of the padded input's, (D - 3) floordiv 2
// + 1, at least 0, and sizes the accumulator.
// CHECK-LABEL: func @conv_dynamic_spatial
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[H:.*]] = tensor.dim %[[P]], %c2
// CHECK: %[[HR:.*]] = arith.subi %[[H]], %c3
// CHECK: %[[HD:.*]] = arith.floordivsi %[[HR]], %c2
// CHECK: %[[HC:.*]] = arith.addi %[[HD]], %c1
// CHECK: %[[OH:.*]] = arith.maxsi %[[HC]], %c0
// CHECK: %[[OW:.*]] = arith.maxsi
// CHECK: tensor.empty(%[[OH]], %[[OW]]) : tensor<1x1x4x?x?xf32>
// CHECK: linalg.generic
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x4x?x?xf32>
func.func @conv_dynamic_spatial(%x: tensor<1x2x?x?xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x?x?xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x?x?xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}

// -----

// Checks split and slice pieces with no elements next to a run-time dim
// (regressions: the split's empty piece was a tensor.empty without its
// dynamic size; the slice, starting past the end, an extract_slice out of
// bounds): an empty tensor sized from the input.
// CHECK-LABEL: func @empty_pieces_dynamic
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: tensor.extract_slice %arg0[0, 0] [%{{.*}}, 8] [1, 1]
// CHECK: tensor.empty(%{{.*}}) : tensor<?x0xf32>
// CHECK: tensor.empty(%{{.*}}) : tensor<?x0xf32>
// CHECK-NOT: tensor.extract_slice
func.func @empty_pieces_dynamic(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x0xf32>, tensor<?x0xf32>) {
  %0:2 = kiln.split %x {axis = 1 : i64, sizes = array<i64: 8, 0>} : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x0xf32>)
  %1 = kiln.slice %x {starts = array<i64: 0, 8>, ends = array<i64: 9223372036854775807, 8>, steps = array<i64: 1, 1>} : (tensor<?x8xf32>) -> tensor<?x0xf32>
  return %0#0, %0#1, %1 : tensor<?x8xf32>, tensor<?x0xf32>, tensor<?x0xf32>
}

// -----

// Checks that an i64 min-reduction starts from the i64 maximum (a
// regression: 2^63 - 1 went through a double, became 2^63, and the
// reduction started from the minimum, so every result was -2^63).
// CHECK-LABEL: func @reduce_min_i64
// CHECK: arith.constant 9223372036854775807 : i64
// CHECK: linalg.generic
// CHECK: arith.minsi
func.func @reduce_min_i64(%x: tensor<4x3xi64>) -> tensor<4xi64> {
  %0 = kiln.reduce_min %x {axes = array<i64: 1>} : (tensor<4x3xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Checks that a float16 matmul accumulates in float32 and rounds once (it
// summed in float16, an ulp or two off numpy's and ONNX Runtime's result).
// CHECK-LABEL: func @matmul_f16
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x8xf16>, tensor<8x3xf16>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf16>)
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @matmul_f16(%a: tensor<2x8xf16>, %b: tensor<8x3xf16>) -> tensor<2x3xf16> {
  %0 = kiln.matmul %a, %b : (tensor<2x8xf16>, tensor<8x3xf16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// Checks that float16 / bfloat16 sums and means accumulate in float32 and
// round once (they summed in float16: softmax's denominator was an ulp off
// numpy's, whose half-precision sums are float32), while max stays exact
// in its own type.
// CHECK-LABEL: func @reduce_f16
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x64xf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<4x64xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.divf {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x64xf16>) outs(%{{.*}} : tensor<4xf16>)
// CHECK: arith.maximumf {{.*}} : f16
func.func @reduce_f16(%a: tensor<4x64xf16>, %b: tensor<4x64xbf16>) -> (tensor<4xf16>, tensor<4xbf16>, tensor<4xf16>) {
  %0 = kiln.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : (tensor<4x64xf16>) -> tensor<4xf16>
  %1 = kiln.reduce_mean %b {axes = array<i64: 1>, keepdims = false} : (tensor<4x64xbf16>) -> tensor<4xbf16>
  %2 = kiln.reduce_max %a {axes = array<i64: 1>, keepdims = false} : (tensor<4x64xf16>) -> tensor<4xf16>
  return %0, %1, %2 : tensor<4xf16>, tensor<4xbf16>, tensor<4xf16>
}

// -----

// Checks that casts to and from float8 are integer arithmetic on the
// encodings (LLVM has no float8): widening builds float32 bits, narrowing
// rounds (roundeven for the subnormal steps) and saturates with `saturate`.
// CHECK-LABEL: func @cast_f8
// CHECK: arith.bitcast {{.*}} : f8E4M3FN to i8
// CHECK: arith.extui {{.*}} : i8 to i32
// CHECK: arith.bitcast {{.*}} : i32 to f32
// CHECK-NOT: arith.extf {{.*}}f8E4M3FN
// CHECK-LABEL: func @cast_to_f8
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: math.roundeven
// CHECK: arith.trunci {{.*}} : i32 to i8
// CHECK: arith.bitcast {{.*}} : i8 to f8E4M3FN
// CHECK-NOT: arith.truncf
func.func @cast_f8(%x: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  %0 = kiln.cast %x : tensor<4xf8E4M3FN> to tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @cast_to_f8(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  %0 = kiln.cast %x {saturate} : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// Checks that a reshape goes through a common refinement of both shapes
// where there is one: the input expanded into it, that collapsed into the
// result, so that a strided input (a slice of a fused QKV projection) stays
// a view. The head split of an attention ([seq, batch, 768] into [seq,
// batch * 12, 64]) refines into [seq, batch, 12, 64]; a reshape that only
// splits dims is an expansion alone and one that only merges them a
// collapse alone; one without a refinement ([2, 3] into [3, 2], above)
// still collapses to one dim.
// CHECK-LABEL: func @refined_reshapes
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [128, %{{.*}}, 12, 64] : tensor<128x?x768xf32> into tensor<128x?x12x64xf32>
// CHECK: tensor.collapse_shape %[[E]] {{\[\[}}0], [1, 2], [3]] : tensor<128x?x12x64xf32> into tensor<128x?x64xf32>
// CHECK: tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [2, 3, 4] : tensor<2x12xf32> into tensor<2x3x4xf32>
// CHECK-NOT: tensor.collapse_shape %arg1
// CHECK: tensor.collapse_shape %arg2 {{\[\[}}0], [1, 2]] : tensor<?x4x8xf32> into tensor<?x32xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @refined_reshapes(%x: tensor<128x?x768xf32>, %y: tensor<2x12xf32>, %z: tensor<?x4x8xf32>)
    -> (tensor<128x?x64xf32>, tensor<2x3x4xf32>, tensor<?x32xf32>) {
  %0 = kiln.reshape %x {shape = array<i64: 128, -1, 64>} : (tensor<128x?x768xf32>) -> tensor<128x?x64xf32>
  %1 = kiln.reshape %y {shape = array<i64: 2, 3, 4>} : (tensor<2x12xf32>) -> tensor<2x3x4xf32>
  %2 = kiln.reshape %z {shape = array<i64: 0, 32>} : (tensor<?x4x8xf32>) -> tensor<?x32xf32>
  return %0, %1, %2 : tensor<128x?x64xf32>, tensor<2x3x4xf32>, tensor<?x32xf32>
}

// -----

// Checks that an edge pad reading from a tensor that may have no elements
// at run time (a dynamic batch) checks first that it has some, or that the
// result has none (kiln_shape_error, code 3; an edge pad read past the
// buffer and a wrap pad divided by 0 before); a source with static dims
// and elements is not checked.
// CHECK-LABEL: func.func private @kiln_shape_error(i32)
// CHECK-LABEL: func @reads_from_maybe_empty
// CHECK: arith.cmpi ne
// CHECK: arith.cmpi eq
// CHECK: arith.ori
// CHECK: scf.if
// CHECK-NEXT: arith.constant 3 : i32
// CHECK-NEXT: func.call @kiln_shape_error
// CHECK: linalg.generic
// CHECK-NOT: kiln_shape_error
// CHECK: return
func.func @reads_from_maybe_empty(%x: tensor<?x3xf32>, %s: tensor<4x3xf32>)
    -> (tensor<?x3xf32>, tensor<4x5xf32>) {
  %p = kiln.pad %x mode edge {pads = array<i64: 1, 0, 1, 0>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %q = kiln.pad %s mode edge {pads = array<i64: 0, 1, 0, 1>} : (tensor<4x3xf32>) -> tensor<4x5xf32>
  return %p, %q : tensor<?x3xf32>, tensor<4x5xf32>
}

// -----

// Checks that negative pads cropping a dim known only at run time first
// check that the dim holds the crop (kiln_shape_error, code 1: a negative
// size reached the allocator before).
// CHECK-LABEL: func.func private @kiln_shape_error(i32)
// CHECK-LABEL: func @crop_dynamic
// CHECK: arith.cmpi sge
// CHECK: scf.if
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: func.call @kiln_shape_error
// CHECK: tensor.extract_slice
func.func @crop_dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = kiln.pad %x {pads = array<i64: -2, 0, 0, 0>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Checks that a gather from an axis that may have no elements reads the
// data only when it has some, and is 0 otherwise (no error: the importer's
// reductions over run-time axes gather from an empty axis in a branch they
// discard); a gather from an axis known to have elements reads directly.
// CHECK-LABEL: func @gather_maybe_empty
// CHECK: linalg.generic
// CHECK: %[[HAS:.*]] = arith.cmpi ne
// CHECK: scf.if %[[HAS]]
// CHECK-NEXT: tensor.extract
// CHECK: } else {
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK: linalg.generic
// CHECK-NOT: scf.if
// CHECK: tensor.extract
// CHECK-NOT: scf.if
// CHECK: return
func.func @gather_maybe_empty(%x: tensor<?x3xf32>, %t: tensor<4x3xf32>, %i: tensor<2xi64>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = kiln.gather %x, %i {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %b = kiln.gather %t, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Checks a matmul summing over a dim known only at run time on one side (a
// flattened image of a run-time size before a classifier's weight): both
// sides must agree when the model runs, or the run stops (code 4) rather
// than read past the weight.
// CHECK-LABEL: func @matmul_dynamic_k
// CHECK: %[[K:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[AGREE:.*]] = arith.cmpi eq, %[[K]], %c8
// CHECK: %[[BAD:.*]] = arith.xori %[[AGREE]]
// CHECK: scf.if %[[BAD]]
// CHECK: func.call @kiln_shape_error(%c4_i32)
// CHECK: linalg.generic
func.func @matmul_dynamic_k(%a: tensor<2x?xf32>, %b: tensor<8x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.matmul %a, %b : (tensor<2x?xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
