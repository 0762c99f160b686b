//===- WorkgroupBuffers.cpp - workgroup allocas as launch attributions ----===//
//
// Implements kiln-cuda-workgroup-buffers (Passes.td): a buffer a block's
// threads share (a block reduction's warp totals) is written as a
// memref.alloca in the workgroup memory space while the loops are still
// loops; once they are a gpu.launch, it becomes the launch's workgroup
// attribution, which outlining and the NVVM lowering make shared memory.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Passes.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_CUDAWORKGROUPBUFFERS
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {
namespace {

static bool inWorkgroupMemory(memref::AllocaOp alloca) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(alloca.getType().getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

struct CudaWorkgroupBuffersPass : impl::CudaWorkgroupBuffersBase<CudaWorkgroupBuffersPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaOp> allocas;
    getOperation().walk([&](memref::AllocaOp alloca) {
      if (inWorkgroupMemory(alloca))
        allocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : allocas) {
      auto launch = alloca->getParentOfType<gpu::LaunchOp>();
      if (!launch) {
        alloca.emitError("a workgroup buffer outside any GPU launch");
        return signalPassFailure();
      }
      if (!alloca.getType().hasStaticShape() || !alloca.getDynamicSizes().empty()) {
        alloca.emitError("a workgroup buffer of a size known only at run time");
        return signalPassFailure();
      }
      BlockArgument shared = launch.addWorkgroupAttribution(alloca.getType(), alloca.getLoc());
      alloca.replaceAllUsesWith(shared);
      alloca.erase();
    }
  }
};

} // namespace
} // namespace kiln::cuda
