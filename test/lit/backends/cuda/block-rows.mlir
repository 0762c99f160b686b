// A long row of a row kernel (>= 16 elements a thread of a block) runs on
// a whole block instead of a warp: the row's ops stride over the block's
// threads, each reduction's warps combine by shuffles, their totals meet
// in a workgroup buffer, and after a barrier every thread combines them in
// order into its own copy (the row's later ops read the total in every
// thread).
// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows{block-size=64 unroll-steps=0}))' | FileCheck %s
// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows{block-size=64 emulate=1 unroll-steps=0}))' | FileCheck %s --check-prefix=EMU
// Under 16 elements a thread (a block of 128 would need 2,048): a warp.
// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows{block-size=128}))' | FileCheck %s --check-prefix=WARP
// Through the whole code generation (blocks of 256: rows of 4,096): one
// row a block, the warps' totals in shared memory, barriers, each thread's
// 16 elements of the exponentials in registers (no local memory).
// RUN: kiln-opt %s -kiln-cuda-codegen | FileCheck %s --check-prefix=PTX

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// CHECK-LABEL: func.func @softmax
// CHECK:       scf.parallel (%[[ROW:.*]], %[[T:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c64)
// The maximum: elements t, t + 64, ... (16 steps), each warp's butterfly,
// the 2 warps' totals through shared memory, a barrier, then every thread
// combines them in order and into its copy of the maximum.
// CHECK:         linalg.fill ins(%{{.*}}) outs(%[[MAX:.*]] : memref<1x1xf32>)
// CHECK:         %[[P:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c16{{.*}} iter_args
// CHECK:           %[[K64:.*]] = arith.muli %[[K]], %c64
// CHECK:           %[[E:.*]] = arith.addi %[[T]], %[[K64]]
// CHECK:           memref.load %{{.*}}[%{{.*}}, %[[E]]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:         %[[WID:.*]] = arith.divui %[[T]], %c32
// CHECK:         %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK:         %[[TOTALS:.*]] = memref.alloca() : memref<2xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[LEADER:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:         scf.if %[[LEADER]] {
// CHECK:           memref.store %{{.*}}, %[[TOTALS]][%[[WID]]]
// CHECK:         gpu.barrier
// CHECK-NOT:     scf.if
// CHECK:         %[[W0:.*]] = memref.load %[[TOTALS]][%c0
// CHECK:         %[[W1:.*]] = memref.load %[[TOTALS]][%c1
// CHECK:         %[[M:.*]] = arith.maximumf %[[W0]], %[[W1]]
// CHECK:         %[[OLD:.*]] = memref.load %[[MAX]]
// CHECK:         arith.maximumf %[[OLD]], %[[M]]
// CHECK:         memref.store %{{.*}}, %[[MAX]]
// The exponentials are thread-private: 16 slots a thread (1,024 / 64).
// CHECK:         %[[OWN:.*]] = memref.alloca() : memref<16xf32>
// CHECK:         scf.for %[[K2:.*]] = %{{.*}} to %c16
// CHECK:           math.exp
// CHECK:           memref.store %{{.*}}, %[[OWN]][%[[K2]]] : memref<16xf32>
// The sum: its own workgroup buffer and barrier.
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:         memref.alloca() : memref<2xf32, #gpu.address_space<workgroup>>
// CHECK:         gpu.barrier
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c16
// CHECK:           arith.divf
// CHECK-NOT:     linalg.generic
// Emulated: 64 threads a loop, their partials in an array of 64, the
// warps' totals (elements 0 and 32) combined in order; 64 x 16 slots.
// EMU-LABEL: func.func @softmax
// EMU:       memref.alloca() : memref<64xf32>
// EMU:       memref.alloca() : memref<64x16xf32>
// EMU:       scf.parallel (%{{[^,]*}}) =
// EMU-NOT:     memref.alloca
// EMU:         scf.for %{{.*}} = %c0{{.*}} to %c64
// EMU:         arith.xori %{{.*}}, %c16
// EMU:         arith.xori %{{.*}}, %c1
// EMU:         %[[W0:.*]] = memref.load %{{.*}}[%c0{{.*}}] : memref<64xf32>
// EMU:         %[[W1:.*]] = memref.load %{{.*}}[%c32{{.*}}] : memref<64xf32>
// EMU:         arith.maximumf %[[W0]], %[[W1]]
// EMU-NOT:   gpu.barrier
// EMU-NOT:   workgroup
// EMU-LABEL: func.func @main
// WARP-LABEL: func.func @softmax
// WARP:       scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c32)
// WARP-NOT:   gpu.barrier
// WARP-LABEL: func.func @main
func.func @softmax(%x: memref<4x1024xf32>, %y: memref<4x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %xr = memref.subview %x[%i, 0] [1, 1024] [1, 1] : memref<4x1024xf32> to memref<1x1024xf32, strided<[1024, 1], offset: ?>>
    %max = memref.alloca() : memref<1x1xf32>
    linalg.fill ins(%ninf : f32) outs(%max : memref<1x1xf32>)
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xr : memref<1x1024xf32, strided<[1024, 1], offset: ?>>) outs(%max : memref<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %out, %in : f32
      linalg.yield %m : f32
    }
    %e = memref.alloca() : memref<1x1024xf32>
    linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%xr, %max : memref<1x1024xf32, strided<[1024, 1], offset: ?>>, memref<1x1xf32>) outs(%e : memref<1x1024xf32>) {
    ^bb0(%in: f32, %mx: f32, %out: f32):
      %d = arith.subf %in, %mx : f32
      %v = math.exp %d : f32
      linalg.yield %v : f32
    }
    %sum = memref.alloca() : memref<1x1xf32>
    linalg.fill ins(%zero : f32) outs(%sum : memref<1x1xf32>)
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%e : memref<1x1024xf32>) outs(%sum : memref<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
    }
    %yr = memref.subview %y[%i, 0] [1, 1024] [1, 1] : memref<4x1024xf32> to memref<1x1024xf32, strided<[1024, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : memref<1x1024xf32>, memref<1x1xf32>) outs(%yr : memref<1x1024xf32, strided<[1024, 1], offset: ?>>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %q = arith.divf %in, %s : f32
      linalg.yield %q : f32
    }
    scf.reduce
  }
  return
}

