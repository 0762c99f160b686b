//===- Optimizers.cpp - ai.onnx.preview.training's ops -------------------===//
//
// Adagrad, Momentum and Adam as ONNX defines them: one update of parameters
// X from gradients G and the optimiser's state, given the learning rate R
// and the step count T (scalars read at run time). Elementwise arithmetic;
// several tensors updated by one node share R and T. (Kiln's own training
// steps, `kiln compile --train`, build their optimisers themselves.)
// Gradient: the graph imported so far differentiated in reverse mode by
// the same rules as `kiln compile --train` (kiln::backpropagate).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"
#include "dialects/kiln/Utils/Backpropagate.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

constexpr llvm::StringLiteral kTrainingDomain = "ai.onnx.preview.training";

/// The node's tensors after R and T, `groups` lists of equal length (X, G,
/// then the state), or nullopt (recorded).
std::optional<SmallVector<SmallVector<Value>>> tensorGroups(NodeContext &ctx, int64_t groups) {
  int64_t n = static_cast<int64_t>(ctx.numInputs()) - 2;
  if (n < groups || n % groups != 0) {
    ctx.invalid("needs R, T and " + llvm::Twine(groups) + " lists of tensors of one length");
    return std::nullopt;
  }
  int64_t count = n / groups;
  SmallVector<SmallVector<Value>> out(groups);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t i = 0; i < count; ++i) {
      Value v = ctx.input(2 + g * count + i);
      if (!v)
        return std::nullopt;
      out[g].push_back(v);
    }
  return out;
}

/// R and T as scalars of `like`'s element type.
std::pair<Value, Value> rateAndStep(NodeContext &ctx, Value like) {
  Type element = NodeContext::elementTypeOf(like);
  auto scalar = [&](Value v) {
    return v ? ctx.cast(ctx.make<ReshapeOp>(v, ctx.i64s({})), element) : v;
  };
  return {scalar(ctx.input(0)), scalar(ctx.input(1))};
}

/// norm_coefficient * x + g.
Value regularized(NodeContext &ctx, Value x, Value g) {
  double norm = ctx.floatAttr("norm_coefficient", 0.0f);
  return norm == 0 ? g : ctx.make<AddOp>(ctx.make<MulOp>(x, ctx.scalarLike(x, norm)), g);
}

LogicalResult importAdagrad(NodeContext &ctx) {
  auto groups = tensorGroups(ctx, 3);
  if (!groups)
    return failure();
  auto [r, t] = rateAndStep(ctx, (*groups)[0].front());
  double decay = ctx.floatAttr("decay_factor", 0.0f), epsilon = ctx.floatAttr("epsilon", 1e-6f);
  Value rate = ctx.make<DivOp>(
      r, ctx.make<AddOp>(ctx.scalarLike(t, 1), ctx.make<MulOp>(t, ctx.scalarLike(t, decay))));
  size_t n = (*groups)[0].size();
  for (size_t i = 0; i < n; ++i) {
    Value x = (*groups)[0][i], g = regularized(ctx, x, (*groups)[1][i]), h = (*groups)[2][i];
    Value hNew = ctx.make<AddOp>(h, ctx.make<MulOp>(g, g));
    Value scaled = ctx.make<DivOp>(
        g, ctx.make<AddOp>(ctx.make<SqrtOp>(hNew), ctx.scalarLike(hNew, epsilon)));
    ctx.bindOutput(i, ctx.make<SubOp>(x, ctx.make<MulOp>(rate, scaled)));
    ctx.bindOutput(n + i, hNew);
  }
  return ctx.finish();
}

