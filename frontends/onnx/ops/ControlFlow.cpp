//===- ControlFlow.cpp - Scan (unrolled) and If ---------------------------===//
//
// Kiln compiles straight-line graphs: a control-flow op whose iteration
// count is known when compiling is unrolled, its body imported once per
// iteration (NodeContext::importSubgraph) with the iteration's values
// bound to the body's inputs. Scan's count is the length of its scanned
// axis, static in the models that use it (linear attention's reference
// graphs, scanned sums). If takes the branch a known condition names, or
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

/// Scan (opset 9+): N state variables carried through the body, M inputs
/// scanned along an axis (forward or reversed), K outputs stacked along an
/// axis (appended or prepended). Unrolled over the scanned length.
LogicalResult importScan(NodeContext &ctx) {
  ctx.rejectUnknownAttrs({"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions",
                          "scan_output_axes", "scan_output_directions"});
  const onnx::GraphProto *body = ctx.graphAttr("body");
  if (!body)
    return ctx.invalid("needs a body graph");
  int64_t numScanned = ctx.intAttr("num_scan_inputs", 0);
  int64_t numInputs = static_cast<int64_t>(ctx.numInputs());
  if (numScanned < 1 || numScanned > numInputs)
    return ctx.invalid("num_scan_inputs " + llvm::Twine(numScanned) + " is not in [1, " +
                       llvm::Twine(numInputs) + "]");
  int64_t numStates = numInputs - numScanned;
  int64_t numScanOutputs = body->output_size() - numStates;
  if (numScanOutputs < 0 || static_cast<int64_t>(ctx.numOutputs()) > body->output_size())
    return ctx.invalid("the body's " + llvm::Twine(body->output_size()) +
                       " outputs do not cover its state variables and the node's outputs");

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

  // The scanned length: static and the same for every scanned input.
  int64_t length = -1;
  for (auto [i, v] : llvm::enumerate(scanned)) {
    std::optional<int64_t> n = staticDim(ctx, v, (*inAxes)[i], "Scan's scanned axis");
    if (!n)
      return failure();
    if (length >= 0 && *n != length)
      return ctx.invalid("scanned inputs have lengths " + llvm::Twine(length) + " and " +
                         llvm::Twine(*n));
    length = *n;
  }
  if (length > kMaxUnrolledIterations)
    return ctx.unsupported("Scan over " + llvm::Twine(length) + " iterations (kiln unrolls at most " +
                           llvm::Twine(kMaxUnrolledIterations) + ")");

  SmallVector<SmallVector<Value>> perIteration(numScanOutputs);
  for (int64_t t = 0; t < length; ++t) {
    SmallVector<Value> bodyInputs(states);
    for (auto [i, v] : llvm::enumerate(scanned)) {
      int64_t at = reversed(inDirections, i) ? length - 1 - t : t;
      int64_t rank = scannedRanks[i], axis = (*inAxes)[i];
      SmallVector<int64_t> starts(rank, 0), ends(rank, INT64_MAX), steps(rank, 1);
      starts[axis] = at;
      ends[axis] = at + 1;
      Value slice = ctx.make<SliceOp>(v, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps));
      bodyInputs.push_back(squeeze(ctx, slice, {axis}));
    }
    SmallVector<Value> bodyOutputs;
    if (failed(ctx.importSubgraph(*body, bodyInputs, bodyOutputs)))
      return failure();
    states.assign(bodyOutputs.begin(), bodyOutputs.begin() + numStates);
    for (int64_t k = 0; k < numScanOutputs; ++k)
      perIteration[k].push_back(bodyOutputs[numStates + k]);
  }
  for (int64_t i = 0; i < numStates; ++i)
    ctx.bindOutput(i, states[i]);
  if (numScanOutputs == 0)
    return ctx.finish();
  if (length == 0)
    return ctx.unsupported("Scan over an empty sequence with scan outputs");
  SmallVector<int64_t> outRanks;
  for (int64_t k = 0; k < numScanOutputs; ++k)
    outRanks.push_back(NodeContext::rankOf(perIteration[k].front()) + 1);
  std::optional<SmallVector<int64_t>> outAxes = axesFor(ctx, "scan_output_axes", outRanks);
  if (!outAxes)
    return failure();
  for (int64_t k = 0; k < numScanOutputs; ++k) {
    SmallVector<Value> pieces;
    for (Value v : perIteration[k])
      pieces.push_back(unsqueeze(ctx, v, {(*outAxes)[k]}));
    if (reversed(outDirections, k))
      std::reverse(pieces.begin(), pieces.end());
    Value stacked = pieces.size() == 1 ? pieces.front()
                                       : ctx.make<ConcatOp>(ValueRange(pieces), ctx.i64((*outAxes)[k]));
    ctx.bindOutput(numStates + k, stacked);
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
  r.add("Scan", 9, any, importScan);
  r.add("If", 1, any, importIf);
}

} // namespace kiln::onnx_frontend
