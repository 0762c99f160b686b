//===- ParallelDimsFirst.cpp - parallel dims before reductions ------------===//
//
// Implements kiln-gpu-parallel-dims-first (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_GPUPARALLELDIMSFIRST
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {
namespace {

struct GpuParallelDimsFirstPass : impl::GpuParallelDimsFirstBase<GpuParallelDimsFirstPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) { generics.push_back(g); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp generic : generics) {
      SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
      SmallVector<unsigned> order;
      for (auto [d, kind] : llvm::enumerate(iterators))
        if (kind == utils::IteratorType::parallel)
          order.push_back(d);
      size_t parallel = order.size();
      for (auto [d, kind] : llvm::enumerate(iterators))
        if (kind != utils::IteratorType::parallel)
          order.push_back(d);
      // Already parallel-first: nothing to do.
      bool identity = true;
      for (auto [i, d] : llvm::enumerate(order))
        identity &= i == d;
      if (identity || parallel == 0)
        continue;
      rewriter.setInsertionPoint(generic);
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitError("kiln-gpu-parallel-dims-first: the loops cannot be interchanged");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
} // namespace kiln::cuda
