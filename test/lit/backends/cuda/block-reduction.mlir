// A long reduction outside a row kernel (>= 16 elements a thread of a
// block): an output element takes a whole block instead of a warp.
// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows{block-size=64 unroll-steps=0}))' | FileCheck %s
// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows{block-size=64 emulate=1 unroll-steps=0}))' | FileCheck %s --check-prefix=EMU
// Under 16 elements a thread (a block of 128 would need 2,048): a warp.
// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-gpu-warp-rows{block-size=128}))' | FileCheck %s --check-prefix=WARP
// Through the whole code generation (blocks of 256, so the second
// function's 4,096 elements an output): the warps' totals in shared
// memory, a barrier, no local memory.
// RUN: kiln-opt %s -kiln-cuda-codegen | FileCheck %s --check-prefix=PTX

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>

// Each thread sums elements t, t + 64, ... (a constant trip count of 16);
// each warp's butterfly; lane 0 of each of the 2 warps writes its total
// to a workgroup buffer; a barrier; thread 0 combines the 2 totals in
// order into the output.
// CHECK-LABEL: func.func @row_sums
// CHECK:       scf.parallel (%[[I:.*]], %[[T:.*]]) = (%{{.*}}, %{{.*}}) to (%c8, %c64)
// CHECK:         %[[P:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c16 {{.*}} iter_args
// CHECK:           %[[K64:.*]] = arith.muli %[[K]], %c64
// CHECK:           %[[E:.*]] = arith.addi %[[T]], %[[K64]]
// CHECK:           memref.load %arg0[%[[I]], %[[E]]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:         %[[WID:.*]] = arith.divui %[[T]], %c32
// CHECK:         %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK:         %[[TOTALS:.*]] = memref.alloca() : memref<2xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[LEADER:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:         scf.if %[[LEADER]] {
// CHECK:           memref.store %{{.*}}, %[[TOTALS]][%[[WID]]]
// CHECK:         gpu.barrier
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK:         scf.if %[[FIRST]] {
// CHECK:           %[[W0:.*]] = memref.load %[[TOTALS]][%c0
// CHECK:           %[[W1:.*]] = memref.load %[[TOTALS]][%c1
// CHECK:           %[[SUM:.*]] = arith.addf %[[W0]], %[[W1]]
// CHECK:           %[[OLD:.*]] = memref.load %arg1[%[[I]]]
// CHECK:           arith.addf %[[OLD]], %[[SUM]]
// CHECK:           memref.store %{{.*}}, %arg1[%[[I]]]
// Emulated: 64 partials, the butterfly within each warp, the warps'
// totals (elements 0 and 32) combined in order.
// EMU-LABEL: func.func @row_sums
// EMU:       %[[NOW:.*]] = memref.alloca() : memref<64xf32>
// EMU:       scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c8)
// EMU-NOT:     memref.alloca
// EMU:         scf.for %{{.*}} = %c0{{.*}} to %c64
// EMU:         arith.xori %{{.*}}, %c16
// EMU:         arith.xori %{{.*}}, %c1
// EMU:         %[[W0:.*]] = memref.load %{{.*}}[%c0{{.*}}] : memref<64xf32>
// EMU:         %[[W1:.*]] = memref.load %{{.*}}[%c32{{.*}}] : memref<64xf32>
// EMU:         arith.addf %[[W0]], %[[W1]]
// EMU-NOT:   gpu.barrier
// EMU-NOT:   workgroup
// EMU-LABEL: func.func @main
// WARP-LABEL: func.func @row_sums
// WARP:       scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%c8, %c32)
// WARP-NOT:   gpu.barrier
// WARP-LABEL: func.func @main
func.func @row_sums(%x: memref<8x1024xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x1024xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %w = arith.addf %acc, %in : f32
    linalg.yield %w : f32
  }
  return
}

// PTX: sm_80 = "{{.*}}.entry main_kernel_0({{.*}}.shared .align 4 .b8 {{[^ ]*}}[32]{{.*}}shfl.sync.bfly{{.*}}bar.sync{{.*}}"
// PTX-NOT: .local
func.func @main(%x: memref<2x4096xf32>, %y: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<2x4096xf32>) outs(%y : memref<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %w = arith.addf %acc, %in : f32
    linalg.yield %w : f32
  }
  return
}
