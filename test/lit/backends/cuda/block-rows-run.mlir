// Row kernels whose rows take a whole block (kiln-gpu-warp-rows with
// blocks of 64 in the emulation: rows of 1,024 and more): a layer
// normalisation over rows of 1,100 (17 full strides of 64 and a masked
// tail) and a softmax over rows of 1,024. Emulated on the CPU
// (kiln-lower-to-llvm-gpu-mapped: the block's 64 threads a loop, each
// warp's butterfly over an array, the two warps' totals combined in order
// and handed to every thread) they print what the unmapped loops print,
// and NumPy's values. The inputs make every sum exact in any order (so a
// lost, doubled or misplaced element shows, and a different order does
// not): the layer normalisation's rows are x_j = g(j) - g(1099 - j) with
// g(j) = (37 j + 11 i) mod 101 (integers, mean 0); the softmax's are 0
// where (37 j + 11 i) mod 64 = 0 and -200 elsewhere (exponentials 1 or 0).
// RUN: kiln-opt %s --kiln-lower-to-llvm | %mlir-runner | grep -v base@ > %t.cpu
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped | %mlir-runner | grep -v base@ > %t.block
// RUN: diff %t.cpu %t.block
// RUN: FileCheck %s < %t.block
// The rows did take a block (64 threads, each reduction's two warps'
// totals combined in order: four reductions).
// RUN: kiln-opt %s --kiln-lower-to-llvm-gpu-mapped --mlir-print-ir-after=kiln-gpu-warp-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=BLOCK
// BLOCK-COUNT-4: memref.load %{{.*}}[%c32{{.*}}] : memref<64xf32>

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %shape = kiln.constant dense<[2, 1100]> : tensor<2xi64>
  %j = kiln.iota %shape {axis = 1 : i64} : (tensor<2xi64>) -> tensor<2x1100xi64>
  %i = kiln.iota %shape {axis = 0 : i64} : (tensor<2xi64>) -> tensor<2x1100xi64>
  %k37 = kiln.constant dense<37> : tensor<i64>
  %k11 = kiln.constant dense<11> : tensor<i64>
  %k101 = kiln.constant dense<101> : tensor<i64>
  %k1099 = kiln.constant dense<1099> : tensor<i64>
  %i11 = kiln.mul %i, %k11 : (tensor<2x1100xi64>, tensor<i64>) -> tensor<2x1100xi64>
  %a37 = kiln.mul %j, %k37 : (tensor<2x1100xi64>, tensor<i64>) -> tensor<2x1100xi64>
  %a = kiln.add %a37, %i11 : (tensor<2x1100xi64>, tensor<2x1100xi64>) -> tensor<2x1100xi64>
  %ga = kiln.rem %a, %k101 : (tensor<2x1100xi64>, tensor<i64>) -> tensor<2x1100xi64>
  %jr = kiln.sub %k1099, %j : (tensor<i64>, tensor<2x1100xi64>) -> tensor<2x1100xi64>
  %b37 = kiln.mul %jr, %k37 : (tensor<2x1100xi64>, tensor<i64>) -> tensor<2x1100xi64>
  %b = kiln.add %b37, %i11 : (tensor<2x1100xi64>, tensor<2x1100xi64>) -> tensor<2x1100xi64>
  %gb = kiln.rem %b, %k101 : (tensor<2x1100xi64>, tensor<i64>) -> tensor<2x1100xi64>
  %d = kiln.sub %ga, %gb : (tensor<2x1100xi64>, tensor<2x1100xi64>) -> tensor<2x1100xi64>
  %x = kiln.cast %d : tensor<2x1100xi64> to tensor<2x1100xf32>
  %s1 = kiln.constant dense<[1100]> : tensor<1xi64>
  %n = kiln.iota %s1 {axis = 0 : i64} : (tensor<1xi64>) -> tensor<1100xi64>
  %k3 = kiln.constant dense<3> : tensor<i64>
  %k4 = kiln.constant dense<4> : tensor<i64>
  %n3 = kiln.rem %n, %k3 : (tensor<1100xi64>, tensor<i64>) -> tensor<1100xi64>
  %n4 = kiln.rem %n, %k4 : (tensor<1100xi64>, tensor<i64>) -> tensor<1100xi64>
  %f3 = kiln.cast %n3 : tensor<1100xi64> to tensor<1100xf32>
  %f4 = kiln.cast %n4 : tensor<1100xi64> to tensor<1100xf32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %onehalf = kiln.constant dense<1.5> : tensor<f32>
  %gh = kiln.mul %f3, %half : (tensor<1100xf32>, tensor<f32>) -> tensor<1100xf32>
  %gamma = kiln.add %gh, %one : (tensor<1100xf32>, tensor<f32>) -> tensor<1100xf32>
  %beta = kiln.sub %f4, %onehalf : (tensor<1100xf32>, tensor<f32>) -> tensor<1100xf32>
  %ln = kiln.layer_norm %x, %gamma, %beta {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x1100xf32>, tensor<1100xf32>, tensor<1100xf32>) -> tensor<2x1100xf32>
  %uln = tensor.cast %ln : tensor<2x1100xf32> to tensor<*xf32>
  // CHECK:      {{^\[\[}}-3.44504,   0.121776,   -0.392807,   0.192675,{{.*}}   0.392807,   0.0854824,   4.41757],
  // CHECK-NEXT: {{^}} [-2.87568,   -0.0602347,   -0.131458,   0.575365,{{.*}}   0.131458,   0.206823,   3.56351]]
  call @printMemrefF32(%uln) : (tensor<*xf32>) -> ()

  %shape2 = kiln.constant dense<[2, 1024]> : tensor<2xi64>
  %j2 = kiln.iota %shape2 {axis = 1 : i64} : (tensor<2xi64>) -> tensor<2x1024xi64>
  %i2 = kiln.iota %shape2 {axis = 0 : i64} : (tensor<2xi64>) -> tensor<2x1024xi64>
  %k61 = kiln.constant dense<61> : tensor<i64>
  %k1 = kiln.constant dense<1> : tensor<i64>
  %c37 = kiln.mul %j2, %k37 : (tensor<2x1024xi64>, tensor<i64>) -> tensor<2x1024xi64>
  %c11 = kiln.mul %i2, %k11 : (tensor<2x1024xi64>, tensor<i64>) -> tensor<2x1024xi64>
  %c = kiln.add %c37, %c11 : (tensor<2x1024xi64>, tensor<2x1024xi64>) -> tensor<2x1024xi64>
  %r = kiln.rem %c, %k61 : (tensor<2x1024xi64>, tensor<i64>) -> tensor<2x1024xi64>
  %r1 = kiln.min %r, %k1 : (tensor<2x1024xi64>, tensor<i64>) -> tensor<2x1024xi64>
  %rf = kiln.cast %r1 : tensor<2x1024xi64> to tensor<2x1024xf32>
  %m200 = kiln.constant dense<-200.0> : tensor<f32>
  %sx = kiln.mul %rf, %m200 : (tensor<2x1024xf32>, tensor<f32>) -> tensor<2x1024xf32>
  %sm = kiln.softmax %sx {axis = 1 : i64} : (tensor<2x1024xf32>) -> tensor<2x1024xf32>
  %usm = tensor.cast %sm : tensor<2x1024xf32> to tensor<*xf32>
  // Row 0's ones at j = 0, 61, 122, ...; row 1's at 3, 64, 125, ...: 1/17.
  // CHECK-NEXT: {{^\[\[0.0588235,(   0,){60}   0.0588235,(   0,){60}   0.0588235,}}
  // CHECK-NEXT: {{^ \[0,   0,   0,   0.0588235,(   0,){60}   0.0588235,(   0,){60}   0.0588235,}}
  call @printMemrefF32(%usm) : (tensor<*xf32>) -> ()
  return
}
