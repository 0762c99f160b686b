//===- ML.cpp - ai.onnx.ml ops ----------------------------------------------===//
//
// The classical-ML domain's elementwise and indexing ops, the scaling
// steps of scikit-learn pipelines (Scaler, Normalizer, Imputer) and the
// linear models; their score transforms (ML.h). Tree ensembles are in
// Trees.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"
#include "frontends/onnx/ops/ML.h"

#include "onnx/onnx.pb.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

constexpr llvm::StringLiteral kMlDomain = "ai.onnx.ml";

/// Binarizer: 1 where x > threshold, else 0, in x's type.
LogicalResult importBinarizer(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  Value above = compare(ctx, ComparePredicate::gt, x,
                        ctx.scalarLike(x, ctx.floatAttr("threshold", 0.0f)));
  return ctx.setOutput(0, ctx.cast(above, NodeContext::elementTypeOf(x)));
}

/// ArrayFeatureExtractor: the entries of the last axis that the (flattened)
/// indices name; a vector gives one row, as ONNX Runtime does.
LogicalResult importArrayFeatureExtractor(NodeContext &ctx) {
  Value x = ctx.input(0), indices = ctx.input(1);
  if (!x || !indices)
    return failure();
  int64_t rank = NodeContext::rankOf(x);
  if (rank < 1)
    return ctx.invalid("the input must have at least one dim");
  Value flat = ctx.make<ReshapeOp>(indices, ctx.i64s({-1}));
  Value y = ctx.make<GatherOp>(x, flat, ctx.i64(rank - 1));
  return ctx.setOutput(0, rank == 1 ? unsqueeze(ctx, y, {0}) : y);
}

/// `x` as float32 [batch, features] (a vector is one sample).
Value mlMatrix(NodeContext &ctx, Value x) {
  if (!x)
    return {};
  if (NodeContext::rankOf(x) == 1)
    x = unsqueeze(ctx, x, {0});
  if (NodeContext::rankOf(x) != 2) {
    ctx.invalid("X must be [batch, features]");
    return {};
  }
  return NodeContext::elementTypeOf(x).isF32() ? x : ctx.cast(x, ctx.b.getF32Type());
}

/// A 1-D float32 constant of `values`.
Value floatVector(NodeContext &ctx, ArrayRef<float> values) {
  return generateConstant(ctx,
                          RankedTensorType::get({static_cast<int64_t>(values.size())},
                                                ctx.b.getF32Type()),
                          [&](int64_t i) { return double(values[i]); });
}

/// Scaler: (x - offset) * scale, per feature (or one for all), in float32.
LogicalResult importScaler(NodeContext &ctx) {
  Value x = mlMatrix(ctx, ctx.input(0));
  if (!x)
    return failure();
  SmallVector<float> offset = ctx.floatsAttr("offset"), scale = ctx.floatsAttr("scale");
  Value y = offset.empty() ? x : ctx.make<SubOp>(x, floatVector(ctx, offset));
  return ctx.setOutput(0, scale.empty() ? y : ctx.make<MulOp>(y, floatVector(ctx, scale)));
}

/// Normalizer: each row divided by its MAX (of absolute values), L1 or L2
/// norm, at least 1e-30.
LogicalResult importNormalizer(NodeContext &ctx) {
  Value x = mlMatrix(ctx, ctx.input(0));
  if (!x)
    return failure();
  std::string norm = ctx.stringAttr("norm", "MAX");
  auto keep = ctx.b.getBoolAttr(true);
  Value size;
  if (norm == "MAX")
    size = ctx.make<ReduceMaxOp>(ctx.make<AbsOp>(x), ctx.i64s({1}), keep);
  else if (norm == "L1")
    size = ctx.make<ReduceSumOp>(ctx.make<AbsOp>(x), ctx.i64s({1}), keep);
  else if (norm == "L2")
    size = ctx.make<SqrtOp>(ctx.make<ReduceSumOp>(ctx.make<MulOp>(x, x), ctx.i64s({1}), keep));
  else
    return ctx.invalid("norm " + norm + " is not MAX, L1 or L2");
  return ctx.setOutput(0, ctx.make<DivOp>(x, ctx.make<MaxOp>(size, ctx.scalarLike(size, 1e-30))));
}

