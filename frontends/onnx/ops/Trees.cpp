//===- Trees.cpp - ai.onnx.ml tree ensembles ------------------------------===//
//
// TreeEnsemble (opset 5), TreeEnsembleRegressor and TreeEnsembleClassifier
// (opsets 1 and 3, the forms scikit-learn's converters write). The trees are attributes, known
// when compiling: every node and leaf becomes a row of constant tables
// (feature, rule, threshold, next node on true and false), and each sample
// walks every tree at once, one step per level of the deepest tree: a step
// gathers the feature each current node reads, compares it by the node's
// rule and moves to the true or the false child (a leaf stays where it
// is). The leaves reached give their weights per target, aggregated over
// the trees (sum, average, min, max), offset by the base values and
// transformed (logistic, softmax, ...); TreeEnsembleClassifier then takes
// the best class's label.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"
#include "frontends/onnx/ops/ML.h"

#include "onnx/onnx.pb.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <limits>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

constexpr llvm::StringLiteral kMlDomain = "ai.onnx.ml";

/// Levels walked at most (each is a handful of gathers over [batch, trees]).
constexpr int64_t kMaxDepth = 512;

/// A node's rule, as TreeEnsemble numbers them (Leaf is Kiln's own).
enum class Rule : int64_t { Leq, Lt, Gte, Gt, Eq, Neq, Member, Leaf };

enum class Aggregate { Sum, Average, Min, Max };

/// A forest in one numbering: the branch nodes, then the leaves.
struct Forest {
  SmallVector<int64_t> feature, onTrue, onFalse;
  SmallVector<Rule> rule;
  SmallVector<double> threshold;
  SmallVector<bool> missingGoesTrue;
  /// Set members of Member nodes (by node).
  SmallVector<SmallVector<double>> members;
  /// The first node of each tree.
  SmallVector<int64_t> roots;
  /// Per state: (target, weight) pairs a leaf gives (empty for nodes).
  SmallVector<SmallVector<std::pair<int64_t, double>>> outputs;
  int64_t targets = 1;
  /// TreeEnsembleRegressor: a missing (NaN) feature goes by
  /// missingGoesTrue alone; TreeEnsemble: the rule is applied as well
  /// (NaN != t holds).
  bool missingByFlagOnly = false;

  int64_t addState(Rule r) {
    feature.push_back(0);
    onTrue.push_back(static_cast<int64_t>(rule.size()));
    onFalse.push_back(static_cast<int64_t>(rule.size()));
    rule.push_back(r);
    threshold.push_back(0);
    missingGoesTrue.push_back(false);
    members.emplace_back();
    outputs.emplace_back();
    return static_cast<int64_t>(rule.size()) - 1;
  }
};

/// Levels of the deepest tree (branch nodes on the longest path), or
/// nullopt (recorded) on a cycle or a tree deeper than kMaxDepth.
std::optional<int64_t> depthOf(NodeContext &ctx, const Forest &f) {
  size_t n = f.rule.size();
  SmallVector<int64_t> depth(n, -1); // -2: on the current path
  std::function<std::optional<int64_t>(int64_t)> visit = [&](int64_t s) -> std::optional<int64_t> {
    if (f.rule[s] == Rule::Leaf)
      return 0;
    if (depth[s] == -2) {
      ctx.invalid("a tree has a cycle through node " + llvm::Twine(s));
      return std::nullopt;
    }
    if (depth[s] >= 0)
      return depth[s];
    depth[s] = -2;
    std::optional<int64_t> a = visit(f.onTrue[s]);
    std::optional<int64_t> b = a ? visit(f.onFalse[s]) : std::nullopt;
    if (!b)
      return std::nullopt;
    depth[s] = 1 + std::max(*a, *b);
    if (depth[s] > kMaxDepth) {
      ctx.unsupported("a tree deeper than " + llvm::Twine(kMaxDepth) + " levels");
      return std::nullopt;
    }
    return depth[s];
  };
  int64_t deepest = 0;
  for (int64_t r : f.roots) {
    std::optional<int64_t> d = visit(r);
    if (!d)
      return std::nullopt;
    deepest = std::max(deepest, *d);
  }
  return deepest;
}

