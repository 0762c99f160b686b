//===- ControlFlow.cpp - Scan (unrolled) and If ---------------------------===//
//
// Kiln compiles straight-line graphs: a control-flow op whose iteration
// count is known when compiling is unrolled, its body imported once per
// iteration (NodeContext::importSubgraph) with the iteration's values
// bound to the body's inputs. Scan's count is the length of its scanned
// axis, static in the models that use it (linear attention's reference
// graphs, scanned sums; opset 8's form also unrolls its batch); a Loop's
// when its trip count and conditions are constants. If takes the branch a known condition names, or
// computes both and selects.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

/// Iterations unrolled at most: each imports the whole body.
constexpr int64_t kMaxUnrolledIterations = 256;

/// An axis attribute entry for `count` tensors, made non-negative against
/// each one's rank (default 0); nullopt when one is out of range.
std::optional<SmallVector<int64_t>> axesFor(NodeContext &ctx, llvm::StringRef name,
                                            ArrayRef<int64_t> ranks) {
  SmallVector<int64_t> given = ctx.intsAttr(name);
  if (!given.empty() && given.size() != ranks.size()) {
    ctx.invalid(name + " has " + llvm::Twine(given.size()) + " entries for " +
                llvm::Twine(ranks.size()) + " tensors");
    return std::nullopt;
  }
  SmallVector<int64_t> axes;
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::optional<int64_t> axis =
        ctx.normalizeAxis(given.empty() ? 0 : given[i], ranks[i], name);
    if (!axis)
      return std::nullopt;
    axes.push_back(*axis);
  }
  return axes;
}

/// What an unrolled Scan gives: the final state variables, and each scan
/// output's values, one per iteration.
struct ScanResult {
  SmallVector<Value> states;
  SmallVector<SmallVector<Value>> perIteration;
};

/// Runs Scan's body over the inputs `scanned` along `axes` (reversed where
/// `reversed`), their shared length static, carrying `states`.
std::optional<ScanResult> unrollScan(NodeContext &ctx, const onnx::GraphProto &body,
                                     SmallVector<Value> states, ArrayRef<Value> scanned,
                                     ArrayRef<int64_t> axes, ArrayRef<bool> reversed) {
  int64_t numStates = static_cast<int64_t>(states.size());
  int64_t numScanOutputs = body.output_size() - numStates;
  if (numScanOutputs < 0) {
    ctx.invalid("the body's " + llvm::Twine(body.output_size()) +
                " outputs do not cover its state variables");
    return std::nullopt;
  }
  // The scanned length: static and the same for every scanned input.
  int64_t length = -1;
  for (auto [i, v] : llvm::enumerate(scanned)) {
    std::optional<int64_t> n = staticDim(ctx, v, axes[i], "Scan's scanned axis");
    if (!n)
      return std::nullopt;
    if (length >= 0 && *n != length) {
      ctx.invalid("scanned inputs have lengths " + llvm::Twine(length) + " and " +
                  llvm::Twine(*n));
      return std::nullopt;
    }
    length = *n;
  }
  if (length > kMaxUnrolledIterations) {
    ctx.unsupported("Scan over " + llvm::Twine(length) + " iterations (kiln unrolls at most " +
                    llvm::Twine(kMaxUnrolledIterations) + ")");
    return std::nullopt;
  }
  ScanResult result;
  result.perIteration.resize(numScanOutputs);
  for (int64_t t = 0; t < length; ++t) {
    SmallVector<Value> bodyInputs(states);
    for (auto [i, v] : llvm::enumerate(scanned)) {
      int64_t at = reversed[i] ? length - 1 - t : t;
      int64_t rank = NodeContext::rankOf(v), axis = axes[i];
      SmallVector<int64_t> starts(rank, 0), ends(rank, INT64_MAX), steps(rank, 1);
      starts[axis] = at;
      ends[axis] = at + 1;
      Value slice = ctx.make<SliceOp>(v, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps));
      bodyInputs.push_back(squeeze(ctx, slice, {axis}));
    }
    SmallVector<Value> bodyOutputs;
    if (failed(ctx.importSubgraph(body, bodyInputs, bodyOutputs)))
      return std::nullopt;
    states.assign(bodyOutputs.begin(), bodyOutputs.begin() + numStates);
    for (int64_t k = 0; k < numScanOutputs; ++k)
      result.perIteration[k].push_back(bodyOutputs[numStates + k]);
  }
  if (numScanOutputs > 0 && length == 0) {
    ctx.unsupported("Scan over an empty sequence with scan outputs");
    return std::nullopt;
  }
  result.states = std::move(states);
  return result;
}

