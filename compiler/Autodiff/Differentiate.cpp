//===- Differentiate.cpp - kiln-differentiate: reverse mode ---------------===//
//
// Rewrites a function into its vector-Jacobian product: cotangent
// arguments for its float results, gradient results for the arguments
// asked for. One walk backwards over the body (kiln::backpropagate,
// dialects/kiln/Utils/Backpropagate.h): each op whose results carry a
// gradient asks its rule (DifferentiableOpInterface) for its operands'; a
// value used several times sums them. The forward values the rules read
// stay where they are, so the memory plan holds what the backward pass
// keeps alive, in the same arena.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Backward.h"
#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Graph/Decompose.h"
#include "compiler/Passes.h"
#include "dialects/kiln/Utils/Backpropagate.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {
#define GEN_PASS_DEF_DIFFERENTIATE
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

std::string nameOf(func::FuncOp f, unsigned index, bool result) {
  llvm::StringRef key = KilnDialect::NameAttrHelper::getNameStr();
  auto name = result ? f.getResultAttrOfType<StringAttr>(index, key)
                     : f.getArgAttrOfType<StringAttr>(index, key);
  return name ? name.str() : (result ? "output" : "input") + std::to_string(index);
}

DictionaryAttr named(MLIRContext *context, const std::string &name) {
  return DictionaryAttr::get(
      context, {NamedAttribute(StringAttr::get(context, KilnDialect::NameAttrHelper::getNameStr()),
                               StringAttr::get(context, name))});
}

} // namespace

LogicalResult kiln::autodiff::differentiate(func::FuncOp f, llvm::ArrayRef<int64_t> wrtList) {
  if (!f.getBody().hasOneBlock())
    return f.emitOpError("kiln-differentiate takes a function of one block");
  Block &body = f.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return f.emitOpError("kiln-differentiate: the body does not end in func.return");
  MLIRContext *context = f.getContext();
  // Normalisations are differentiated through their primitives.
  // (Only those ops: the greedy driver would also erase values nothing
  // uses yet, which a caller may be about to return.)
  {
    llvm::SmallVector<Operation *> norms;
    f.walk([&](Operation *op) {
      if (isa<LayerNormOp, BatchNormOp>(op))
        norms.push_back(op);
    });
    RewritePatternSet patterns(context);
    populateNormalizationDecompositions(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (!norms.empty() && failed(applyOpPatternsGreedily(norms, std::move(patterns), config)))
      return f.emitOpError("kiln-differentiate: decomposing normalisations failed");
  }

  // The arguments to differentiate with respect to.
  llvm::SmallVector<unsigned> wrt;
  if (wrtList.empty()) {
    for (BlockArgument arg : body.getArguments())
      if (isDifferentiable(arg))
        wrt.push_back(arg.getArgNumber());
  } else {
    for (int64_t i : wrtList) {
      if (i < 0 || i >= static_cast<int64_t>(body.getNumArguments()))
        return f.emitOpError("kiln-differentiate: wrt=") << i << " is not an argument";
      if (!isDifferentiable(body.getArgument(i)))
        return f.emitOpError("kiln-differentiate: argument '")
               << nameOf(f, i, false) << "' is not a float tensor; it has no gradient";
      wrt.push_back(static_cast<unsigned>(i));
    }
  }

  llvm::DenseMap<Value, Value> grads;
  OpBuilder b(ret);

  // One cotangent argument per float result.
  unsigned numResults = ret->getNumOperands();
  for (unsigned i = 0; i < numResults; ++i) {
    Value result = ret->getOperand(i);
    if (!isDifferentiable(result))
      continue;
    unsigned index = f.getNumArguments();
    (void)f.insertArgument(index, result.getType(), named(context, "grad_" + nameOf(f, i, true)),
                           result.getLoc());
    if (failed(accumulateGradient(b, grads, result, body.getArgument(index), ret)))
      return failure();
  }

  llvm::SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  if (failed(backpropagate(b, ops, grads)))
    return failure();

  // The gradients of the arguments asked for (zeros where none flows).
  llvm::SmallVector<Value> results(ret->getOperands());
  for (unsigned i : wrt) {
    BlockArgument arg = body.getArgument(i);
    Value g = grads.lookup(arg);
    if (!g)
      g = filled(b, arg.getLoc(), typeOf(arg), 0.0);
    unsigned index = f.getNumResults();
    (void)f.insertResult(index, g.getType(), named(context, "grad_" + nameOf(f, i, false)));
    results.push_back(g);
  }
  ret->setOperands(results);

  // Every op the backward pass added carries the mark (Backward.h).
  llvm::DenseSet<Operation *> forward(ops.begin(), ops.end());
  for (Operation &op : body.without_terminator())
    if (!forward.contains(&op))
      op.setLoc(markBackward(op.getLoc()));

  // stop_gradient has done its work: its value is its operand.
  for (Operation *op : ops)
    if (auto stop = dyn_cast<StopGradientOp>(op)) {
      stop.getResult().replaceAllUsesWith(stop.getInput());
      stop->erase();
    }
  return success();
}

namespace {

struct DifferentiatePass : kiln::impl::DifferentiateBase<DifferentiatePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto f = module.lookupSymbol<func::FuncOp>(function);
    if (!f) {
      module.emitError() << "kiln-differentiate: no function '" << function << "'";
      return signalPassFailure();
    }
    if (failed(differentiate(f, wrt)))
      signalPassFailure();
  }
};

} // namespace