/// The forest evaluated on `x` ([batch, features]): [batch, targets] in
/// `outType`, aggregated as `how`, plus `base` (one per target, or empty).
Value evaluateForest(NodeContext &ctx, Value x, const Forest &f, Aggregate how,
                     ArrayRef<double> base, Type outType) {
  RankedTensorType xt = NodeContext::typeOf(x);
  std::optional<int64_t> levels = depthOf(ctx, f);
  if (!levels)
    return {};
  int64_t features = xt.getDimSize(1);
  for (size_t s = 0; s < f.rule.size(); ++s)
    if (f.rule[s] != Rule::Leaf && (f.feature[s] < 0 || f.feature[s] >= features)) {
      ctx.invalid("a node reads feature " + llvm::Twine(f.feature[s]) + " of " +
                  llvm::Twine(features));
      return {};
    }
  Type element = xt.getElementType();
  if (!isa<FloatType>(element)) {
    element = ctx.b.getF32Type();
    x = ctx.cast(x, element);
  }
  int64_t states = static_cast<int64_t>(f.rule.size());
  int64_t trees = static_cast<int64_t>(f.roots.size());
  auto table = [&](ArrayRef<int64_t> v) { return ctx.indices(v); };
  auto floats = [&](ArrayRef<double> v, Type t, ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, t);
    return generateConstant(ctx, type, [&](int64_t i) { return v[i]; });
  };
  SmallVector<int64_t> rules;
  for (Rule r : f.rule)
    rules.push_back(static_cast<int64_t>(r));
  Value featureOf = table(f.feature), trueOf = table(f.onTrue), falseOf = table(f.onFalse);
  Value ruleOf = table(rules);
  Value thresholdOf = floats(f.threshold, element, {states});
  SmallVector<int64_t> tracks;
  for (bool t : f.missingGoesTrue)
    tracks.push_back(t);
  bool anyTracks = llvm::is_contained(tracks, 1);
  Value tracksOf = table(tracks);
  // Set members padded with NaN (never equal) into [states, widest].
  size_t widest = 0;
  for (const auto &m : f.members)
    widest = std::max(widest, m.size());
  Value membersOf;
  if (widest > 0) {
    SmallVector<double> padded;
    for (const auto &m : f.members)
      for (size_t i = 0; i < widest; ++i)
        padded.push_back(i < m.size() ? m[i] : std::nan(""));
    membersOf = floats(padded, element, {states, static_cast<int64_t>(widest)});
  }
  // The rules the forest uses.
  SmallVector<bool> used(static_cast<size_t>(Rule::Leaf) + 1, false);
  for (Rule r : f.rule)
    used[static_cast<size_t>(r)] = true;

  // state[n, t]: where sample n is in tree t; it starts at the roots.
  Value rowZero = ctx.make<MulOp>(iotaOfDim(ctx, x, 0, 2, 0), i64Scalar(ctx, 0)); // [N, 1]
  Value state = ctx.make<AddOp>(rowZero, unsqueeze(ctx, table(f.roots), {0}));  // [N, T]
  Value rowStart = ctx.make<MulOp>(iotaOfDim(ctx, x, 0, 2, 0), i64Scalar(ctx, features));
  Value flatX = ctx.make<ReshapeOp>(x, ctx.i64s({-1}));
  auto at = [&](Value tableValue) { return ctx.make<GatherOp>(tableValue, state, ctx.i64(0)); };
  for (int64_t level = 0; level < *levels; ++level) {
    Value value = ctx.make<GatherOp>(flatX, ctx.make<AddOp>(rowStart, at(featureOf)),
                                     ctx.i64(0)); // [N, T]
    Value threshold = at(thresholdOf), rule = at(ruleOf);
    Value taken;
    auto add = [&](Rule r, Value holds) {
      Value here = compare(ctx, ComparePredicate::eq, rule, i64Scalar(ctx, static_cast<int64_t>(r)));
      Value part = ctx.make<AndOp>(here, holds);
      taken = taken ? ctx.make<OrOp>(taken, part) : part;
    };
    const std::pair<Rule, ComparePredicate> comparisons[] = {
        {Rule::Leq, ComparePredicate::le}, {Rule::Lt, ComparePredicate::lt},
        {Rule::Gte, ComparePredicate::ge}, {Rule::Gt, ComparePredicate::gt},
        {Rule::Eq, ComparePredicate::eq},  {Rule::Neq, ComparePredicate::ne}};
    for (auto [r, p] : comparisons)
      if (used[static_cast<size_t>(r)])
        add(r, compare(ctx, p, value, threshold));
    if (membersOf) {
      Value set = at(membersOf); // [N, T, widest]
      Value hit = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, value, {2}), set);
      Value any = ctx.make<ReduceMaxOp>(ctx.cast(hit, ctx.b.getI64Type()), ctx.i64s({2}),
                                        ctx.b.getBoolAttr(false));
      add(Rule::Member, compare(ctx, ComparePredicate::ne, any, i64Scalar(ctx, 0)));
    }
    if (!taken) // only leaves
      break;
    if (anyTracks) {
      Value missing = compare(ctx, ComparePredicate::ne, value, value);
      Value goesTrue = compare(ctx, ComparePredicate::ne, at(tracksOf), i64Scalar(ctx, 0));
      taken = f.missingByFlagOnly
                  ? ctx.make<SelectOp>(missing, goesTrue, taken)
                  : ctx.make<OrOp>(taken, ctx.make<AndOp>(missing, goesTrue));
    } else if (f.missingByFlagOnly && used[static_cast<size_t>(Rule::Neq)]) {
      Value missing = compare(ctx, ComparePredicate::ne, value, value);
      taken = ctx.make<AndOp>(taken, ctx.make<NotOp>(missing));
    }
    state = ctx.make<SelectOp>(taken, at(trueOf), at(falseOf));
  }

  // The leaves' weights per target, [states, targets], and which they set.
  int64_t k = f.targets;
  SmallVector<double> weights(states * k, 0.0);
  SmallVector<int64_t> present(states * k, 0);
  for (int64_t s = 0; s < states; ++s)
    for (auto [target, w] : f.outputs[s]) {
      if (target < 0 || target >= k) {
        ctx.invalid("a leaf names target " + llvm::Twine(target) + " of " + llvm::Twine(k));
        return {};
      }
      double &slot = weights[s * k + target];
      bool seen = present[s * k + target];
      slot = !seen ? w
             : how == Aggregate::Min ? std::min(slot, w)
             : how == Aggregate::Max ? std::max(slot, w)
                                     : slot + w;
      present[s * k + target] = 1;
    }
  Value reached = at(floats(weights, outType, {states, k})); // [N, T, K]
  Value sets = compare(ctx, ComparePredicate::ne,
                       at(ctx.make<ReshapeOp>(table(present), ctx.i64s({states, k}))),
                       i64Scalar(ctx, 0));
  double inf = std::numeric_limits<double>::infinity();
  Value result;
  switch (how) {
  case Aggregate::Sum:
  case Aggregate::Average:
    result = ctx.make<ReduceSumOp>(reached, ctx.i64s({1}), ctx.b.getBoolAttr(false));
    if (how == Aggregate::Average)
      result = ctx.make<DivOp>(result, ctx.scalarLike(result, static_cast<double>(trees)));
    break;
  case Aggregate::Min:
  case Aggregate::Max: {
    bool min = how == Aggregate::Min;
    Value masked = ctx.make<SelectOp>(sets, reached, ctx.scalarLike(reached, min ? inf : -inf));
    result = min ? ctx.make<ReduceMinOp>(masked, ctx.i64s({1}), ctx.b.getBoolAttr(false))
                 : ctx.make<ReduceMaxOp>(masked, ctx.i64s({1}), ctx.b.getBoolAttr(false));
    // A target no leaf reached keeps the start value: the type's largest
    // (min) or lowest (max) finite value, as ONNX's reference.
    const llvm::fltSemantics &sem = cast<FloatType>(outType).getFloatSemantics();
    double extreme = llvm::APFloat::getLargest(sem, !min).convertToDouble();
    Value none = compare(ctx, ComparePredicate::eq, result,
                         ctx.scalarLike(result, min ? inf : -inf));
    result = ctx.make<SelectOp>(none, ctx.scalarLike(result, extreme), result);
    break;
  }
  }
  if (!base.empty()) {
    if (static_cast<int64_t>(base.size()) != k) {
      ctx.invalid("base_values has " + llvm::Twine(base.size()) + " entries for " +
                  llvm::Twine(k) + " targets");
      return {};
    }
    result = ctx.make<AddOp>(result, unsqueeze(ctx, floats(base, outType, {k}), {0}));
  }
  return result;
}