/// `values` stacked along a new dim `axis` (reversed first if `reverse`).
Value stack(NodeContext &ctx, ArrayRef<Value> values, int64_t axis, bool reverse = false) {
  SmallVector<Value> pieces;
  for (Value v : values)
    pieces.push_back(unsqueeze(ctx, v, {axis}));
  if (reverse)
    std::reverse(pieces.begin(), pieces.end());
  return pieces.size() == 1 ? pieces.front()
                            : ctx.make<ConcatOp>(ValueRange(pieces), ctx.i64(axis));
}

/// Scan's body and its number of state variables among `numInputs`
/// inputs (opset 8's sequence_lens not counted); nullopt (recorded) when
/// num_scan_inputs or the body does not fit.
std::optional<std::pair<const onnx::GraphProto *, int64_t>> scanSignature(NodeContext &ctx,
                                                                          int64_t numInputs) {
  const onnx::GraphProto *body = ctx.graphAttr("body");
  if (!body) {
    ctx.invalid("needs a body graph");
    return std::nullopt;
  }
  int64_t numScanned = ctx.intAttr("num_scan_inputs", 0);
  if (numScanned < 1 || numScanned > numInputs) {
    ctx.invalid("num_scan_inputs " + llvm::Twine(numScanned) + " is not in [1, " +
                llvm::Twine(numInputs) + "]");
    return std::nullopt;
  }
  if (static_cast<int64_t>(ctx.numOutputs()) > body->output_size()) {
    ctx.invalid("the node has more outputs than its body");
    return std::nullopt;
  }
  return std::make_pair(body, numInputs - numScanned);
}

/// Scan (opset 9+): N state variables carried through the body, M inputs
/// scanned along an axis (forward or reversed), K outputs stacked along an
/// axis (appended or prepended). Unrolled over the scanned length.
LogicalResult importScan(NodeContext &ctx) {
  int64_t numInputs = static_cast<int64_t>(ctx.numInputs());
  auto signature = scanSignature(ctx, numInputs);
  if (!signature)
    return failure();
  auto [body, numStates] = *signature;

  SmallVector<Value> states, scanned;
  SmallVector<int64_t> scannedRanks;
  for (int64_t i = 0; i < numInputs; ++i) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    if (i < numStates) {
      states.push_back(v);
    } else {
      scanned.push_back(v);
      scannedRanks.push_back(NodeContext::rankOf(v));
    }
  }
  std::optional<SmallVector<int64_t>> inAxes = axesFor(ctx, "scan_input_axes", scannedRanks);
  if (!inAxes)
    return failure();
  SmallVector<int64_t> inDirections = ctx.intsAttr("scan_input_directions");
  SmallVector<int64_t> outDirections = ctx.intsAttr("scan_output_directions");
  auto reversed = [](ArrayRef<int64_t> directions, size_t i) {
    return i < directions.size() && directions[i] == 1;
  };
  SmallVector<bool> inReversed;
  for (size_t i = 0; i < scanned.size(); ++i)
    inReversed.push_back(reversed(inDirections, i));
  std::optional<ScanResult> result = unrollScan(ctx, *body, states, scanned, *inAxes, inReversed);
  if (!result)
    return failure();
  for (int64_t i = 0; i < numStates; ++i)
    ctx.bindOutput(i, result->states[i]);
  size_t numScanOutputs = result->perIteration.size();
  if (numScanOutputs == 0) {
    if (!ctx.intsAttr("scan_output_axes").empty())
      return ctx.invalid("scan_output_axes has entries but the body has no scan outputs");
    return ctx.finish();
  }
  SmallVector<int64_t> outRanks;
  for (const auto &values : result->perIteration)
    outRanks.push_back(NodeContext::rankOf(values.front()) + 1);
  std::optional<SmallVector<int64_t>> outAxes = axesFor(ctx, "scan_output_axes", outRanks);
  if (!outAxes)
    return failure();
  for (size_t k = 0; k < numScanOutputs; ++k)
    ctx.bindOutput(numStates + k, stack(ctx, result->perIteration[k], (*outAxes)[k],
                                        reversed(outDirections, k)));
  return ctx.finish();
}

