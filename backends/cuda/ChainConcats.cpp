//===- ChainConcats.cpp - a concatenation extending another reuses it -----===//
//
// On the GPU every input of a concatenation is a copy into its buffer (a
// kernel each), unless a convolution writes it there directly (its only
// use: kiln.output_into). A DenseNet block concatenates its input and
// every layer's output so far for each layer: concatenation k joins
// x0, f1, ..., fk, so k + 1 copies for layer k and each fi read by every
// later layer's concatenation. A concatenation whose leading inputs are
// exactly another's (same axis, earlier in the block) takes that one
// instead: concatenation k joins concatenation k - 1 and fk (one copy,
// and fk's only use is concatenation k, so its convolution writes into
// it). The same values, fewer kernels.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/LibraryCalls.h"
#include "backends/cuda/Passes.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace kiln::cuda {
#define GEN_PASS_DEF_CUDACHAINCONCATS
#include "backends/cuda/Passes.h.inc"
} // namespace kiln::cuda

using namespace mlir;

namespace kiln::cuda {

/// The longest concatenation along `concat`'s axis, in its block before
/// it, whose inputs are a prefix of `concat`'s, at least two and fewer
/// than all of them; or none.
static ConcatOp longestPrefix(ConcatOp concat) {
  OperandRange inputs = concat.getInputs();
  ConcatOp best;
  for (Operation *user : inputs.front().getUsers()) {
    auto other = dyn_cast<ConcatOp>(user);
    if (!other || other == concat || other.getAxis() != concat.getAxis() ||
        other->getBlock() != concat->getBlock() || !other->isBeforeInBlock(concat))
      continue;
    OperandRange prefix = other.getInputs();
    if (prefix.size() < 2 || prefix.size() >= inputs.size() ||
        (best && prefix.size() <= best.getInputs().size()))
      continue;
    if (llvm::equal(prefix, inputs.take_front(prefix.size())))
      best = other;
  }
  return best;
}

int chainConcats(ModuleOp module) {
  // Each concatenation's longest prefix among the inputs as they are,
  // decided before any changes (a chained one's inputs no longer list
  // what a later one starts with).
  struct Chain {
    ConcatOp concat, prefix;
    size_t joined; // the prefix's inputs
  };
  SmallVector<Chain> chains;
  module.walk([&](ConcatOp concat) {
    if (ConcatOp prefix = longestPrefix(concat))
      chains.push_back({concat, prefix, prefix.getInputs().size()});
  });
  for (auto [concat, prefix, joined] : chains) {
    SmallVector<Value> inputs = {prefix.getResult()};
    llvm::append_range(inputs, concat.getInputs().drop_front(joined));
    concat.getInputsMutable().assign(inputs);
  }
  return static_cast<int>(chains.size());
}

namespace {
struct CudaChainConcatsPass : impl::CudaChainConcatsBase<CudaChainConcatsPass> {
  void runOnOperation() override { chainConcats(getOperation()); }
};
} // namespace

} // namespace kiln::cuda