LogicalResult importMomentum(NodeContext &ctx) {
  for (llvm::StringRef required : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!ctx.hasAttr(required))
      return ctx.invalid("needs the attribute " + required);
  std::string mode = ctx.stringAttr("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return ctx.invalid("mode '" + mode + "' is not standard or nesterov");
  auto groups = tensorGroups(ctx, 3);
  if (!groups)
    return failure();
  auto [r, t] = rateAndStep(ctx, (*groups)[0].front());
  double alpha = ctx.floatAttr("alpha", 0.0f), beta = ctx.floatAttr("beta", 0.0f);
  // The gradient's coefficient is 1 at the first step (T = 0).
  Value first = compare(ctx, ComparePredicate::gt, t, ctx.scalarLike(t, 0));
  Value betaNow = ctx.make<SelectOp>(first, ctx.scalarLike(t, beta), ctx.scalarLike(t, 1));
  size_t n = (*groups)[0].size();
  for (size_t i = 0; i < n; ++i) {
    Value x = (*groups)[0][i], g = regularized(ctx, x, (*groups)[1][i]), v = (*groups)[2][i];
    Value vNew = ctx.make<AddOp>(ctx.make<MulOp>(v, ctx.scalarLike(v, alpha)),
                                 ctx.make<MulOp>(betaNow, g));
    Value step = mode == "standard"
                     ? vNew
                     : ctx.make<AddOp>(g, ctx.make<MulOp>(vNew, ctx.scalarLike(vNew, alpha)));
    ctx.bindOutput(i, ctx.make<SubOp>(x, ctx.make<MulOp>(r, step)));
    ctx.bindOutput(n + i, vNew);
  }
  return ctx.finish();
}

LogicalResult importAdam(NodeContext &ctx) {
  auto groups = tensorGroups(ctx, 4);
  if (!groups)
    return failure();
  auto [r, t] = rateAndStep(ctx, (*groups)[0].front());
  double alpha = ctx.floatAttr("alpha", 0.9f), beta = ctx.floatAttr("beta", 0.999f);
  double epsilon = ctx.floatAttr("epsilon", 1e-6f);
  double post = ctx.floatAttr("norm_coefficient_post", 0.0f);
  // Bias correction from the second step on: r * sqrt(1 - beta^T) / (1 - alpha^T).
  auto oneMinusPower = [&](double base) {
    return ctx.make<SubOp>(ctx.scalarLike(t, 1), ctx.make<PowOp>(ctx.scalarLike(t, base), t));
  };
  Value corrected = ctx.make<DivOp>(ctx.make<MulOp>(r, ctx.make<SqrtOp>(oneMinusPower(beta))),
                                    oneMinusPower(alpha));
  Value rate = ctx.make<SelectOp>(compare(ctx, ComparePredicate::gt, t, ctx.scalarLike(t, 0)),
                                  corrected, r);
  size_t n = (*groups)[0].size();
  for (size_t i = 0; i < n; ++i) {
    Value x = (*groups)[0][i], g = regularized(ctx, x, (*groups)[1][i]);
    Value v = (*groups)[2][i], h = (*groups)[3][i];
    Value vNew = ctx.make<AddOp>(ctx.make<MulOp>(v, ctx.scalarLike(v, alpha)),
                                 ctx.make<MulOp>(g, ctx.scalarLike(g, 1 - alpha)));
    Value hNew = ctx.make<AddOp>(ctx.make<MulOp>(h, ctx.scalarLike(h, beta)),
                                 ctx.make<MulOp>(ctx.make<MulOp>(g, g), ctx.scalarLike(g, 1 - beta)));
    Value denominator = ctx.make<AddOp>(ctx.make<SqrtOp>(hNew), ctx.scalarLike(hNew, epsilon));
    Value xNew = ctx.make<SubOp>(x, ctx.make<MulOp>(rate, ctx.make<DivOp>(vNew, denominator)));
    if (post != 0)
      xNew = ctx.make<MulOp>(xNew, ctx.scalarLike(xNew, 1 - post));
    ctx.bindOutput(i, xNew);
    ctx.bindOutput(n + i, vNew);
    ctx.bindOutput(2 * n + i, hNew);
  }
  return ctx.finish();
}

/// Gradient: the gradients of `y` (seeded with ones: of the sum of its
/// elements) with respect to the tensors named by `xs`, through the nodes
/// imported before this one. The node's inputs must be those very tensors
/// (ONNX lets them feed other values in; Kiln differentiates the graph as
/// it is). An op on the way without a gradient rule is named.
LogicalResult importGradient(NodeContext &ctx) {
  const onnx::AttributeProto *xsAttr = ctx.attr("xs");
  const onnx::AttributeProto *yAttr = ctx.attr("y");
  if (!xsAttr || !yAttr)
    return ctx.invalid("needs the xs and y attributes");
  SmallVector<std::string> names(xsAttr->strings().begin(), xsAttr->strings().end());
  if (const onnx::AttributeProto *zs = ctx.attr("zs"))
    names.append(zs->strings().begin(), zs->strings().end());
  if (ctx.numInputs() != names.size())
    return ctx.invalid("has " + llvm::Twine(ctx.numInputs()) + " inputs for " +
                       llvm::Twine(names.size()) + " names in xs and zs");
  if (ctx.numOutputs() > static_cast<size_t>(xsAttr->strings_size()))
    return ctx.invalid("has more outputs than xs names tensors");
  for (auto [i, name] : llvm::enumerate(names))
    if (ctx.node.input(i) != name)
      return ctx.unsupported("input " + llvm::Twine(i) + " ('" + ctx.node.input(i) +
                             "') is not the tensor it stands for ('" + name +
                             "'): Kiln differentiates the graph with its own values");
  // The zs inputs are the graph's own tensors (checked above), which y
  // already reads where it does.
  for (size_t i = xsAttr->strings_size(); i < names.size(); ++i)
    ctx.inputWithoutEffect(i);
  Value y = ctx.valueNamed(yAttr->s());
  if (!y)
    return ctx.invalid("y names '" + yAttr->s() + "', which no node before it computes");
  if (!carriesGradient(y))
    return ctx.invalid("y ('" + yAttr->s() + "') is not a float tensor");
  SmallVector<Value> xs;
  for (int i = 0; i < xsAttr->strings_size(); ++i) {
    xs.push_back(ctx.input(i));
    if (xs.back() && !carriesGradient(xs.back()))
      return ctx.invalid("xs names '" + names[i] + "', which is not a float tensor");
  }
  if (ctx.failed())
    return failure();

  // Every op imported so far, in program order: those the gradient does
  // not reach are passed over.
  SmallVector<Operation *> ops;
  Block *block = ctx.b.getInsertionBlock();
  for (auto it = block->begin(); it != ctx.b.getInsertionPoint(); ++it)
    ops.push_back(&*it);
  llvm::DenseMap<Value, Value> grads;
  RankedTensorType yType = NodeContext::typeOf(y);
  if (!yType.hasStaticShape())
    return ctx.unsupported("y has dims decided at run time (gradients need static shapes)");
  grads[y] = ctx.constant(DenseElementsAttr::get(
      yType, ctx.b.getFloatAttr(yType.getElementType(), 1.0)));
  std::string why;
  {
    ScopedDiagnosticHandler handler(ctx.context(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        why += (why.empty() ? "" : "; ") + diag.str();
      return success();
    });
    if (failed(backpropagate(ctx.b, ops, grads)))
      return ctx.unsupported("the gradient cannot cross the graph: " +
                             (why.empty() ? std::string("a gradient rule failed") : why));
  }
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    Value g = grads.lookup(xs[i]);
    if (!g) // nothing flows from y back to it
      g = ctx.constant(DenseElementsAttr::get(
          NodeContext::typeOf(xs[i]),
          ctx.b.getFloatAttr(NodeContext::elementTypeOf(xs[i]), 0.0)));
    ctx.bindOutput(i, g);
  }
  return ctx.finish();
}

} // namespace

void registerOptimizerOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Adagrad", 1, any, importAdagrad, kTrainingDomain);
  r.add("Momentum", 1, any, importMomentum, kTrainingDomain);
  r.add("Adam", 1, any, importAdam, kTrainingDomain);
  r.add("Gradient", 1, any, importGradient, kTrainingDomain);
}

} // namespace kiln::onnx_frontend
