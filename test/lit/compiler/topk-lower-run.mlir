// Checks kiln.topk once lowered (one scan of every row, TopKToLoops.cpp)
// through LLVM and run: ties in index order, NaN above every number (first
// for the largest, last for the smallest, as PyTorch's topk), an axis
// other than the last, unsigned order, a full sort, a count operand, a k
// past 16 (kept in the rows, not in registers).
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | FileCheck %s
// The same loops mapped onto blocks and threads as the CUDA backend maps
// them, run on the CPU: the same numbers.
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped | %mlir-runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI64(tensor<*xi64>)

func.func @show(%v: tensor<?x?xf32>, %i: tensor<?x?xi64>) {
  %u = tensor.cast %v : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %w = tensor.cast %i : tensor<?x?xi64> to tensor<*xi64>
  call @printMemrefI64(%w) : (tensor<*xi64>) -> ()
  return
}

func.func @main() {
  %x = kiln.constant dense<[[3.0, 0x7FC00000, 1.0, 3.0, 0x7FC00000, 5.0],
                            [0xFF800000, 2.0, 2.0, 2.0, 0.0, 1.0]]> : tensor<2x6xf32>
  // CHECK: {{\[\[}}nan, nan, 5],
  // CHECK-NEXT: [2, 2, 2]]
  // CHECK: {{\[\[}}1, 4, 5],
  // CHECK-NEXT: [1, 2, 3]]
  %lv, %li = kiln.topk %x {axis = 1 : i64, k = 3 : i64}
      : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  %lv2 = tensor.cast %lv : tensor<2x3xf32> to tensor<?x?xf32>
  %li2 = tensor.cast %li : tensor<2x3xi64> to tensor<?x?xi64>
  call @show(%lv2, %li2) : (tensor<?x?xf32>, tensor<?x?xi64>) -> ()
  // The smallest: NaN last.
  // CHECK: {{\[\[}}1, 3, 3, 5, nan],
  // CHECK-NEXT: [-inf, 0, 1, 2, 2]]
  // CHECK: {{\[\[}}2, 0, 3, 5, 1],
  // CHECK-NEXT: [0, 4, 5, 1, 2]]
  %sv, %si = kiln.topk %x {axis = 1 : i64, k = 5 : i64, largest = false}
      : (tensor<2x6xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>)
  %sv2 = tensor.cast %sv : tensor<2x5xf32> to tensor<?x?xf32>
  %si2 = tensor.cast %si : tensor<2x5xi64> to tensor<?x?xi64>
  call @show(%sv2, %si2) : (tensor<?x?xf32>, tensor<?x?xi64>) -> ()
  // Along axis 0.
  // CHECK: {{\[\[}}4, 9],
  // CHECK-NEXT: [4, 8]]
  // CHECK: {{\[\[}}1, 2],
  // CHECK-NEXT: [3, 0]]
  %c = kiln.constant dense<[[1.0, 8.0], [4.0, 2.0], [3.0, 9.0], [4.0, 0.0]]> : tensor<4x2xf32>
  %cv, %ci = kiln.topk %c {axis = 0 : i64, k = 2 : i64}
      : (tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  %cv2 = tensor.cast %cv : tensor<2x2xf32> to tensor<?x?xf32>
  %ci2 = tensor.cast %ci : tensor<2x2xi64> to tensor<?x?xi64>
  call @show(%cv2, %ci2) : (tensor<?x?xf32>, tensor<?x?xi64>) -> ()
  // Unsigned: 200 and 255 are the largest bytes.
  // CHECK: [2, 0]
  %b = kiln.constant dense<[200, 3, 255, 7]> : tensor<4xui8>
  %bv, %bi = kiln.topk %b {axis = 0 : i64, k = 2 : i64}
      : (tensor<4xui8>) -> (tensor<2xui8>, tensor<2xi64>)
  %bi2 = tensor.cast %bi : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%bi2) : (tensor<*xi64>) -> ()
  // A full sort of i32, stable; k read at run time.
  // CHECK: [1, 3, 0, 2, 4]
  %s = kiln.constant dense<[2, 1, 2, 1, 3]> : tensor<5xi32>
  %five = kiln.constant dense<[5]> : tensor<1xi64>
  %fv, %fi = kiln.topk %s, %five {axis = 0 : i64, largest = false}
      : (tensor<5xi32>, tensor<1xi64>) -> (tensor<?xi32>, tensor<?xi64>)
  %fi2 = tensor.cast %fi : tensor<?xi64> to tensor<*xi64>
  call @printMemrefI64(%fi2) : (tensor<*xi64>) -> ()
  // A k past 16 (the kept entries in the results' rows, not in
  // registers): 18 of 20, both ways, ties and NaN.
  // CHECK: [4, 14, 6, 19, 12, 9, 13, 0, 2, 8, 15, 1, 10, 11, 5, 17, 3, 16]
  // CHECK: [7, 18, 3, 16, 5, 17, 1, 10, 11, 15, 0, 2, 8, 13, 9, 12, 6, 19]
  %m = kiln.constant dense<[5.0, 3.0, 5.0, 1.0, 0x7FC00000, 2.0, 9.0, 0.0, 5.0, 7.0, 3.0, 3.0,
                            8.0, 6.0, 0x7FC00000, 4.0, 1.0, 2.0, 0.0, 9.0]> : tensor<20xf32>
  %mv, %mi = kiln.topk %m {axis = 0 : i64, k = 18 : i64}
      : (tensor<20xf32>) -> (tensor<18xf32>, tensor<18xi64>)
  %mi2 = tensor.cast %mi : tensor<18xi64> to tensor<*xi64>
  call @printMemrefI64(%mi2) : (tensor<*xi64>) -> ()
  %nv, %ni = kiln.topk %m {axis = 0 : i64, k = 18 : i64, largest = false}
      : (tensor<20xf32>) -> (tensor<18xf32>, tensor<18xi64>)
  %ni2 = tensor.cast %ni : tensor<18xi64> to tensor<*xi64>
  call @printMemrefI64(%ni2) : (tensor<*xi64>) -> ()
  return
}
