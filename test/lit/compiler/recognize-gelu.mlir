// RUN: kiln-opt %s -split-input-file -kiln-recognize-gelu | FileCheck %s

// torch's export: x * (erf(x / sqrt 2) + 1) * 0.5.
// CHECK-LABEL: func @torch_form
// CHECK-NEXT: %[[G:.*]] = kiln.gelu %arg0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @torch_form(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = kiln.erf %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = kiln.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = kiln.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = kiln.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Operands swapped, x * (1/sqrt 2), and the 0.5 applied to the sum.
// CHECK-LABEL: func @other_order
// CHECK-NEXT: %[[G:.*]] = kiln.gelu %arg0
// CHECK-NEXT: return %[[G]]
func.func @other_order(%x: tensor<8xf32>) -> tensor<8xf32> {
  %inv = kiln.constant dense<0.707106769> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.mul %inv, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %e = kiln.erf %d : (tensor<8xf32>) -> tensor<8xf32>
  %a = kiln.add %one, %e : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %h = kiln.mul %half, %a : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %r = kiln.mul %h, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Not GELU: the erf's argument is x / 2, or an intermediate has another
// user; nothing changes.
// CHECK-LABEL: func @not_gelu
// CHECK-NOT: kiln.gelu
// CHECK: kiln.erf
// CHECK: kiln.erf
// CHECK-NOT: kiln.gelu
func.func @not_gelu(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.div %x, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = kiln.erf %d : (tensor<8xf32>) -> tensor<8xf32>
  %a = kiln.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = kiln.mul %x, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %r = kiln.mul %m, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %d2 = kiln.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e2 = kiln.erf %d2 : (tensor<8xf32>) -> tensor<8xf32>
  %a2 = kiln.add %e2, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m2 = kiln.mul %x, %a2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %r2 = kiln.mul %m2, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %r, %r2, %a2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