/// The batch input of a tree ensemble as [batch, features] (static
/// features; a vector is one sample).
Value treeInput(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return {};
  if (NodeContext::rankOf(x) == 1)
    x = unsqueeze(ctx, x, {0});
  RankedTensorType t = NodeContext::typeOf(x);
  if (t.getRank() != 2) {
    ctx.invalid("X must be [batch, features]");
    return {};
  }
  if (t.isDynamicDim(1)) {
    ctx.unsupported("a feature count decided at run time");
    return {};
  }
  return x;
}

/// A float tensor's values as doubles.
SmallVector<double> doublesOf(DenseElementsAttr a) {
  SmallVector<double> out;
  for (APFloat v : a.getValues<APFloat>()) {
    bool lost;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    out.push_back(v.convertToDouble());
  }
  return out;
}

/// A float tensor attribute's values, or the float list's (opset 3's
/// `*_as_tensor` attributes hold doubles).
SmallVector<double> numbersAttr(NodeContext &ctx, llvm::StringRef name) {
  if (DenseElementsAttr t = ctx.tensorAttr((name + "_as_tensor").str()))
    return doublesOf(t);
  SmallVector<double> out;
  for (float v : ctx.floatsAttr(name))
    out.push_back(v);
  return out;
}

/// TreeEnsemble (ai.onnx.ml 5).
LogicalResult importTreeEnsemble(NodeContext &ctx) {
  // Hit rates say how often a node is reached, a hint for speed only.
  ctx.attrsWithoutEffect({"nodes_hitrates"});
  Value x = treeInput(ctx);
  if (!x)
    return failure();
  int64_t post = ctx.intAttr("post_transform", 0);
  if (post < 0 || post > 4)
    return ctx.invalid("post_transform " + llvm::Twine(post) + " is not 0 to 4");
  DenseElementsAttr splitsAttr = ctx.tensorAttr("nodes_splits");
  DenseElementsAttr modesAttr = ctx.tensorAttr("nodes_modes");
  DenseElementsAttr weightsAttr = ctx.tensorAttr("leaf_weights");
  if (!splitsAttr || !modesAttr || !weightsAttr)
    return ctx.invalid("needs nodes_splits, nodes_modes and leaf_weights");
  SmallVector<double> splits = doublesOf(splitsAttr), weights = doublesOf(weightsAttr);
  SmallVector<int64_t> modes;
  for (const APInt &m : modesAttr.getValues<APInt>())
    modes.push_back(m.getZExtValue());
  SmallVector<int64_t> features = ctx.intsAttr("nodes_featureids"),
                       trueIds = ctx.intsAttr("nodes_truenodeids"),
                       falseIds = ctx.intsAttr("nodes_falsenodeids"),
                       trueLeaf = ctx.intsAttr("nodes_trueleafs"),
                       falseLeaf = ctx.intsAttr("nodes_falseleafs"),
                       targets = ctx.intsAttr("leaf_targetids"),
                       tracks = ctx.intsAttr("nodes_missing_value_tracks_true"),
                       roots = ctx.intsAttr("tree_roots");
  size_t nodes = splits.size(), leaves = weights.size();
  if (modes.size() != nodes || features.size() != nodes || trueIds.size() != nodes ||
      falseIds.size() != nodes || trueLeaf.size() != nodes || falseLeaf.size() != nodes ||
      (!tracks.empty() && tracks.size() != nodes) || targets.size() != leaves)
    return ctx.invalid("the node (or leaf) attributes have different lengths");
  SmallVector<double> memberValues;
  if (DenseElementsAttr m = ctx.tensorAttr("membership_values"))
    memberValues = doublesOf(m);
  Forest f;
  f.targets = ctx.intAttr("n_targets", 1);
  for (size_t i = 0; i < nodes; ++i) {
    if (modes[i] > static_cast<int64_t>(Rule::Member))
      return ctx.invalid("nodes_modes " + llvm::Twine(modes[i]) + " is not a rule");
    f.addState(static_cast<Rule>(modes[i]));
  }
  for (size_t j = 0; j < leaves; ++j)
    f.outputs[f.addState(Rule::Leaf)].push_back({targets[j], weights[j]});
  // Members: the runs of membership_values between NaNs, in node order.
  size_t next = 0;
  for (size_t i = 0; i < nodes; ++i) {
    f.feature[i] = features[i];
    f.threshold[i] = splits[i];
    f.missingGoesTrue[i] = !tracks.empty() && tracks[i] != 0;
    auto child = [&](int64_t id, bool leaf) -> std::optional<int64_t> {
      size_t limit = leaf ? leaves : nodes;
      if (id < 0 || static_cast<size_t>(id) >= limit)
        return std::nullopt;
      return leaf ? static_cast<int64_t>(nodes) + id : id;
    };
    std::optional<int64_t> t = child(trueIds[i], trueLeaf[i]), e = child(falseIds[i], falseLeaf[i]);
    if (!t || !e)
      return ctx.invalid("node " + llvm::Twine(i) + " names a child out of range");
    f.onTrue[i] = *t;
    f.onFalse[i] = *e;
    if (f.rule[i] == Rule::Member) {
      while (next < memberValues.size() && !std::isnan(memberValues[next]))
        f.members[i].push_back(memberValues[next++]);
      if (next >= memberValues.size())
        return ctx.invalid("membership_values has no set for node " + llvm::Twine(i));
      ++next; // the NaN that ends the set
    }
  }
  for (int64_t r : roots) {
    if (r < 0 || static_cast<size_t>(r) >= nodes)
      return ctx.invalid("tree root " + llvm::Twine(r) + " is out of range");
    // A root whose both branches name the same leaf is that leaf.
    bool leaf = trueLeaf[r] && falseLeaf[r] && trueIds[r] == falseIds[r];
    f.roots.push_back(leaf ? f.onTrue[r] : r);
  }
  int64_t aggregate = ctx.intAttr("aggregate_function", 1);
  if (aggregate < 0 || aggregate > 3)
    return ctx.invalid("aggregate_function " + llvm::Twine(aggregate) + " is not 0 to 3");
  const Aggregate order[] = {Aggregate::Average, Aggregate::Sum, Aggregate::Min, Aggregate::Max};
  Type out = NodeContext::elementTypeOf(x);
  if (!isa<FloatType>(out))
    out = ctx.b.getF32Type();
  const char *transforms[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  return ctx.setOutput(
      0, mlPostTransform(ctx, evaluateForest(ctx, x, f, order[aggregate], {}, out), transforms[post]));
}

/// The forest of TreeEnsembleRegressor / TreeEnsembleClassifier (ai.onnx.ml
/// 1 and 3): nodes named by (tree id, node id), rules as strings, the
/// leaves' (output, weight) entries by (tree id, node id) in the
/// `<leaf>_treeids`, `_nodeids`, `_ids` and `_weights` attributes.
LogicalResult parseForest(NodeContext &ctx, llvm::StringRef leaf, Forest &f) {
  // Hit rates say how often a node is reached, a hint for speed only.
  ctx.attrsWithoutEffect({"nodes_hitrates", "nodes_hitrates_as_tensor"});
  const onnx::AttributeProto *modesAttr = ctx.attr("nodes_modes");
  if (!modesAttr)
    return ctx.invalid("needs nodes_modes");
  auto leafAttr = [&](llvm::StringRef suffix) { return (leaf + suffix).str(); };
  SmallVector<int64_t> treeIds = ctx.intsAttr("nodes_treeids"),
                       nodeIds = ctx.intsAttr("nodes_nodeids"),
                       features = ctx.intsAttr("nodes_featureids"),
                       trueIds = ctx.intsAttr("nodes_truenodeids"),
                       falseIds = ctx.intsAttr("nodes_falsenodeids"),
                       tracks = ctx.intsAttr("nodes_missing_value_tracks_true"),
                       leafTrees = ctx.intsAttr(leafAttr("_treeids")),
                       leafNodes = ctx.intsAttr(leafAttr("_nodeids")),
                       leafIds = ctx.intsAttr(leafAttr("_ids"));
  SmallVector<double> values = numbersAttr(ctx, "nodes_values"),
                      leafWeights = numbersAttr(ctx, leafAttr("_weights"));
  size_t n = treeIds.size();
  if (nodeIds.size() != n || features.size() != n ||
      static_cast<size_t>(modesAttr->strings_size()) != n || trueIds.size() != n ||
      falseIds.size() != n || (!values.empty() && values.size() != n) ||
      (!tracks.empty() && tracks.size() != n))
    return ctx.invalid("the node attributes have different lengths");
  if (leafNodes.size() != leafTrees.size() || leafIds.size() != leafTrees.size() ||
      leafWeights.size() != leafTrees.size())
    return ctx.invalid("the " + leaf + " attributes have different lengths");
  static const llvm::StringMap<Rule> rules = {
      {"BRANCH_LEQ", Rule::Leq}, {"BRANCH_LT", Rule::Lt}, {"BRANCH_GTE", Rule::Gte},
      {"BRANCH_GT", Rule::Gt},   {"BRANCH_EQ", Rule::Eq}, {"BRANCH_NEQ", Rule::Neq},
      {"LEAF", Rule::Leaf}};
  f.missingByFlagOnly = true;
  std::map<std::pair<int64_t, int64_t>, int64_t> index;
  for (size_t i = 0; i < n; ++i) {
    auto rule = rules.find(modesAttr->strings(i));
    if (rule == rules.end())
      return ctx.unsupported("node rule " + modesAttr->strings(i));
    int64_t s = f.addState(rule->second);
    f.feature[s] = features[i];
    f.threshold[s] = values.empty() ? 0 : values[i];
    f.missingGoesTrue[s] = !tracks.empty() && tracks[i] != 0;
    if (!index.emplace(std::make_pair(treeIds[i], nodeIds[i]), s).second)
      return ctx.invalid("tree " + llvm::Twine(treeIds[i]) + " has node " +
                         llvm::Twine(nodeIds[i]) + " twice");
  }
  for (size_t i = 0; i < n; ++i) {
    if (f.rule[i] == Rule::Leaf)
      continue;
    auto t = index.find({treeIds[i], trueIds[i]}), e = index.find({treeIds[i], falseIds[i]});
    if (t == index.end() || e == index.end())
      return ctx.invalid("node " + llvm::Twine(nodeIds[i]) + " of tree " +
                         llvm::Twine(treeIds[i]) + " names a child the tree lacks");
    f.onTrue[i] = t->second;
    f.onFalse[i] = e->second;
  }
  // A tree's root: the node no other node of it names.
  std::map<int64_t, std::set<int64_t>> children;
  for (size_t i = 0; i < n; ++i) {
    children[treeIds[i]];
    if (f.rule[i] != Rule::Leaf) {
      children[treeIds[i]].insert(f.onTrue[i]);
      children[treeIds[i]].insert(f.onFalse[i]);
    }
  }
  for (const auto &[tree, named] : children) {
    int64_t root = -1;
    for (size_t i = 0; i < n && root < 0; ++i)
      if (treeIds[i] == tree && !named.count(static_cast<int64_t>(i)))
        root = static_cast<int64_t>(i);
    if (root < 0)
      return ctx.invalid("tree " + llvm::Twine(tree) + " has no root");
    f.roots.push_back(root);
  }
  for (size_t j = 0; j < leafTrees.size(); ++j) {
    auto s = index.find({leafTrees[j], leafNodes[j]});
    if (s == index.end() || f.rule[s->second] != Rule::Leaf)
      return ctx.invalid("a " + leaf + " entry names node " + llvm::Twine(leafNodes[j]) +
                         " of tree " + llvm::Twine(leafTrees[j]) + ", which is not a leaf");
    f.outputs[s->second].push_back({leafIds[j], leafWeights[j]});
  }
  return success();
}

/// TreeEnsembleRegressor (ai.onnx.ml 1 and 3): [batch, n_targets] float32.
LogicalResult importTreeEnsembleRegressor(NodeContext &ctx) {
  Value x = treeInput(ctx);
  Forest f;
  if (!x || failed(parseForest(ctx, "target", f)))
    return failure();
  f.targets = ctx.intAttr("n_targets", 1);
  std::string aggregate = ctx.stringAttr("aggregate_function", "SUM");
  static const llvm::StringMap<Aggregate> aggregates = {
      {"SUM", Aggregate::Sum}, {"AVERAGE", Aggregate::Average},
      {"MIN", Aggregate::Min}, {"MAX", Aggregate::Max}};
  auto how = aggregates.find(aggregate);
  if (how == aggregates.end())
    return ctx.invalid("aggregate_function " + aggregate);
  Value scores = evaluateForest(ctx, x, f, how->second, numbersAttr(ctx, "base_values"),
                                ctx.b.getF32Type());
  return ctx.setOutput(0, mlPostTransform(ctx, scores, ctx.stringAttr("post_transform", "NONE")));
}

/// TreeEnsembleClassifier (ai.onnx.ml 1 and 3), as ONNX's reference: the
/// class weights of the leaves reached summed per class over base_values;
/// when every weight names one class (a binary model) its score is class
/// 1's and class 0's is 1 - it (NONE, PROBIT) or its negation; then the
/// post transform; the label is the class of the highest score (integer
/// labels, or strings from a string constant).
LogicalResult importTreeEnsembleClassifier(NodeContext &ctx) {
  // String labels: their positions stand for them until the end.
  std::vector<std::string> names;
  if (const onnx::AttributeProto *a = ctx.attr("classlabels_strings"))
    names.assign(a->strings().begin(), a->strings().end());
  SmallVector<int64_t> labels = ctx.intsAttr("classlabels_int64s");
  for (size_t i = 0; i < names.size(); ++i)
    labels.push_back(static_cast<int64_t>(i));
  if (labels.empty())
    return ctx.invalid("needs classlabels_int64s or classlabels_strings");
  Value x = treeInput(ctx);
  Forest f;
  if (!x || failed(parseForest(ctx, "class", f)))
    return failure();
  std::set<int64_t> named;
  for (const auto &entries : f.outputs)
    for (auto [cls, w] : entries)
      named.insert(cls);
  bool binary = named.size() == 1;
  int64_t classes = static_cast<int64_t>(labels.size());
  if (binary && classes > 2)
    return ctx.unsupported("weights of one class among " + llvm::Twine(classes) + " labels");
  f.targets = classes;
  SmallVector<double> base = numbersAttr(ctx, "base_values");
  if (!base.empty() && static_cast<int64_t>(base.size()) != classes)
    return ctx.invalid("base_values has " + llvm::Twine(base.size()) + " entries for " +
                       llvm::Twine(classes) + " classes");
  Value scores = evaluateForest(ctx, x, f, Aggregate::Sum, base, ctx.b.getF32Type());
  std::string post = ctx.stringAttr("post_transform", "NONE");
  if (binary && scores) {
    // Column 0's sum is class 1's score; class 0's follows from it.
    SmallVector<int64_t> starts = {0, 0}, ends = {INT64_MAX, 1}, steps = {1, 1};
    Value one = ctx.make<SliceOp>(scores, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps));
    Value zero = post == "NONE" || post == "PROBIT"
                     ? ctx.make<SubOp>(ctx.scalarLike(one, 1.0), one)
                     : ctx.make<NegOp>(one);
    scores = ctx.make<ConcatOp>(ValueRange{zero, one}, ctx.i64(1));
    if (classes == 1 && !names.empty())
      return ctx.unsupported("one string label (ONNX's reference labels the other class 0)");
    if (classes == 1)
      labels = {0, labels[0]};
  }
  scores = mlPostTransform(ctx, scores, post);
  if (!scores)
    return failure();
  Value best = ctx.make<ArgMaxOp>(scores, ctx.i64(1), ctx.b.getBoolAttr(false),
                                  ctx.b.getBoolAttr(false));
  Value table = names.empty()
                    ? ctx.indices(labels)
                    : stringConstant(ctx, names, {static_cast<int64_t>(names.size())});
  Value label = ctx.make<GatherOp>(table, best, ctx.i64(0));
  ctx.bindOutput(0, names.empty() ? label : ctx.asString(label));
  return ctx.setOutput(1, scores);
}

} // namespace

void registerTreeOps(OpRegistry &r) {
  r.add("TreeEnsemble", 5, kAnyLaterOpset, importTreeEnsemble, kMlDomain);
  r.add("TreeEnsembleRegressor", 1, kAnyLaterOpset, importTreeEnsembleRegressor, kMlDomain);
  r.add("TreeEnsembleClassifier", 1, kAnyLaterOpset, importTreeEnsembleClassifier, kMlDomain);
}

} // namespace kiln::onnx_frontend