/// Scan (opset 8): every input and output has a batch dim first; scanned
/// inputs scan their dim 1 (forward or reversed by `directions`) and scan
/// outputs stack along dim 1. Unrolled over the batch, then the sequence.
/// The per-batch sequence_lens must be absent or the full length.
LogicalResult importScan8(NodeContext &ctx) {
  int64_t numInputs = static_cast<int64_t>(ctx.numInputs()) - 1;
  auto signature = scanSignature(ctx, numInputs);
  if (!signature)
    return failure();
  auto [body, numStates] = *signature;
  int64_t numScanned = numInputs - numStates;
  SmallVector<Value> inputs;
  for (int64_t i = 0; i < numInputs; ++i)
    inputs.push_back(ctx.input(i + 1));
  if (ctx.failed())
    return failure();
  std::optional<int64_t> batch = staticDim(ctx, inputs.front(), 0, "Scan's batch dim");
  if (!batch)
    return failure();
  if (*batch > kMaxUnrolledIterations)
    return ctx.unsupported("Scan over a batch of " + llvm::Twine(*batch) +
                           " (kiln unrolls at most " + llvm::Twine(kMaxUnrolledIterations) + ")");
  for (Value v : inputs)
    if (NodeContext::typeOf(v).getRank() < 1 || NodeContext::typeOf(v).getDimSize(0) != *batch)
      return ctx.invalid("every input must have the batch dim " + llvm::Twine(*batch) + " first");
  if (ctx.hasInput(0)) {
    std::optional<int64_t> length = staticDim(ctx, inputs[numStates], 1, "Scan's scanned axis");
    std::optional<SmallVector<int64_t>> lens = ctx.intsInput(0, "sequence_lens");
    if (!length || !lens)
      return failure();
    for (int64_t n : *lens)
      if (n != *length)
        return ctx.unsupported("sequence_lens " + llvm::Twine(n) + " shorter than the scanned " +
                               llvm::Twine(*length));
  }
  SmallVector<int64_t> directions = ctx.intsAttr("directions");
  SmallVector<bool> inReversed;
  for (int64_t i = 0; i < numScanned; ++i)
    inReversed.push_back(i < static_cast<int64_t>(directions.size()) && directions[i] == 1);
  SmallVector<int64_t> axes(numScanned, 0);
  SmallVector<SmallVector<Value>> perBatch(body->output_size());
  for (int64_t n = 0; n < *batch; ++n) {
    SmallVector<Value> rows;
    for (Value v : inputs) {
      int64_t rank = NodeContext::rankOf(v);
      SmallVector<int64_t> starts(rank, 0), ends(rank, INT64_MAX), steps(rank, 1);
      starts[0] = n;
      ends[0] = n + 1;
      rows.push_back(squeeze(
          ctx, ctx.make<SliceOp>(v, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps)), {0}));
    }
    SmallVector<Value> states(rows.begin(), rows.begin() + numStates);
    SmallVector<Value> scanned(rows.begin() + numStates, rows.end());
    std::optional<ScanResult> result = unrollScan(ctx, *body, states, scanned, axes, inReversed);
    if (!result)
      return failure();
    for (int64_t i = 0; i < numStates; ++i)
      perBatch[i].push_back(result->states[i]);
    for (auto [k, values] : llvm::enumerate(result->perIteration))
      perBatch[numStates + k].push_back(stack(ctx, values, 0));
  }
  for (size_t k = 0; k < ctx.numOutputs(); ++k)
    ctx.bindOutput(k, stack(ctx, perBatch[k], 0));
  return ctx.finish();
}

/// Loop with a trip count and conditions known when compiling: unrolled,
/// the body imported once per iteration (iteration number, condition and
/// loop-carried values bound), each condition it gives back checked to be
/// a constant; scan outputs stacked along a new first dim. A trip count or
/// condition read at run time needs a loop construct Kiln does not have.
LogicalResult importLoop(NodeContext &ctx) {
  const onnx::GraphProto *body = ctx.graphAttr("body");
  if (!body)
    return ctx.invalid("needs a body graph");
  int64_t numCarried = static_cast<int64_t>(ctx.numInputs()) - 2;
  if (numCarried < 0)
    return ctx.invalid("needs the trip count and condition inputs (either may be empty)");
  if (body->input_size() != numCarried + 2 || body->output_size() < numCarried + 1)
    return ctx.invalid("the body's inputs and outputs do not match the loop-carried values");
  std::optional<int64_t> trips;
  if (ctx.hasInput(0)) {
    if (!ctx.isKnownInput(0))
      return ctx.unsupported("a trip count read at run time (Kiln unrolls loops whose trip "
                             "count is known when compiling)");
    std::optional<SmallVector<int64_t>> m = ctx.intsInput(0, "M");
    if (!m || m->size() != 1)
      return m ? ctx.invalid("M must be a scalar") : failure();
    trips = std::max<int64_t>(0, m->front());
  }
  auto known = [&](Value cond) -> std::optional<bool> {
    DenseElementsAttr c = NodeContext::constantOf(cond);
    if (!c || c.getNumElements() != 1)
      return std::nullopt;
    return *c.getValues<bool>().begin();
  };
  Value cond = ctx.optionalInput(1);
  bool running = true;
  if (ctx.hasInput(1)) {
    std::optional<bool> c = cond ? known(cond) : std::nullopt;
    if (!c)
      return ctx.unsupported("a loop condition read at run time (Kiln unrolls loops whose "
                             "conditions are known when compiling)");
    running = *c;
  }
  Value boolTrue = ctx.constant(DenseElementsAttr::get(
      RankedTensorType::get({}, ctx.b.getI1Type()), true));
  SmallVector<Value> carried;
  for (int64_t i = 0; i < numCarried; ++i)
    carried.push_back(ctx.input(i + 2));
  if (ctx.failed())
    return failure();
  int64_t numScan = body->output_size() - 1 - numCarried;
  SmallVector<SmallVector<Value>> scans(numScan);
  int64_t limit = trips ? *trips : kMaxUnrolledIterations + 1;
  int64_t done = 0;
  for (; running && done < limit; ++done) {
    if (done >= kMaxUnrolledIterations)
      return ctx.unsupported("a Loop of more than " + llvm::Twine(kMaxUnrolledIterations) +
                             " iterations (kiln unrolls at most that many)");
    SmallVector<Value> inputs = {i64Scalar(ctx, done), cond ? cond : boolTrue};
    inputs.append(carried);
    SmallVector<Value> outputs;
    if (failed(ctx.importSubgraph(*body, inputs, outputs)))
      return failure();
    std::optional<bool> next = known(outputs[0]);
    if (!next)
      return ctx.unsupported("the body's condition is computed at run time (Kiln unrolls "
                             "loops whose conditions are known when compiling)");
    running = *next;
    cond = outputs[0];
    carried.assign(outputs.begin() + 1, outputs.begin() + 1 + numCarried);
    for (int64_t k = 0; k < numScan; ++k)
      scans[k].push_back(outputs[1 + numCarried + k]);
  }
  for (int64_t i = 0; i < numCarried; ++i)
    ctx.bindOutput(i, carried[i]);
  for (int64_t k = 0; k < numScan; ++k) {
    if (!ctx.hasOutput(numCarried + k))
      continue;
    if (scans[k].empty())
      return ctx.unsupported("a Loop that runs no iteration with scan outputs");
    ctx.bindOutput(numCarried + k, stack(ctx, scans[k], 0));
  }
  return ctx.finish();
}

