//===- FuseEpilogues.cpp - conv / matmul + epilogue -> kiln.kernel --------===//
//
// Implements kiln-fuse for epilogues: finds the chain after each
// convolution or matmul, then moves root and chain into a kernel whose
// operands are everything the chain reads from outside.
//
//===----------------------------------------------------------------------===//

#include "compiler/Fusion/Fusion.h"
#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/Matchers.h"

#include "mlir/IR/IRMapping.h"

namespace kiln {
#define GEN_PASS_DEF_FUSE
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Whether `bias` (a constant) varies only along the channel dim of
/// `result`: dim 1 of a convolution's result, the last dim of a matmul's.
bool isChannelBias(Value bias, RankedTensorType result, bool isConv) {
  return constantThroughReshapes(bias) &&
         variesOnlyAlong(bias, result, isConv ? 1 : result.getRank() - 1);
}

bool isActivation(Operation *op) {
  return isa<ReluOp, ClipOp, SigmoidOp, TanhOp, GeluOp>(op);
}

/// The sigmoid of SiLU, x * sigmoid(x), when `x`'s only users are that
/// sigmoid and that mul (in either operand order); null otherwise, and
/// when the SiLU's only user roots a reduction kernel (a global average
/// pool), whose prologue it becomes instead: computed as the kernel reads
/// each row, whether or not the backend's library has SiLU.
SigmoidOp siluOf(Value x) {
  if (!llvm::hasNItems(x.getUsers(), 2))
    return nullptr;
  SigmoidOp sigmoid;
  MulOp mul;
  for (Operation *user : x.getUsers()) {
    if (auto s = dyn_cast<SigmoidOp>(user))
      sigmoid = s;
    else if (auto m = dyn_cast<MulOp>(user))
      mul = m;
  }
  if (!sigmoid || !mul || !sigmoid->hasOneUse() || *sigmoid->getUsers().begin() != mul ||
      mul.getType() != x.getType() ||
      (mul->hasOneUse() && fusion::firstReducedDim(*mul->getUsers().begin())))
    return nullptr;
  return sigmoid;
}

/// The HardSwish, x * clip(x / 6 + 1/2, 0, 1), that reads `x`, when each
/// of its ops but the last has one user and x's only users are its two
/// muls; nullopt otherwise, and (as for SiLU) when its only user roots a
/// reduction kernel, whose prologue it becomes.
std::optional<HardActivation> hardSwishOf(Value x) {
  if (!llvm::hasNItems(x.getUsers(), 2))
    return std::nullopt;
  for (Operation *user : x.getUsers()) {
    // The first mul, x / 6: its add, clip, then the mul by x.
    Operation *op = user;
    for (int step = 0; step < 3 && op && op->hasOneUse(); ++step)
      op = *op->getUsers().begin();
    std::optional<HardActivation> match = matchHardSwish(dyn_cast_or_null<MulOp>(op));
    if (!match || match->input != x || match->ops.front() != user ||
        !llvm::all_of(ArrayRef(match->ops).drop_back(), [](Operation *o) { return o->hasOneUse(); }))
      continue;
    if (op->hasOneUse() && fusion::firstReducedDim(*op->getUsers().begin()))
      return std::nullopt;
    return match;
  }
  return std::nullopt;
}

/// The hard sigmoid, clip(x * alpha + beta, 0, 1), that reads `x`, when x
/// and each of its ops but the last have one user; nullopt otherwise.
std::optional<HardActivation> hardSigmoidOf(Value x) {
  Operation *op = x.hasOneUse() ? *x.getUsers().begin() : nullptr;
  Operation *first = op;
  for (int step = 0; step < 2 && op && op->hasOneUse(); ++step)
    op = *op->getUsers().begin();
  std::optional<HardActivation> match = matchHardSigmoid(dyn_cast_or_null<ClipOp>(op));
  if (!match || match->input != x || match->ops.front() != first ||
      !match->ops[0]->hasOneUse() || !match->ops[1]->hasOneUse())
    return std::nullopt;
  return match;
}

/// The epilogue chain after `root`, in order, and the values it reads from
/// outside (bias, residual). The splat constants of a hard sigmoid or
/// HardSwish are not among them: the kernel holds copies.
struct Epilogue {
  SmallVector<Operation *> ops;
  SmallVector<Value> reads;
};

Epilogue findEpilogue(Operation *root) {
  Epilogue epilogue;
  bool isConv = isa<ConvOp>(root);
  auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
  enum Stage { Bias, Residual, Activation, Done } stage = Bias;
  Value current = root->getResult(0);
  while (stage != Done) {
    // SiLU, x * sigmoid(x), the only activation that reads its input
    // twice: the sigmoid, then the mul.
    if (SigmoidOp sigmoid = stage <= Activation ? siluOf(current) : nullptr) {
      Operation *mul = *sigmoid->getUsers().begin();
      epilogue.ops.push_back(sigmoid);
      epilogue.ops.push_back(mul);
      current = mul->getResult(0);
      stage = Done;
      break;
    }
    // HardSwish reads x twice too; a hard sigmoid is three ops.
    std::optional<HardActivation> hard;
    if (stage <= Activation && !(hard = hardSwishOf(current)))
      hard = hardSigmoidOf(current);
    if (hard) {
      epilogue.ops.append(hard->ops.begin(), hard->ops.end());
      current = hard->ops.back()->getResult(0);
      stage = Done;
      break;
    }
    if (!current.hasOneUse())
      break;
    Operation *user = *current.getUsers().begin();
    // (A return or another op without one same-typed result ends it.)
    if (user->getNumResults() != 1 || user->getResult(0).getType() != resultType)
      break;
    if (auto add = dyn_cast<AddOp>(user)) {
      Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      if (other == current)
        break;
      if (stage == Bias && isChannelBias(other, resultType, isConv)) {
        stage = Residual;
      } else if (stage <= Residual && other.getType() == resultType) {
        stage = Activation;
      } else {
        break;
      }
      epilogue.reads.push_back(other);
    } else if (isActivation(user) && stage <= Activation) {
      stage = Done;
    } else {
      break;
    }
    epilogue.ops.push_back(user);
    current = user->getResult(0);
  }
  return epilogue;
}

struct Fuse : kiln::impl::FuseBase<Fuse> {
  void runOnOperation() override {
    SmallVector<Operation *> roots;
    getOperation().walk([&](Operation *op) {
      if (isa<ConvOp, MatmulOp>(op) && !op->getParentOfType<KernelOp>())
        roots.push_back(op);
    });
    for (Operation *root : roots) {
      Epilogue epilogue = findEpilogue(root);
      if (epilogue.ops.empty())
        continue;
      Operation *last = epilogue.ops.back();
      SmallVector<Value> inputs(root->getOperands());
      inputs.append(epilogue.reads);
      // The kernel's location names every op in it (kiln inspect --kernels).
      SmallVector<Location> locs = {root->getLoc()};
      for (Operation *op : epilogue.ops)
        locs.push_back(op->getLoc());
      OpBuilder b(last);
      auto kernel = KernelOp::create(b, b.getFusedLoc(locs), last->getResultTypes(),
                                     KernelKind::epilogue, inputs);
      Block *body = b.createBlock(&kernel.getBody());
      IRMapping map;
      for (Value in : inputs)
        map.map(in, body->addArgument(in.getType(), in.getLoc()));
      b.setInsertionPointToStart(body);
      b.clone(*root, map);
      for (Operation *op : epilogue.ops) {
        // A constant the chain reads that is not an input (an activation's
        // splat) is copied in.
        for (Value operand : op->getOperands())
          if (!map.contains(operand))
            if (auto constant = operand.getDefiningOp<ConstantOp>())
              b.clone(*constant, map);
        b.clone(*op, map);
      }
      YieldOp::create(b, last->getLoc(), map.lookup(last->getResult(0)));
      last->getResult(0).replaceAllUsesWith(kernel.getResult(0));
      for (Operation *op : llvm::reverse(epilogue.ops))
        op->erase();
      root->erase();
      ++numKernels;
      numFusedOps += epilogue.ops.size();
    }
    int64_t fused = 0;
    numReductionKernels += fusion::formReductionKernels(getOperation(), fused);
    numReductionOps += fused;
    fused = 0;
    numElementwiseKernels += fusion::formElementwiseKernels(getOperation(), fused);
    numElementwiseOps += fused;
  }
};

} // namespace
