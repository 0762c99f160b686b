//===- Attention.cpp - Attention and RotaryEmbedding importers ------------===//
//
// Opset 23's transformer building blocks, built from kiln's primitives the
// way ONNX's own function bodies define them (the `_expanded` test cases):
// scaled dot-product attention with grouped-query heads, a key/value cache,
// boolean or additive masks, causal and sliding-window masking, soft
// capping and the optional QK output; rotary position embeddings;
// ai.onnx.preview's FlexAttention, its score and probability modifiers
// imported inline; LinearAttention.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/OpRegistry.h"
#include "frontends/onnx/ops/Helpers.h"

#include "onnx/onnx.pb.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln;

namespace kiln::onnx_frontend {
namespace {

/// The element type ONNX's dtype number names for softmax_precision.
Type softmaxType(NodeContext &ctx, int64_t dtype) {
  switch (dtype) {
  case 1:
    return ctx.b.getF32Type();
  case 10:
    return ctx.b.getF16Type();
  case 11:
    return ctx.b.getF64Type();
  case 16:
    return ctx.b.getBF16Type();
  default:
    return {};
  }
}

/// [B, S, heads * size] -> [B, heads, S, size].
Value splitHeads(NodeContext &ctx, Value x, int64_t heads) {
  Value split = ctx.make<ReshapeOp>(x, ctx.i64s({0, 0, heads, -1}));
  return ctx.make<TransposeOp>(split, ctx.i64s({0, 2, 1, 3}));
}

/// Repeats each of `kvHeads` heads (dim 1) `repeat` times, in order.
Value repeatHeads(NodeContext &ctx, Value x, int64_t kvHeads, int64_t repeat) {
  if (repeat == 1)
    return x;
  SmallVector<int64_t> index;
  for (int64_t h = 0; h < kvHeads * repeat; ++h)
    index.push_back(h / repeat);
  return ctx.make<GatherOp>(x, ctx.indices(index), ctx.i64(1));
}

/// Where `cond`, -inf, else 0, in `like`'s element type (the additive form
/// of a mask).
Value maskBias(NodeContext &ctx, Value disallowed, Value like) {
  return ctx.make<SelectOp>(disallowed,
                            ctx.scalarLike(like, -std::numeric_limits<double>::infinity()),
                            ctx.scalarLike(like, 0.0));
}

LogicalResult importAttention(NodeContext &ctx) {
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  if (!q || !k || !v)
    return failure();
  int64_t rank = NodeContext::rankOf(q);
  if (rank != 3 && rank != 4)
    return ctx.invalid("Q must be 3-D or 4-D");
  if (NodeContext::rankOf(k) != rank || NodeContext::rankOf(v) != rank)
    return ctx.invalid("Q, K and V must have the same rank");
  if (rank == 3) {
    int64_t qHeads = ctx.intAttr("q_num_heads", 0), kvHeads = ctx.intAttr("kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0)
      return ctx.invalid("3-D Q, K and V need q_num_heads and kv_num_heads");
    q = splitHeads(ctx, q, qHeads);
    k = splitHeads(ctx, k, kvHeads);
    v = splitHeads(ctx, v, kvHeads);
  }
  // The cache: past and incoming keys and values, concatenated.
  Value pastKey = ctx.optionalInput(4), pastValue = ctx.optionalInput(5);
  if (!pastKey != !pastValue)
    return ctx.invalid("past_key and past_value must be given together");
  int64_t pastLength = 0;
  if (pastKey) {
    std::optional<int64_t> past = staticDim(ctx, pastKey, 2, "Attention's past length");
    if (!past)
      return failure();
    pastLength = *past;
    k = ctx.make<ConcatOp>(ValueRange{pastKey, k}, ctx.i64(2));
    v = ctx.make<ConcatOp>(ValueRange{pastValue, v}, ctx.i64(2));
  }
  ctx.bindOutput(1, k);
  ctx.bindOutput(2, v);
  if (!q || !k || !v)
    return failure();
  std::optional<int64_t> qHeads = staticDim(ctx, q, 1, "Attention's heads");
  std::optional<int64_t> kvHeads = staticDim(ctx, k, 1, "Attention's heads");
  std::optional<int64_t> headSize = staticDim(ctx, q, 3, "Attention's head size");
  std::optional<int64_t> queries = staticDim(ctx, q, 2, "Attention's query length");
  std::optional<int64_t> keys = staticDim(ctx, k, 2, "Attention's key length");
  if (!qHeads || !kvHeads || !headSize || !queries || !keys)
    return failure();
  if (*kvHeads <= 0 || *qHeads % *kvHeads != 0)
    return ctx.invalid("q_num_heads must be a multiple of kv_num_heads");
  // 4-D: the head counts come from the dims; attributes, when given, must
  // agree with them.
  for (auto [name, heads] : {std::pair<const char *, int64_t>{"q_num_heads", *qHeads},
                             std::pair<const char *, int64_t>{"kv_num_heads", *kvHeads}})
    if (rank == 4 && ctx.hasAttr(name) && ctx.intAttr(name, 0) != heads)
      return ctx.invalid(llvm::Twine(name) + " is " + llvm::Twine(ctx.intAttr(name, 0)) +
                         " but the 4-D inputs have " + llvm::Twine(heads) + " heads");
  // Grouped-query attention: each key/value head serves qHeads / kvHeads
  // query heads.
  int64_t repeat = *qHeads / *kvHeads;
  Value keysAll = repeatHeads(ctx, k, *kvHeads, repeat);
  Value valuesAll = repeatHeads(ctx, v, *kvHeads, repeat);

  // Q and K are each scaled by sqrt(scale) before the product.
  double scale = ctx.hasAttr("scale") ? ctx.floatAttr("scale", 1.0f)
                                      : 1.0 / std::sqrt(static_cast<double>(*headSize));
  Value rootScale = ctx.scalarLike(q, std::sqrt(scale));
  Value kT = ctx.make<TransposeOp>(keysAll, ctx.i64s({0, 1, 3, 2}));
  Value scores = numpyMatmul(ctx, ctx.make<MulOp>(q, rootScale), ctx.make<MulOp>(kT, rootScale));
  Value raw = scores;
  float softcap = ctx.floatAttr("softcap", 0.0f);
  if (softcap > 0) {
    Value cap = ctx.scalarLike(scores, softcap);
    scores = ctx.make<MulOp>(ctx.make<TanhOp>(ctx.make<DivOp>(scores, cap)), cap);
  }
  Value capped = scores;

  // The additive bias over [B?, H?, S, T]: the mask, padded with -inf to
  // the total length; the causal frontier, the sliding window and the
  // padding of an external cache, each -inf where a key is disallowed.
  int64_t s = *queries, t = *keys;
  Value bias;
  auto addBias = [&](Value term) { bias = bias ? ctx.make<AddOp>(bias, term) : term; };
  if (Value mask = ctx.optionalInput(3)) {
    if (NodeContext::elementTypeOf(mask).isInteger(1))
      mask = maskBias(ctx, ctx.make<NotOp>(mask), scores);
    int64_t maskRank = NodeContext::rankOf(mask);
    std::optional<int64_t> maskKeys = staticDim(ctx, mask, maskRank - 1, "Attention's mask");
    if (!maskKeys)
      return failure();
    if (*maskKeys > t)
      return ctx.invalid("attn_mask is longer than the total key length");
    if (*maskKeys < t) {
      SmallVector<int64_t> pads(2 * maskRank, 0);
      pads[2 * maskRank - 1] = t - *maskKeys;
      mask = ctx.make<PadOp>(mask, ctx.i64s(pads),
                             PadModeAttr::get(ctx.context(), PadMode::constant),
                             ctx.b.getF64FloatAttr(-std::numeric_limits<double>::infinity()));
    }
    addBias(mask);
  }
  // The query's absolute position: row + offset, where offset is the past
  // length, or per batch nonpad_kv_seqlen - S for an external cache.
  Value rows = iotaAlong(ctx, {s, 1}, 0), cols = iotaAlong(ctx, {1, t}, 1);
  Value nonpad = ctx.opset >= 24 ? ctx.optionalInput(6) : Value();
  Value position;
  if (nonpad) {
    if (pastKey)
      return ctx.invalid("nonpad_kv_seqlen cannot be used with past_key and past_value");
    nonpad = ctx.make<ReshapeOp>(ctx.cast(nonpad, ctx.b.getI64Type()),
                                 ctx.i64s({-1, 1, 1, 1}));
    position = ctx.make<AddOp>(ctx.make<SubOp>(rows, i64Scalar(ctx, s)), nonpad);
  } else {
    position = ctx.make<AddOp>(rows, i64Scalar(ctx, pastLength));
  }
  if (ctx.intAttr("is_causal", 0))
    addBias(maskBias(ctx, compare(ctx, ComparePredicate::lt, position, cols), scores));
  int64_t left = ctx.intAttr("left_window_size", -1), right = ctx.intAttr("right_window_size", -1);
  if (ctx.opset >= 25 && left >= 0)
    addBias(maskBias(ctx,
                     compare(ctx, ComparePredicate::gt, ctx.make<SubOp>(position, cols),
                             i64Scalar(ctx, left)),
                     scores));
  if (ctx.opset >= 25 && right >= 0)
    addBias(maskBias(ctx,
                     compare(ctx, ComparePredicate::gt, ctx.make<SubOp>(cols, position),
                             i64Scalar(ctx, right)),
                     scores));
  if (nonpad)
    addBias(maskBias(ctx, compare(ctx, ComparePredicate::ge, cols, nonpad), scores));
  if (bias) {
    bias = ctx.cast(bias, NodeContext::elementTypeOf(scores));
    scores = ctx.make<AddOp>(scores, bias);
  }
  Value biased = scores;

  Type element = NodeContext::elementTypeOf(scores);
  Type stash = element;
  if (ctx.hasAttr("softmax_precision")) {
    stash = softmaxType(ctx, ctx.intAttr("softmax_precision", 1));
    if (!stash)
      return ctx.invalid("softmax_precision must be 1, 10, 11 or 16");
  }
  Value probs = ctx.cast(ctx.make<SoftmaxOp>(ctx.cast(scores, stash), ctx.i64(3)), element);
  // A row whose keys are all disallowed gives zeros, not NaN.
  if (bias) {
    Value rowMax = ctx.make<ReduceMaxOp>(bias, ctx.i64s({NodeContext::rankOf(bias) - 1}),
                                         ctx.b.getBoolAttr(true));
    Value allMasked = compare(ctx, ComparePredicate::eq, rowMax,
                              ctx.scalarLike(bias, -std::numeric_limits<double>::infinity()));
    probs = ctx.make<SelectOp>(allMasked, ctx.scalarLike(probs, 0.0), probs);
  }
  switch (ctx.intAttr("qk_matmul_output_mode", 0)) {
  case 0:
    ctx.bindOutput(3, raw);
    break;
  case 1:
    ctx.bindOutput(3, capped);
    break;
  case 2:
    ctx.bindOutput(3, biased);
    break;
  case 3:
    ctx.bindOutput(3, probs);
    break;
  default:
    return ctx.invalid("qk_matmul_output_mode must be 0, 1, 2 or 3");
  }
  Value y = numpyMatmul(ctx, probs, valuesAll);
  if (rank == 3)
    y = ctx.make<ReshapeOp>(ctx.make<TransposeOp>(y, ctx.i64s({0, 2, 1, 3})),
                            ctx.i64s({0, 0, -1}));
  return ctx.setOutput(0, y);
}

LogicalResult importRotaryEmbedding(NodeContext &ctx) {
  Value x = ctx.input(0), cosCache = ctx.input(1), sinCache = ctx.input(2);
  if (!x || !cosCache || !sinCache)
    return failure();
  int64_t rank = NodeContext::rankOf(x);
  if (rank != 3 && rank != 4)
    return ctx.invalid("X must be 3-D or 4-D");
  // Work in [B, S, heads, size].
  Value input = x;
  if (rank == 4) {
    // [B, heads, S, size]: num_heads, when given, must agree.
    int64_t dimHeads = NodeContext::typeOf(x).getDimSize(1);
    if (ctx.hasAttr("num_heads") && !ShapedType::isDynamic(dimHeads) &&
        ctx.intAttr("num_heads", 0) != dimHeads)
      return ctx.invalid("num_heads is " + llvm::Twine(ctx.intAttr("num_heads", 0)) +
                         " but the 4-D X has " + llvm::Twine(dimHeads) + " heads");
    input = ctx.make<TransposeOp>(x, ctx.i64s({0, 2, 1, 3}));
  } else {
    int64_t heads = ctx.intAttr("num_heads", 0);
    if (heads <= 0)
      return ctx.invalid("a 3-D X needs num_heads");
    input = ctx.make<ReshapeOp>(x, ctx.i64s({0, 0, heads, -1}));
  }
  std::optional<int64_t> headSize = staticDim(ctx, input, 3, "RotaryEmbedding's head size");
  if (!headSize)
    return failure();
  int64_t dim = ctx.intAttr("rotary_embedding_dim", 0);
  if (dim == 0)
    dim = *headSize;
  if (dim < 0 || dim > *headSize || dim % 2 != 0)
    return ctx.invalid("rotary_embedding_dim must be even and at most the head size");
  int64_t half = dim / 2;
  // Caches [B, S, half], from [positions, half] by position_ids.
  if (Value ids = ctx.optionalInput(3)) {
    cosCache = ctx.make<GatherOp>(cosCache, ids, ctx.i64(0));
    sinCache = ctx.make<GatherOp>(sinCache, ids, ctx.i64(0));
  }
  if (!cosCache || !sinCache)
    return failure();
  std::optional<int64_t> cacheHalf =
      staticDim(ctx, cosCache, NodeContext::rankOf(cosCache) - 1, "RotaryEmbedding's cache");
  if (!cacheHalf)
    return failure();
  if (*cacheHalf != half)
    return ctx.invalid("the caches' last dim must be rotary_embedding_dim / 2");
  Value cosB = ctx.make<ReshapeOp>(cosCache, ctx.i64s({0, 0, 1, half}));
  Value sinB = ctx.make<ReshapeOp>(sinCache, ctx.i64s({0, 0, 1, half}));
  // Dim 3 from `start` to `end` by `step`; the other dims whole.
  auto slice = [&](Value v, int64_t start, int64_t end, int64_t step) {
    constexpr int64_t whole = std::numeric_limits<int64_t>::max();
    return ctx.make<SliceOp>(v, ctx.i64s({0, 0, 0, start}), ctx.i64s({whole, whole, whole, end}),
                             ctx.i64s({1, 1, 1, step}));
  };
  bool interleaved = ctx.intAttr("interleaved", 0) != 0;
  Value x1 = interleaved ? slice(input, 0, dim, 2) : slice(input, 0, half, 1);
  Value x2 = interleaved ? slice(input, 1, dim, 2) : slice(input, half, dim, 1);
  Value real = ctx.make<SubOp>(ctx.make<MulOp>(cosB, x1), ctx.make<MulOp>(sinB, x2));
  Value imag = ctx.make<AddOp>(ctx.make<MulOp>(sinB, x1), ctx.make<MulOp>(cosB, x2));
  Value rotated;
  if (interleaved) {
    // Pairs (real, imag) side by side: [..., half, 2] -> [..., dim].
    Value pairs = ctx.make<ConcatOp>(ValueRange{ctx.make<ReshapeOp>(real, ctx.i64s({0, 0, 0, half, 1})),
                                                ctx.make<ReshapeOp>(imag, ctx.i64s({0, 0, 0, half, 1}))},
                                     ctx.i64(4));
    rotated = ctx.make<ReshapeOp>(pairs, ctx.i64s({0, 0, 0, dim}));
  } else {
    rotated = ctx.make<ConcatOp>(ValueRange{real, imag}, ctx.i64(3));
  }
  if (dim < *headSize)
    rotated = ctx.make<ConcatOp>(ValueRange{rotated, slice(input, dim, *headSize, 1)}, ctx.i64(3));
  Value y = rank == 4 ? ctx.make<TransposeOp>(rotated, ctx.i64s({0, 2, 1, 3}))
                      : ctx.make<ReshapeOp>(rotated, ctx.i64s({0, 0, -1}));
  return ctx.setOutput(0, y);
}

/// Steps of LinearAttention unrolled at most (each is a few small ops; a
/// longer sequence needs a loop construct kiln does not have yet).
constexpr int64_t kMaxLinearAttentionSteps = 256;

/// LinearAttention (opset 27): the recurrent state S [B, Hkv, dk, dv] of
/// linear attention, updated per step t by the rule: "gated" decays S by
/// exp(decay_t), "delta" replaces v_t by beta_t * (v_t - k_t S), both for
/// "gated_delta"; then S += k_t^T v_t and o_t = scale * q_t S (query heads
/// grouped over the key/value heads). In float32, unrolled over the
/// sequence (static, at most kMaxLinearAttentionSteps).
LogicalResult importLinearAttention(NodeContext &ctx) {
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  Value past = ctx.optionalInput(3), decay = ctx.optionalInput(4), beta = ctx.optionalInput(5);
  if (!q || !k || !v)
    return failure();
  std::string rule = ctx.stringAttr("update_rule", "gated_delta");
  // chunk_size picks how the scan is blocked, not what it computes.
  ctx.attrsWithoutEffect({"chunk_size"});
  bool gated = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  if (!gated && !delta && rule != "linear")
    return ctx.invalid("update_rule '" + rule + "' is not linear, gated, delta or gated_delta");
  if (gated != static_cast<bool>(decay))
    return ctx.invalid("update_rule '" + rule + (gated ? "' needs" : "' forbids") +
                       " the decay input");
  if (delta != static_cast<bool>(beta))
    return ctx.invalid("update_rule '" + rule + (delta ? "' needs" : "' forbids") +
                       " the beta input");
  int64_t qHeads = ctx.intAttr("q_num_heads", 0), kvHeads = ctx.intAttr("kv_num_heads", 0);
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0)
    return ctx.invalid("q_num_heads must be a positive multiple of kv_num_heads");
  for (Value x : {q, k, v})
    if (NodeContext::rankOf(x) != 3)
      return ctx.invalid("query, key and value must have rank 3 ([B, T, heads * size])");
  std::optional<int64_t> steps = staticDim(ctx, q, 1, "LinearAttention's sequence");
  std::optional<int64_t> qWidth = staticDim(ctx, q, 2, "LinearAttention's query");
  std::optional<int64_t> vWidth = staticDim(ctx, v, 2, "LinearAttention's value");
  if (!steps || !qWidth || !vWidth)
    return failure();
  if (*steps < 1 || *steps > kMaxLinearAttentionSteps)
    return ctx.unsupported("LinearAttention over " + llvm::Twine(*steps) +
                           " steps (kiln unrolls 1 to " +
                           llvm::Twine(kMaxLinearAttentionSteps) + ")");
  int64_t dk = *qWidth / qHeads, dv = *vWidth / kvHeads, group = qHeads / kvHeads;
  double scale = ctx.floatAttr("scale", 0.0f);
  if (scale == 0.0)
    scale = 1.0 / std::sqrt(static_cast<double>(dk));

  Type element = NodeContext::elementTypeOf(q), f32 = ctx.b.getF32Type();
  // [B, T, heads * size] -> [B, heads, T, size], in float32.
  auto heads = [&](Value x, int64_t n) { return ctx.cast(splitHeads(ctx, x, n), f32); };
  Value q4 = heads(q, qHeads), k4 = heads(k, kvHeads), v4 = heads(v, kvHeads);
  // decay [B, T, Hkv] or [B, T, Hkv * dk], beta [B, T, Hkv] or [B, T, 1]:
  // [B, heads, T, 1 or dk].
  Value decay4 = decay ? heads(decay, kvHeads) : Value();
  Value beta4 = beta ? ctx.cast(ctx.make<TransposeOp>(ctx.make<ReshapeOp>(
                                                          beta, ctx.i64s({0, 0, -1, 1})),
                                                      ctx.i64s({0, 2, 1, 3})),
                                f32)
                     : Value();
  auto step = [&](Value x, int64_t t) {
    return ctx.make<SliceOp>(x, ctx.i64s({0, 0, t, 0}),
                             ctx.i64s({INT64_MAX, INT64_MAX, t + 1, INT64_MAX}),
                             ctx.i64s({1, 1, 1, 1}));
  };
  auto transposeLast = [&](Value x) { return ctx.make<TransposeOp>(x, ctx.i64s({0, 1, 3, 2})); };
  Value state = past ? ctx.cast(past, f32) : Value(); // absent: zeros
  SmallVector<Value> outputs;
  for (int64_t t = 0; t < *steps; ++t) {
    Value kt = step(k4, t), vt = step(v4, t); // [B, Hkv, 1, dk], [B, Hkv, 1, dv]
    if (gated && state)
      state = ctx.make<MulOp>(state, transposeLast(ctx.make<ExpOp>(step(decay4, t))));
    if (delta) {
      Value retrieved = state ? numpyMatmul(ctx, kt, state) : Value();
      vt = ctx.make<MulOp>(step(beta4, t), retrieved ? ctx.make<SubOp>(vt, retrieved) : vt);
    }
    Value written = ctx.make<MulOp>(transposeLast(kt), vt); // [B, Hkv, dk, dv]
    state = state ? ctx.make<AddOp>(state, written) : written;
    // Query heads h read key/value head h / group: [B, Hkv, group, dk] S.
    Value qt = ctx.make<ReshapeOp>(step(q4, t), ctx.i64s({0, kvHeads, group, dk}));
    Value read = numpyMatmul(ctx, qt, state); // [B, Hkv, group, dv]
    outputs.push_back(ctx.make<ReshapeOp>(ctx.make<MulOp>(read, ctx.scalarLike(read, scale)),
                                          ctx.i64s({0, qHeads, 1, dv})));
  }
  Value all = outputs.size() == 1 ? outputs.front()
                                  : ctx.make<ConcatOp>(ValueRange(outputs), ctx.i64(2));
  Value y = ctx.make<ReshapeOp>(ctx.make<TransposeOp>(all, ctx.i64s({0, 2, 1, 3})),
                                ctx.i64s({0, 0, qHeads * dv}));
  ctx.bindOutput(1, ctx.cast(state, past ? NodeContext::elementTypeOf(past) : element));
  return ctx.setOutput(0, ctx.cast(y, element));
}

/// FlexAttention (ai.onnx.preview 1): softmax(score_mod(Q K^T * scale))
/// V with prob_mod applied to the probabilities, as ONNX's reference: Q
/// and K each scaled by sqrt(scale) (default 1 / sqrt(E)) in their type,
/// the scores moved to the softmax precision (float32 for 16-bit inputs),
/// key/value heads repeated for grouped queries. The modifiers are
/// subgraphs over the whole [B, H, L, S] tensor, imported inline.
LogicalResult importFlexAttention(NodeContext &ctx) {
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  if (!q || !k || !v)
    return failure();
  RankedTensorType qt = NodeContext::typeOf(q), kt = NodeContext::typeOf(k),
                   vt = NodeContext::typeOf(v);
  if (qt.getRank() != 4 || kt.getRank() != 4 || vt.getRank() != 4)
    return ctx.invalid("Q, K and V must be [batch, heads, sequence, size]");
  int64_t qHeads = qt.getDimSize(1), kvHeads = kt.getDimSize(1), size = qt.getDimSize(3);
  if (ShapedType::isDynamic(qHeads) || ShapedType::isDynamic(kvHeads) ||
      ShapedType::isDynamic(size))
    return ctx.unsupported("heads or head size decided at run time");
  if (vt.getDimSize(1) != kvHeads)
    return ctx.invalid("K and V must have the same number of heads");
  if (kt.getDimSize(3) != size)
    return ctx.invalid("Q and K must have the same head size");
  if (qHeads % kvHeads != 0)
    return ctx.invalid("the query heads must be a multiple of the key/value heads");
  Type element = qt.getElementType();
  double scale = ctx.hasAttr("scale") ? ctx.floatAttr("scale", 1.0) : 1.0 / std::sqrt(double(size));
  Value root = ctx.scalarLike(q, std::sqrt(static_cast<float>(scale)));
  int64_t repeat = qHeads / kvHeads;
  Value keys = repeatHeads(ctx, ctx.make<MulOp>(k, root), kvHeads, repeat);
  Value values = repeatHeads(ctx, v, kvHeads, repeat);
  Value scores = ctx.make<MatmulOp>(ctx.make<MulOp>(q, root),
                                    ctx.make<TransposeOp>(keys, ctx.i64s({0, 1, 3, 2})));
  Type compute = element.getIntOrFloatBitWidth() < 32 ? ctx.b.getF32Type() : element;
  if (ctx.hasAttr("softmax_precision")) {
    compute = softmaxType(ctx, ctx.intAttr("softmax_precision", 1));
    if (!compute)
      return ctx.invalid("softmax_precision must be 1, 10, 11 or 16");
  }
  scores = ctx.cast(scores, compute);
  // A modifier: one input, one output of the same type.
  auto modify = [&](llvm::StringRef name, Value x) -> Value {
    const onnx::GraphProto *body = ctx.graphAttr(name);
    if (!body || !x)
      return x;
    SmallVector<Value> outputs;
    if (failed(ctx.importSubgraph(*body, {x}, outputs)))
      return {};
    if (outputs.size() != 1) {
      ctx.invalid(name + " must have one output");
      return {};
    }
    if (outputs[0].getType() != x.getType()) {
      ctx.invalid(name + " must give back its input's type");
      return {};
    }
    return outputs[0];
  };
  scores = modify("score_mod", scores);
  Value probs = modify("prob_mod", ctx.make<SoftmaxOp>(scores, ctx.i64(3)));
  Value y = ctx.make<MatmulOp>(probs, ctx.cast(values, compute));
  return ctx.setOutput(0, ctx.cast(y, vt.getElementType()));
}

} // namespace

void registerAttentionOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Attention", 23, any, importAttention);
  r.add("RotaryEmbedding", 23, any, importRotaryEmbedding);
  r.add("LinearAttention", 27, any, importLinearAttention);
  r.add("FlexAttention", 1, any, importFlexAttention, "ai.onnx.preview");
}

} // namespace kiln::onnx_frontend