/// Imputer: entries equal to the replaced value (NaN: NaN entries) become
/// the feature's imputed value (or the single one given).
LogicalResult importImputer(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (NodeContext::rankOf(x) != 2)
    return ctx.invalid("X must be [batch, features]");
  SmallVector<float> floats = ctx.floatsAttr("imputed_value_floats");
  SmallVector<int64_t> ints = ctx.intsAttr("imputed_value_int64s");
  // The replaced value of the other kind is never compared (as in ONNX
  // Runtime, which reads the one of the input's type).
  Value values, missing;
  if (!floats.empty()) {
    ctx.attrsWithoutEffect({"replaced_value_int64"});
    values = ctx.cast(floatVector(ctx, floats), NodeContext::elementTypeOf(x));
    float replaced = ctx.floatAttr("replaced_value_float", 0.0f);
    missing = std::isnan(replaced) ? compare(ctx, ComparePredicate::ne, x, x)
                                   : compare(ctx, ComparePredicate::eq, x,
                                             ctx.scalarLike(x, replaced));
  } else if (!ints.empty()) {
    ctx.attrsWithoutEffect({"replaced_value_float"});
    values = ctx.cast(ctx.indices(ints), NodeContext::elementTypeOf(x));
    missing = compare(ctx, ComparePredicate::eq, x,
                      ctx.scalarLike(x, double(ctx.intAttr("replaced_value_int64", 0))));
  } else {
    return ctx.invalid("needs imputed_value_floats or imputed_value_int64s");
  }
  return ctx.setOutput(0, ctx.make<SelectOp>(missing, values, x));
}

/// X W^T + intercepts for the `coefficients` attribute ([outputs *
/// features], row-major), as float32 [batch, outputs].
Value linearScores(NodeContext &ctx, Value x, int64_t outputs) {
  SmallVector<float> coefficients = ctx.floatsAttr("coefficients");
  SmallVector<float> intercepts = ctx.floatsAttr("intercepts");
  int64_t features = NodeContext::typeOf(x).getDimSize(1);
  if (ShapedType::isDynamic(features)) {
    ctx.unsupported("a feature count decided at run time");
    return {};
  }
  if (static_cast<int64_t>(coefficients.size()) != outputs * features) {
    ctx.invalid("coefficients has " + llvm::Twine(coefficients.size()) + " entries for " +
                llvm::Twine(outputs) + " outputs of " + llvm::Twine(features) + " features");
    return {};
  }
  Value w = ctx.make<ReshapeOp>(floatVector(ctx, coefficients), ctx.i64s({outputs, features}));
  Value scores = ctx.make<MatmulOp>(x, ctx.make<TransposeOp>(w, ctx.i64s({1, 0})));
  if (intercepts.empty())
    return scores;
  if (static_cast<int64_t>(intercepts.size()) != outputs) {
    ctx.invalid("intercepts has " + llvm::Twine(intercepts.size()) + " entries for " +
                llvm::Twine(outputs) + " outputs");
    return {};
  }
  return ctx.make<AddOp>(scores, floatVector(ctx, intercepts));
}

/// LinearRegressor: X W^T + intercepts for `targets` outputs, then the
/// post transform.
LogicalResult importLinearRegressor(NodeContext &ctx) {
  Value x = mlMatrix(ctx, ctx.input(0));
  if (!x)
    return failure();
  Value scores = linearScores(ctx, x, ctx.intAttr("targets", 1));
  return ctx.setOutput(0, mlPostTransform(ctx, scores, ctx.stringAttr("post_transform", "NONE")));
}

/// LinearClassifier, as ONNX's reference: one score per coefficient row
/// (one row for two classes gives [-s, s]), the post transform, the label
/// of the best score (one score: the first label where it reaches 0, or
/// 0.5 after a transform, else 0); integer labels, or strings from a
/// string constant.
LogicalResult importLinearClassifier(NodeContext &ctx) {
  // multi_class changes nothing in ONNX's reference or in ONNX Runtime:
  // the scores are the same either way.
  ctx.attrsWithoutEffect({"multi_class"});
  // String labels: their positions stand for them until the end.
  std::vector<std::string> names;
  if (const onnx::AttributeProto *a = ctx.attr("classlabels_strings"))
    names.assign(a->strings().begin(), a->strings().end());
  SmallVector<int64_t> labels = ctx.intsAttr("classlabels_ints");
  for (size_t i = 0; i < names.size(); ++i)
    labels.push_back(static_cast<int64_t>(i));
  Value x = mlMatrix(ctx, ctx.input(0));
  if (!x)
    return failure();
  int64_t features = NodeContext::typeOf(x).getDimSize(1);
  int64_t rows = ShapedType::isDynamic(features) || features == 0
                     ? 0
                     : static_cast<int64_t>(ctx.floatsAttr("coefficients").size()) / features;
  Value scores = linearScores(ctx, x, rows);
  if (!scores)
    return failure();
  if (rows == 1 && labels.size() == 2)
    scores = ctx.make<ConcatOp>(ValueRange{ctx.make<NegOp>(scores), scores}, ctx.i64(1));
  std::string post = ctx.stringAttr("post_transform", "NONE");
  scores = mlPostTransform(ctx, scores, post);
  if (!scores)
    return failure();
  int64_t columns = NodeContext::typeOf(scores).getDimSize(1);
  Value label;
  if (columns > 1) {
    if (static_cast<int64_t>(labels.size()) != columns)
      return ctx.invalid(llvm::Twine(labels.size()) + " labels for " + llvm::Twine(columns) +
                         " scores");
    Value best = ctx.make<ArgMaxOp>(scores, ctx.i64(1), ctx.b.getBoolAttr(false),
                                    ctx.b.getBoolAttr(false));
    Value table = names.empty()
                      ? ctx.indices(labels)
                      : stringConstant(ctx, names, {static_cast<int64_t>(names.size())});
    label = ctx.make<GatherOp>(table, best, ctx.i64(0));
    if (!names.empty())
      ctx.asString(label);
  } else if (!names.empty()) {
    return ctx.unsupported("one score with string labels (ONNX's reference labels the "
                           "other class 0)");
  } else {
    Value reached = compare(ctx, ComparePredicate::ge, ctx.make<ReshapeOp>(scores, ctx.i64s({-1})),
                            ctx.scalarLike(scores, post == "NONE" ? 0.0 : 0.5));
    label = ctx.make<SelectOp>(reached, i64Scalar(ctx, labels.empty() ? 1 : labels[0]),
                               i64Scalar(ctx, 0));
  }
  ctx.bindOutput(0, label);
  return ctx.setOutput(1, scores);
}

} // namespace

