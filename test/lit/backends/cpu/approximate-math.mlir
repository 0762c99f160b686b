// RUN: kiln-opt %s -kiln-approximate-math | FileCheck %s

// Checks that f32 exp, tanh, erf and log, scalar or vector, become
// polynomials on the same type (no math op left to become one libm call per
// lane), that log scales a denormal input first, and that other functions
// and other types are left alone.
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

// CHECK-LABEL: func @tanh_erf_f32
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: return
func.func @tanh_erf_f32(%v: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %0 = math.tanh %v : vector<8xf32>
  %1 = math.erf %v : vector<8xf32>
  return %0, %1 : vector<8xf32>, vector<8xf32>
}

// A denormal x (0 < x < 2^-126) is taken as x * 2^24, 24 log(2) off the
// result.
// CHECK-LABEL: func @log_f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-DAG: %[[NORMAL:.*]] = arith.constant dense<1.17549435E-38> : vector<8xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<0x4B800000> : vector<8xf32>
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant dense<16.6355324> : vector<8xf32>
// CHECK-DAG: arith.cmpf ogt, %arg0, %[[ZERO]]
// CHECK-DAG: arith.cmpf olt, %arg0, %[[NORMAL]]
// CHECK: %[[DENORMAL:.*]] = arith.andi
// CHECK: %[[SCALED:.*]] = arith.mulf %arg0, %[[SCALE]]
// CHECK: arith.select %[[DENORMAL]], %[[SCALED]], %arg0
// CHECK-NOT: math.log
// CHECK: %[[SHIFTED:.*]] = arith.subf %[[LOG:.*]], %[[SHIFT]]
// CHECK-NEXT: arith.select %[[DENORMAL]], %[[SHIFTED]], %[[LOG]]
// CHECK-NOT: math.log
// CHECK: return
func.func @log_f32(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.log %v : vector<8xf32>
  return %0 : vector<8xf32>
}

// CHECK-LABEL: func @left_alone
// CHECK: math.exp {{.*}} : f64
// CHECK: math.log {{.*}} : f64
// CHECK: math.sin {{.*}} : f32
func.func @left_alone(%d: f64, %s: f32) -> (f64, f64, f32) {
  %0 = math.exp %d : f64
  %1 = math.log %d : f64
  %2 = math.sin %s : f32
  return %0, %1, %2 : f64, f64, f32
}