/// If: a condition known when compiling imports its branch alone; one
/// known only at run time imports both branches and selects each output
/// elementwise (both are computed), which needs outputs of the same type
/// in both branches.
LogicalResult importIf(NodeContext &ctx) {
  const onnx::GraphProto *thenBody = ctx.graphAttr("then_branch");
  const onnx::GraphProto *elseBody = ctx.graphAttr("else_branch");
  if (!thenBody || !elseBody)
    return ctx.invalid("needs then_branch and else_branch graphs");
  Value cond = ctx.input(0);
  if (!cond)
    return failure();
  RankedTensorType condType = NodeContext::typeOf(cond);
  if (!condType.getElementType().isInteger(1) || !condType.hasStaticShape() ||
      condType.getNumElements() != 1)
    return ctx.invalid("the condition must be one bool");
  if (DenseElementsAttr known = NodeContext::constantOf(cond)) {
    bool taken = *known.getValues<bool>().begin();
    SmallVector<Value> outputs;
    if (failed(ctx.importSubgraph(taken ? *thenBody : *elseBody, {}, outputs)))
      return failure();
    for (auto [i, v] : llvm::enumerate(outputs))
      ctx.bindOutput(i, v);
    return ctx.finish();
  }
  SmallVector<Value> thenOutputs, elseOutputs;
  if (failed(ctx.importSubgraph(*thenBody, {}, thenOutputs)) ||
      failed(ctx.importSubgraph(*elseBody, {}, elseOutputs)))
    return failure();
  if (thenOutputs.size() != elseOutputs.size())
    return ctx.invalid("the branches have " + llvm::Twine(thenOutputs.size()) + " and " +
                       llvm::Twine(elseOutputs.size()) + " outputs");
  Value scalar = ctx.make<ReshapeOp>(cond, ctx.i64s({}));
  for (auto [i, pair] : llvm::enumerate(llvm::zip(thenOutputs, elseOutputs))) {
    auto [a, b] = pair;
    RankedTensorType ta = NodeContext::typeOf(a), tb = NodeContext::typeOf(b);
    if (ta != tb || !ta.hasStaticShape()) {
      std::string types;
      llvm::raw_string_ostream os(types);
      os << ta << " in then_branch and " << tb << " in else_branch";
      return ctx.unsupported("output " + llvm::Twine(i) + " is " + types +
                             "; with a condition known only at run time both branches "
                             "must give one static type");
    }
    ctx.bindOutput(i, ctx.make<SelectOp>(scalar, a, b));
  }
  return ctx.finish();
}

} // namespace

void registerControlFlowOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Scan", 8, 8, importScan8);
  r.add("Scan", 9, any, importScan);
  r.add("If", 1, any, importIf);
  r.add("Loop", 1, any, importLoop);
}

} // namespace kiln::onnx_frontend
