// RUN: kiln-opt %s -kiln-approximate-exp | FileCheck %s

// Checks that f32 exp, scalar or vector, becomes the polynomial on the same
// type (no math.exp left to become one libm call per lane) and that exp on
// other types is left alone.
// CHECK-LABEL: func @exp_f32
// CHECK-NOT: math.exp
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK-NOT: math.exp
// CHECK: math.fma {{.*}} : f32
// CHECK-NOT: math.exp
// CHECK: return
func.func @exp_f32(%v: vector<8xf32>, %s: f32) -> (vector<8xf32>, f32) {
  %0 = math.exp %v : vector<8xf32>
  %1 = math.exp %s : f32
  return %0, %1 : vector<8xf32>, f32
}

// CHECK-LABEL: func @exp_f64
// CHECK: math.exp {{.*}} : f64
func.func @exp_f64(%s: f64) -> f64 {
  %0 = math.exp %s : f64
  return %0 : f64
}
