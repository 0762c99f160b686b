// RUN: kiln-opt %s -split-input-file -kiln-convert-to-linalg | FileCheck %s

// Checks topk along the middle of three dims: one scf.forall over the other
// two (a dynamic batch), the row's slices of both results, one loop over
// the row's chunks of 8 entries. A small k (2): the loop carries how many
// are kept (m) and the kept values and indices as scalars. A chunk's
// entries are each compared with the k-th kept (m < k, or beating it: ugt,
// unless it is NaN; past the row's 5 entries masked out, reading the last
// one) without a branch; a chunk with an admitted entry goes over its
// entries one by one, each placed by selects (slot j takes it where it is
// empty, j >= m, or beaten, the slot before where that one is too), the
// kept entries written to the row.
// CHECK-LABEL: func @topk
// CHECK: %[[N:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x5x3xf32>
// CHECK: scf.forall (%[[B:.*]], %[[C:.*]]) in (%[[N]], 3) shared_outs(%[[V:.*]] = %{{.*}}, %[[I:.*]] = %{{.*}}) -> (tensor<?x2x3xf32>, tensor<?x2x3xi64>)
// CHECK: %[[VROW:.*]] = tensor.extract_slice %[[V]][%[[B]], 0, %[[C]]] [1, 2, 1] [1, 1, 1] : tensor<?x2x3xf32> to tensor<2xf32>
// CHECK: %[[IROW:.*]] = tensor.extract_slice %[[I]][%[[B]], 0, %[[C]]] [1, 2, 1] [1, 1, 1] : tensor<?x2x3xi64> to tensor<2xi64>
// CHECK: %[[CHUNKS:.*]] = arith.ceildivui %c5, %c8
// CHECK: %[[ROW:.*]]:7 = scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %[[CHUNKS]] step %c1{{[_0-9]*}} iter_args(%{{.*}} = %[[VROW]], %{{.*}} = %[[IROW]], %[[M:.*]] = %c0{{[_0-9]*}}, %{{.*}} = %cst, %[[KTH:.*]] = %cst, %{{.*}} = %c0_i64, %{{.*}} = %c0_i64) -> (tensor<2xf32>, tensor<2xi64>, index, f32, f32, i64, i64)
// CHECK: %[[BASE:.*]] = arith.muli %[[T]], %c8
// CHECK: %[[AT:.*]] = arith.minui
// CHECK: %[[X:.*]] = tensor.extract %arg0[%[[B]], %[[AT]], %[[C]]] : tensor<?x5x3xf32>
// CHECK: arith.cmpi ult, %[[M]], %c2
// CHECK: arith.cmpf ugt, %[[X]], %[[KTH]]
// CHECK: arith.cmpf ord, %[[KTH]], %[[KTH]]
// CHECK-NOT: scf.if
// CHECK: scf.if %{{.*}} -> (tensor<2xf32>, tensor<2xi64>, index, f32, f32, i64, i64)
// CHECK: %[[STOP:.*]] = arith.addi %[[BASE]], %c8
// CHECK: scf.for %{{.*}} = %[[BASE]] to %[[STOP]]
// CHECK-NOT: scf.if
// CHECK: arith.cmpi uge
// CHECK: arith.select
// CHECK: tensor.insert
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[ROW]]#0 into %[[V]][%[[B]], 0, %[[C]]] [1, 2, 1]
// CHECK-NEXT: tensor.parallel_insert_slice %[[ROW]]#1 into %[[I]][%[[B]], 0, %[[C]]] [1, 2, 1]
func.func @topk(%x: tensor<?x5x3xf32>) -> (tensor<?x2x3xf32>, tensor<?x2x3xi64>) {
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<?x5x3xf32>) -> (tensor<?x2x3xf32>, tensor<?x2x3xi64>)
  return %v, %i : tensor<?x2x3xf32>, tensor<?x2x3xi64>
}

// -----

