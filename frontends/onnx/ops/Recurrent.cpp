//===- Recurrent.cpp - ONNX RNN, GRU and LSTM ------------------------------===//
//
// Recurrent layers over a static sequence length are unrolled: the input
// projection of every time step is one matmul up front, then each step is
// a small matmul with the recurrence weights plus elementwise gate math.
// Directions (forward, reverse, bidirectional), initial states, biases,
// peepholes, clip, layout and the standard activation list are supported.
// Per-batch sequence lengths (constant or read at run time) mask the steps
// past a batch entry's length: its state stays, its outputs are zeros (a
// reverse direction so starts at the entry's last step).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

enum class CellKind { RNN, GRU, LSTM };

/// One activation of the `activations` attribute with its alpha / beta.
struct Activation {
  std::string name;
  float alpha = 0, beta = 0;
};

Value applyActivation(NodeContext &ctx, const Activation &a, Value x) {
  auto s = [&](double v) { return ctx.scalarLike(x, v); };
  if (a.name == "Tanh")
    return ctx.make<TanhOp>(x);
  if (a.name == "Sigmoid")
    return ctx.make<SigmoidOp>(x);
  if (a.name == "Relu")
    return ctx.make<ReluOp>(x);
  if (a.name == "Affine")
    return ctx.make<AddOp>(ctx.make<MulOp>(x, s(a.alpha)), s(a.beta));
  if (a.name == "LeakyRelu") {
    Value negative = ctx.make<CompareOp>(
        ComparePredicateAttr::get(ctx.context(), ComparePredicate::lt), x, s(0));
    return ctx.make<SelectOp>(negative, ctx.make<MulOp>(x, s(a.alpha)), x);
  }
  if (a.name == "ScaledTanh")
    return ctx.make<MulOp>(ctx.make<TanhOp>(ctx.make<MulOp>(x, s(a.beta))), s(a.alpha));
  if (a.name == "HardSigmoid")
    return ctx.make<ClipOp>(ctx.make<AddOp>(ctx.make<MulOp>(x, s(a.alpha)), s(a.beta)),
                            ctx.b.getF64FloatAttr(0.0), ctx.b.getF64FloatAttr(1.0));
  ctx.unsupported("activation '" + a.name + "'");
  return {};
}

/// Slices entry `d` of the leading (direction) dim and drops that dim.
Value direction(NodeContext &ctx, Value v, int64_t d) {
  int64_t rank = NodeContext::rankOf(v);
  SmallVector<int64_t> starts(rank, 0), ends(rank, INT64_MAX), steps(rank, 1);
  starts[0] = d;
  ends[0] = d + 1;
  Value slice = ctx.make<SliceOp>(v, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps));
  return squeeze(ctx, slice, {0});
}

Value transpose2d(NodeContext &ctx, Value v) {
  return ctx.make<TransposeOp>(v, ctx.i64s({1, 0}));
}