// PTX: sm_80 = "{{.*}}.entry main_kernel({{.*}}.shared .align 4 .b8 {{[^ ]*}}[32]{{.*}}shfl.sync.bfly{{.*}}bar.sync{{.*}}ex2.approx{{.*}}"
// PTX-NOT: .local
func.func @main(%x: memref<2x4096xf32>, %y: memref<2x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %xr = memref.subview %x[%i, 0] [1, 4096] [1, 1] : memref<2x4096xf32> to memref<1x4096xf32, strided<[4096, 1], offset: ?>>
    %max = memref.alloca() : memref<1x1xf32>
    linalg.fill ins(%ninf : f32) outs(%max : memref<1x1xf32>)
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xr : memref<1x4096xf32, strided<[4096, 1], offset: ?>>) outs(%max : memref<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %out, %in : f32
      linalg.yield %m : f32
    }
    %yr = memref.subview %y[%i, 0] [1, 4096] [1, 1] : memref<2x4096xf32> to memref<1x4096xf32, strided<[4096, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%xr, %max : memref<1x4096xf32, strided<[4096, 1], offset: ?>>, memref<1x1xf32>) outs(%yr : memref<1x4096xf32, strided<[4096, 1], offset: ?>>) {
    ^bb0(%in: f32, %mx: f32, %out: f32):
      %d = arith.subf %in, %mx : f32
      %v = math.exp %d : f32
      linalg.yield %v : f32
    }
    scf.reduce
  }
  return
}