// Checks a k past 16: the kept entries in the row's slices of the results,
// the k-th best carried. A chunk with an admitted entry goes over its
// entries one by one, inserting each admitted one (a count of the kept
// entries it does not beat, a shift of those it beats) among the first
// k - 1 or as many as came before it.
// CHECK-LABEL: func @topk_many
// CHECK: %[[LAST:.*]] = arith.subi %c20, %c1
// CHECK: %[[ROW:.*]]:3 = scf.for %{{.*}} iter_args(%{{.*}}, %{{.*}}, %[[KTH:.*]] = %cst) -> (tensor<20xf32>, tensor<20xi64>, f32)
// CHECK: scf.if %{{.*}} -> (tensor<20xf32>, tensor<20xi64>, f32)
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK: %[[FILLING:.*]] = arith.cmpi ult, %[[E]], %c20
// CHECK: scf.if
// CHECK: %[[LENGTH:.*]] = arith.select %[[FILLING]], %[[E]], %[[LAST]]
// CHECK: scf.for {{.*}} to %[[LENGTH]] {{.*}} -> (index)
// CHECK: scf.for {{.*}} -> (tensor<20xf32>, tensor<20xi64>)
// CHECK: tensor.extract %{{.*}}[%[[LENGTH]]]
// CHECK: tensor.parallel_insert_slice %[[ROW]]#0
func.func @topk_many(%x: tensor<2x24xf32>) -> (tensor<2x20xf32>, tensor<2x20xi64>) {
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 20 : i64} : (tensor<2x24xf32>) -> (tensor<2x20xf32>, tensor<2x20xi64>)
  return %v, %i : tensor<2x20xf32>, tensor<2x20xi64>
}

// -----

// Checks a k read at run time (the smallest, of signed integers): checked
// within [0, n] (kiln_shape_error 6 otherwise), the results' dim, and a
// row loop that ends at 0 when k is 0 (no k-th best to compare with).
// CHECK-LABEL: func @topk_count
// CHECK: %[[K:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[FITS:.*]] = arith.andi
// CHECK: call @kiln_shape_error
// CHECK: %[[KK:.*]] = arith.select %[[FITS]], %[[K]], %c0
// CHECK: tensor.empty(%[[KK]]) : tensor<4x?xi32>
// CHECK: scf.forall
// CHECK: %[[NONE:.*]] = arith.cmpi eq, %[[KK]], %c0
// CHECK: %[[END:.*]] = arith.select %[[NONE]], %c0, %c6
// CHECK: %[[CHUNKS:.*]] = arith.ceildivui %[[END]], %c8
// CHECK: scf.for %{{.*}} = %c0{{[_0-9]*}} to %[[CHUNKS]]
// CHECK: arith.cmpi slt
func.func @topk_count(%x: tensor<4x6xi32>, %k: tensor<1xi64>) -> (tensor<4x?xi32>, tensor<4x?xi64>) {
  %v, %i = kiln.topk %x, %k {axis = 1 : i64, largest = false} : (tensor<4x6xi32>, tensor<1xi64>) -> (tensor<4x?xi32>, tensor<4x?xi64>)
  return %v, %i : tensor<4x?xi32>, tensor<4x?xi64>
}

// -----

// Checks a count that is a constant: rows of a static length, the results
// cast to the op's dynamic types; no run-time check.
// CHECK-LABEL: func @topk_constant_count
// CHECK-NOT: kiln_shape_error
// CHECK: scf.forall {{.*}} -> (tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK: tensor.cast %{{.*}} : tensor<2x3xf32> to tensor<2x?xf32>
// CHECK: tensor.cast %{{.*}} : tensor<2x3xi64> to tensor<2x?xi64>
func.func @topk_constant_count(%x: tensor<2x7xf32>) -> (tensor<2x?xf32>, tensor<2x?xi64>) {
  %k = kiln.constant dense<[3]> : tensor<1xi64>
  %v, %i = kiln.topk %x, %k {axis = 1 : i64} : (tensor<2x7xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  return %v, %i : tensor<2x?xf32>, tensor<2x?xi64>
}

// -----

// Checks a row of a multiple of 8 entries: nothing masked (no entry
// compared with the row's length).
// CHECK-LABEL: func @topk_whole_chunks
// CHECK: arith.ceildivui %c16, %c8
// CHECK-NOT: arith.cmpi ult, %{{.*}}, %c16
// CHECK: return
func.func @topk_whole_chunks(%x: tensor<3x16xi64>) -> (tensor<3x4xi64>, tensor<3x4xi64>) {
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 4 : i64} : (tensor<3x16xi64>) -> (tensor<3x4xi64>, tensor<3x4xi64>)
  return %v, %i : tensor<3x4xi64>, tensor<3x4xi64>
}