LogicalResult importRecurrent(NodeContext &ctx, CellKind kind) {
  int64_t gates = kind == CellKind::RNN ? 1 : kind == CellKind::GRU ? 3 : 4;
  Value x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
  Value bias = ctx.optionalInput(3);
  Value h0 = ctx.optionalInput(5);
  Value c0 = kind == CellKind::LSTM ? ctx.optionalInput(6) : Value();
  Value peephole = kind == CellKind::LSTM ? ctx.optionalInput(7) : Value();
  if (!x || !w || !r)
    return failure();
  int64_t hidden = ctx.intAttr("hidden_size", 0);
  if (hidden <= 0)
    return ctx.invalid("hidden_size must be positive");
  bool batchFirst = ctx.intAttr("layout", 0) != 0;
  if (kind == CellKind::LSTM && ctx.intAttr("input_forget", 0) != 0)
    return ctx.unsupported("input_forget = 1");
  std::string dirName = ctx.stringAttr("direction", "forward");
  int64_t numDirections = dirName == "bidirectional" ? 2 : 1;
  if (dirName != "forward" && dirName != "reverse" && dirName != "bidirectional")
    return ctx.invalid("direction '" + dirName + "'");
  if (batchFirst) {
    x = ctx.make<TransposeOp>(x, ctx.i64s({1, 0, 2}));
    if (h0)
      h0 = ctx.make<TransposeOp>(h0, ctx.i64s({1, 0, 2}));
    if (c0)
      c0 = ctx.make<TransposeOp>(c0, ctx.i64s({1, 0, 2}));
  }
  std::optional<int64_t> seq = staticDim(ctx, x, 0, "unrolling the sequence");
  if (!seq)
    return failure();
  // lengths: [batch, 1] i64 when some batch entry may be shorter.
  Value lengths;
  if (ctx.hasInput(4)) {
    bool full = false;
    if (ctx.isKnownInput(4)) {
      std::optional<SmallVector<int64_t>> known = ctx.intsInput(4, "sequence_lens");
      if (!known)
        return failure();
      full = llvm::all_of(*known, [&](int64_t len) { return len == *seq; });
    }
    if (!full) {
      Value given = runtimeInts(ctx, 4);
      if (!given)
        return failure();
      if (NodeContext::rankOf(given) != 1)
        return ctx.invalid("sequence_lens must be 1-D");
      lengths = unsqueeze(ctx, given, {1});
    }
  }
  // Activations: defaults per cell, then the attribute's list per direction.
  size_t perDirection = kind == CellKind::RNN ? 1 : kind == CellKind::GRU ? 2 : 3;
  SmallVector<Activation> activations;
  {
    const char *defaults[] = {kind == CellKind::RNN ? "Tanh" : "Sigmoid", "Tanh", "Tanh"};
    SmallVector<std::string> names;
    if (const auto *a = ctx.attr("activations"))
      for (const auto &s : a->strings())
        names.push_back(s);
    SmallVector<float> alphas = ctx.floatsAttr("activation_alpha");
    SmallVector<float> betas = ctx.floatsAttr("activation_beta");
    size_t next = 0;
    for (int64_t d = 0; d < numDirections; ++d)
      for (size_t i = 0; i < perDirection; ++i) {
        size_t k = d * perDirection + i;
        Activation act;
        act.name = k < names.size() ? names[k] : defaults[i];
        if (act.name == "Affine" || act.name == "LeakyRelu" || act.name == "ScaledTanh" ||
            act.name == "HardSigmoid") {
          act.alpha = next < alphas.size() ? alphas[next] : 0;
          act.beta = next < betas.size() ? betas[next] : 0;
          ++next;
        }
        activations.push_back(act);
      }
  }
  float clip = ctx.floatAttr("clip", 0);
  bool linearBeforeReset = ctx.intAttr("linear_before_reset", 0) != 0;

  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < numDirections; ++d) {
    bool reverse = dirName == "reverse" || d == 1;
    auto act = [&](size_t i, Value v) {
      if (clip > 0)
        v = ctx.make<ClipOp>(v, ctx.b.getF64FloatAttr(-clip), ctx.b.getF64FloatAttr(clip));
      return applyActivation(ctx, activations[d * perDirection + i], v);
    };
    Value wt = transpose2d(ctx, direction(ctx, w, d)); // [input, G*h]
    Value rt = transpose2d(ctx, direction(ctx, r, d)); // [h, G*h]
    Value xw = ctx.make<MatmulOp>(x, wt);              // [seq, batch, G*h]
    SmallVector<Value> rbGates;
    if (bias) {
      SmallVector<Value> halves = ctx.makeMulti<SplitOp>(
          2, direction(ctx, bias, d), ctx.i64(0), ctx.i64s({gates * hidden, gates * hidden}));
      if (halves.size() != 2)
        return failure();
      xw = ctx.make<AddOp>(xw, halves[0]);
      rbGates = ctx.makeMulti<SplitOp>(gates, halves[1], ctx.i64(0),
                                       ctx.i64s(SmallVector<int64_t>(gates, hidden)));
    }
    SmallVector<Value> peep;
    if (peephole)
      peep = ctx.makeMulti<SplitOp>(3, direction(ctx, peephole, d), ctx.i64(0),
                                    ctx.i64s({hidden, hidden, hidden}));
    Value zeros = ctx.scalarLike(x, 0);
    Value h = h0 ? direction(ctx, h0, d)
                 : ctx.make<ExpandOp>(zeros, ctx.i64s({1, hidden}));
    Value c = c0 ? direction(ctx, c0, d)
                 : ctx.make<ExpandOp>(zeros, ctx.i64s({1, hidden}));
    SmallVector<Value> outputs(*seq);
    for (int64_t step = 0; step < *seq; ++step) {
      int64_t t = reverse ? *seq - 1 - step : step;
      Value hBefore = h, cBefore = c;
      Value xt = direction(ctx, ctx.make<SliceOp>(xw, ctx.i64s({t, 0, 0}),
                                                  ctx.i64s({t + 1, INT64_MAX, INT64_MAX}),
                                                  ctx.i64s({1, 1, 1})),
                           0); // [batch, G*h]
      SmallVector<Value> xg = ctx.makeMulti<SplitOp>(
          gates, xt, ctx.i64(1), ctx.i64s(SmallVector<int64_t>(gates, hidden)));
      Value hr = ctx.make<MatmulOp>(h, rt); // [batch, G*h]
      SmallVector<Value> hg = ctx.makeMulti<SplitOp>(
          gates, hr, ctx.i64(1), ctx.i64s(SmallVector<int64_t>(gates, hidden)));
      if (xg.size() != size_t(gates) || hg.size() != size_t(gates))
        return failure();
      auto withRb = [&](int64_t g, Value v) {
        return rbGates.empty() ? v : ctx.make<AddOp>(v, rbGates[g]);
      };
      if (kind == CellKind::RNN) {
        h = act(0, ctx.make<AddOp>(xg[0], withRb(0, hg[0])));
      } else if (kind == CellKind::GRU) {
        Value z = act(0, ctx.make<AddOp>(xg[0], withRb(0, hg[0])));
        Value rg = act(0, ctx.make<AddOp>(xg[1], withRb(1, hg[1])));
        Value candidate;
        if (linearBeforeReset) {
          candidate = ctx.make<AddOp>(xg[2], ctx.make<MulOp>(rg, withRb(2, hg[2])));
        } else {
          Value rh = ctx.make<MatmulOp>(ctx.make<MulOp>(rg, h),
                                        ctx.make<SliceOp>(rt, ctx.i64s({0, 2 * hidden}),
                                                          ctx.i64s({INT64_MAX, 3 * hidden}),
                                                          ctx.i64s({1, 1})));
          candidate = ctx.make<AddOp>(xg[2], withRb(2, rh));
        }
        Value hc = act(1, candidate);
        Value one = ctx.scalarLike(x, 1);
        h = ctx.make<AddOp>(ctx.make<MulOp>(ctx.make<SubOp>(one, z), hc),
                            ctx.make<MulOp>(z, h));
      } else {
        auto pre = [&](int64_t g) { return ctx.make<AddOp>(xg[g], withRb(g, hg[g])); };
        Value i = pre(0), o = pre(1), f = pre(2);
        if (!peep.empty()) {
          i = ctx.make<AddOp>(i, ctx.make<MulOp>(peep[0], c));
          f = ctx.make<AddOp>(f, ctx.make<MulOp>(peep[2], c));
        }
        i = act(0, i);
        f = act(0, f);
        Value g = act(1, pre(3));
        c = ctx.make<AddOp>(ctx.make<MulOp>(f, c), ctx.make<MulOp>(i, g));
        if (!peep.empty())
          o = ctx.make<AddOp>(o, ctx.make<MulOp>(peep[1], c));
        o = act(0, o);
        h = ctx.make<MulOp>(o, act(2, c));
      }
      Value y = h;
      if (lengths) { // past its length, an entry keeps its state and outputs 0
        Value active = compare(ctx, ComparePredicate::lt, i64Scalar(ctx, t), lengths);
        h = ctx.make<SelectOp>(active, h, hBefore);
        if (kind == CellKind::LSTM)
          c = ctx.make<SelectOp>(active, c, cBefore);
        y = ctx.make<SelectOp>(active, y, zeros);
      }
      outputs[t] = unsqueeze(ctx, y, {0, 1}); // [1, 1, batch, h]
    }
    ys.push_back(ctx.make<ConcatOp>(ValueRange(outputs), ctx.i64(0)));
    hs.push_back(unsqueeze(ctx, h, {0}));
    cs.push_back(unsqueeze(ctx, c, {0}));
  }
  if (ctx.failed())
    return failure();
  Value y = ys.size() == 1 ? ys[0] : ctx.make<ConcatOp>(ValueRange(ys), ctx.i64(1));
  Value yh = hs.size() == 1 ? hs[0] : ctx.make<ConcatOp>(ValueRange(hs), ctx.i64(0));
  Value yc = cs.size() == 1 ? cs[0] : ctx.make<ConcatOp>(ValueRange(cs), ctx.i64(0));
  if (batchFirst) {
    y = ctx.make<TransposeOp>(y, ctx.i64s({2, 0, 1, 3}));
    yh = ctx.make<TransposeOp>(yh, ctx.i64s({1, 0, 2}));
    yc = ctx.make<TransposeOp>(yc, ctx.i64s({1, 0, 2}));
  }
  ctx.bindOutput(0, y);
  ctx.bindOutput(1, yh);
  if (kind == CellKind::LSTM)
    ctx.bindOutput(2, yc);
  return ctx.finish();
}

LogicalResult importRNN(NodeContext &ctx) { return importRecurrent(ctx, CellKind::RNN); }
LogicalResult importGRU(NodeContext &ctx) { return importRecurrent(ctx, CellKind::GRU); }
LogicalResult importLSTM(NodeContext &ctx) { return importRecurrent(ctx, CellKind::LSTM); }

} // namespace

void registerRecurrentOps(OpRegistry &r) {
  r.add("RNN", 7, kAnyLaterOpset, importRNN);
  r.add("GRU", 7, kAnyLaterOpset, importGRU);
  r.add("LSTM", 7, kAnyLaterOpset, importLSTM);
}

} // namespace kiln::onnx_frontend