Value mlPostTransform(NodeContext &ctx, Value scores, llvm::StringRef name) {
  if (name == "NONE" || !scores)
    return scores;
  auto c = [&](double v) { return ctx.scalarLike(scores, v); };
  if (name == "LOGISTIC")
    return ctx.make<SigmoidOp>(scores);
  if (name == "SOFTMAX")
    return ctx.make<SoftmaxOp>(scores, ctx.i64(1));
  if (name == "SOFTMAX_ZERO") {
    Value max = ctx.make<ReduceMaxOp>(scores, ctx.i64s({1}), ctx.b.getBoolAttr(true));
    Value zero = ctx.make<AndOp>(compare(ctx, ComparePredicate::le, scores, c(1e-7)),
                                 compare(ctx, ComparePredicate::ge, scores, c(-1e-7)));
    Value e = ctx.make<SelectOp>(zero, ctx.make<MulOp>(scores, ctx.make<ExpOp>(ctx.make<NegOp>(max))),
                                 ctx.make<ExpOp>(ctx.make<SubOp>(scores, max)));
    Value sum = ctx.make<ReduceSumOp>(e, ctx.i64s({1}), ctx.b.getBoolAttr(true));
    return ctx.make<SelectOp>(compare(ctx, ComparePredicate::eq, sum, c(0)), c(0.5),
                              ctx.make<DivOp>(e, sum));
  }
  if (name == "PROBIT") {
    Value x = ctx.make<SubOp>(ctx.make<MulOp>(scores, c(2)), c(1));
    Value sign = ctx.make<SelectOp>(compare(ctx, ComparePredicate::lt, x, c(0)), c(-1), c(1));
    Value t = ctx.make<MulOp>(ctx.make<SubOp>(c(1), x), ctx.make<AddOp>(c(1), x));
    Value log = ctx.make<LogOp>(t);
    Value v = ctx.make<AddOp>(c(2 / (M_PI * 0.147)), ctx.make<MulOp>(c(0.5), log));
    Value v2 = ctx.make<MulOp>(c(1 / 0.147), log);
    Value v3 = ctx.make<SubOp>(ctx.make<SqrtOp>(ctx.make<SubOp>(ctx.make<MulOp>(v, v), v2)), v);
    Value inv = ctx.make<MulOp>(sign, ctx.make<SqrtOp>(v3));
    inv = ctx.make<SelectOp>(compare(ctx, ComparePredicate::eq, t, c(0)), c(0), inv);
    return ctx.make<MulOp>(inv, c(1.41421356));
  }
  ctx.unsupported("post_transform " + name);
  return {};
}

void registerMlOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Binarizer", 1, any, importBinarizer, kMlDomain);
  r.add("ArrayFeatureExtractor", 1, any, importArrayFeatureExtractor, kMlDomain);
  r.add("Scaler", 1, any, importScaler, kMlDomain);
  r.add("Normalizer", 1, any, importNormalizer, kMlDomain);
  r.add("Imputer", 1, any, importImputer, kMlDomain);
  r.add("LinearRegressor", 1, any, importLinearRegressor, kMlDomain);
  r.add("LinearClassifier", 1, any, importLinearClassifier, kMlDomain);
}

} // namespace kiln::onnx_frontend
