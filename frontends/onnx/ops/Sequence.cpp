//===- Sequence.cpp - ONNX sequences and optionals -------------------------===//
//
// An ONNX sequence is a list of tensors. Kiln holds one in the importer as
// the list of its tensors' values (NodeContext's Sequence): the sequence
// ops build and take apart lists whose length and positions are known when
// compiling, and what reaches the compiled code is plain tensor ops
// (ConcatFromSequence a concat, SequenceAt one of the tensors). A sequence
// as a graph input or output, or a length decided at run time, is not
// supported: the compiled function takes and returns tensors.
// An optional is its value (a tensor or a sequence) or, without one, a
// name the importer marks empty: OptionalHasElement is a constant.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"
#include "frontends/onnx/TensorData.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

/// Positions a sequence op takes at most from a body unrolled per element.
constexpr int64_t kMaxMappedElements = 256;

/// The position input `i` (a scalar) made non-negative for a sequence of
/// `length`: in [-length, length] when `inclusiveEnd` (an insertion), else
/// [-length, length). nullopt (recorded) when it is read at run time or out
/// of range.
std::optional<int64_t> positionInput(NodeContext &ctx, size_t i, int64_t length,
                                     bool inclusiveEnd) {
  std::optional<SmallVector<int64_t>> given = ctx.intsInput(i, "position");
  if (!given)
    return std::nullopt;
  if (given->size() != 1) {
    ctx.invalid("position must be a scalar");
    return std::nullopt;
  }
  int64_t p = given->front(), limit = inclusiveEnd ? length : length - 1;
  if (p < -length || p > limit) {
    ctx.invalid("position " + llvm::Twine(p) + " is out of range for a sequence of " +
                llvm::Twine(length) + " tensors");
    return std::nullopt;
  }
  return p < 0 ? p + length : p;
}

LogicalResult importSequenceEmpty(NodeContext &ctx) {
  Type element = elementTypeOf(ctx.context(), static_cast<int>(ctx.intAttr(
                                                  "dtype", onnx::TensorProto::FLOAT)));
  if (!element)
    return ctx.unsupported("dtype " + llvm::Twine(ctx.intAttr("dtype", 0)) +
                           " is not a data type Kiln supports");
  return ctx.setSequenceOutput(0, Sequence{{}, element});
}

LogicalResult importSequenceConstruct(NodeContext &ctx) {
  if (ctx.numInputs() == 0)
    return ctx.invalid("needs at least one input");
  Sequence seq;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    seq.elements.push_back(ctx.input(i));
  if (ctx.failed())
    return failure();
  seq.elementType = NodeContext::elementTypeOf(seq.elements.front());
  return ctx.setSequenceOutput(0, std::move(seq));
}

LogicalResult importSequenceInsert(NodeContext &ctx) {
  std::optional<Sequence> seq = ctx.sequenceInput(0);
  Value tensor = ctx.input(1);
  if (!seq || !tensor)
    return failure();
  int64_t length = static_cast<int64_t>(seq->elements.size());
  std::optional<int64_t> at = length;
  if (ctx.hasInput(2))
    at = positionInput(ctx, 2, length, /*inclusiveEnd=*/true);
  if (!at)
    return failure();
  if (NodeContext::elementTypeOf(tensor) != seq->elementType)
    return ctx.invalid("the tensor's element type differs from the sequence's");
  seq->elements.insert(seq->elements.begin() + *at, tensor);
  return ctx.setSequenceOutput(0, std::move(*seq));
}

LogicalResult importSequenceErase(NodeContext &ctx) {
  std::optional<Sequence> seq = ctx.sequenceInput(0);
  if (!seq)
    return failure();
  int64_t length = static_cast<int64_t>(seq->elements.size());
  if (length == 0)
    return ctx.invalid("erases from an empty sequence");
  std::optional<int64_t> at = length - 1;
  if (ctx.hasInput(1))
    at = positionInput(ctx, 1, length, /*inclusiveEnd=*/false);
  if (!at)
    return failure();
  seq->elements.erase(seq->elements.begin() + *at);
  return ctx.setSequenceOutput(0, std::move(*seq));
}

/// SequenceAt: a known position picks the tensor; a position read at run
/// time gathers from the stacked tensors, which needs one static type.
LogicalResult importSequenceAt(NodeContext &ctx) {
  std::optional<Sequence> seq = ctx.sequenceInput(0);
  if (!seq)
    return failure();
  int64_t length = static_cast<int64_t>(seq->elements.size());
  if (length == 0)
    return ctx.invalid("reads from an empty sequence");
  if (ctx.isKnownInput(1)) {
    std::optional<int64_t> at = positionInput(ctx, 1, length, /*inclusiveEnd=*/false);
    if (!at)
      return failure();
    return ctx.setOutput(0, seq->elements[*at]);
  }
  RankedTensorType type = NodeContext::typeOf(seq->elements.front());
  for (Value v : seq->elements)
    if (NodeContext::typeOf(v) != type || !type.hasStaticShape())
      return ctx.needsConstant(1, "position (its tensors differ in shape or have dims "
                                  "decided at run time)");
  Value position = runtimeInts(ctx, 1);
  if (!position)
    return failure();
  if (NodeContext::rankOf(position) > 1 || NodeContext::typeOf(position).getNumElements() != 1)
    return ctx.invalid("position must be a scalar");
  SmallVector<Value> stacked;
  for (Value v : seq->elements)
    stacked.push_back(unsqueeze(ctx, v, {0}));
  Value all = length == 1 ? stacked.front() : ctx.make<ConcatOp>(ValueRange(stacked), ctx.i64(0));
  // An out-of-range position stops the run, as ONNX's reference does.
  Value p = asScalar(ctx, position), n = i64Scalar(ctx, length);
  Value ok = ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, p, ctx.make<NegOp>(n)),
                             compare(ctx, ComparePredicate::lt, p, n));
  // (kiln.gather counts a negative index from the end.)
  return ctx.setOutput(0, ctx.make<GatherOp>(all, requireAtRunTime(ctx, p, ok), ctx.i64(0)));
}

LogicalResult importSequenceLength(NodeContext &ctx) {
  std::optional<Sequence> seq = ctx.sequenceInput(0);
  if (!seq)
    return failure();
  return ctx.setOutput(0, i64Scalar(ctx, static_cast<int64_t>(seq->elements.size())));
}

LogicalResult importConcatFromSequence(NodeContext &ctx) {
  std::optional<Sequence> seq = ctx.sequenceInput(0);
  if (!seq)
    return failure();
  if (!ctx.hasAttr("axis"))
    return ctx.invalid("needs the axis attribute");
  if (seq->elements.empty())
    return ctx.invalid("concatenates an empty sequence");
  bool newAxis = ctx.intAttr("new_axis", 0) != 0;
  int64_t rank = NodeContext::rankOf(seq->elements.front());
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), newAxis ? rank + 1 : rank);
  if (!axis)
    return failure();
  SmallVector<Value> pieces;
  for (Value v : seq->elements)
    pieces.push_back(newAxis ? unsqueeze(ctx, v, {*axis}) : v);
  if (pieces.size() == 1)
    return ctx.setOutput(0, pieces.front());
  return ctx.setOutput(0, ctx.make<ConcatOp>(ValueRange(pieces), ctx.i64(*axis)));
}

/// SplitToSequence: pieces of the given sizes (a 1-D split, its values
/// known or read at run time), of one size (a scalar split; the last piece
/// shorter), or of size 1 (no split; dropped dims unless keepdims). The
/// number of pieces must be known when compiling.
LogicalResult importSplitToSequence(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  RankedTensorType type = NodeContext::typeOf(x);
  std::optional<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", 0), type.getRank());
  if (!axis)
    return failure();
  Sequence seq{{}, type.getElementType()};
  // ONNX ignores keepdims when split is given.
  if (ctx.hasInput(1))
    ctx.attrsWithoutEffect({"keepdims"});
  if (ctx.hasInput(1) && !ctx.isKnownInput(1)) {
    Value sizes = runtimeInts(ctx, 1);
    if (!sizes)
      return failure();
    RankedTensorType sizesType = NodeContext::typeOf(sizes);
    if (sizesType.getRank() != 1 || sizesType.isDynamicDim(0))
      return ctx.needsConstant(1, "split (a scalar size, or a 1-D one of a length decided at "
                                  "run time, sets the number of pieces)");
    SmallVector<Value> each;
    for (int64_t i = 0; i < sizesType.getDimSize(0); ++i)
      each.push_back(entryOf(ctx, sizes, i));
    seq.elements = splitAtRunTime(ctx, x, *axis, each);
    return ctx.setSequenceOutput(0, std::move(seq));
  }
  std::optional<SmallVector<int64_t>> split;
  bool scalarSplit = false;
  if (ctx.hasInput(1)) {
    split = ctx.intsInput(1, "split");
    if (!split)
      return failure();
    scalarSplit = NodeContext::rankOf(ctx.input(1)) == 0;
  }
  if (split && !scalarSplit && type.isDynamicDim(*axis)) {
    // Known sizes of a dim decided at run time: checked against it then.
    SmallVector<Value> each;
    for (int64_t size : *split)
      each.push_back(i64Scalar(ctx, size));
    seq.elements = splitAtRunTime(ctx, x, *axis, each);
    return ctx.setSequenceOutput(0, std::move(seq));
  }
  std::optional<int64_t> dim = staticDim(ctx, x, *axis, "the split axis");
  if (!dim)
    return failure();
  SmallVector<int64_t> sizes;
  bool dropDim = false;
  if (!split) {
    sizes.assign(*dim, 1);
    dropDim = ctx.intAttr("keepdims", 1) == 0;
  } else if (scalarSplit) {
    int64_t chunk = split->front();
    if (chunk <= 0)
      return ctx.invalid("split size " + llvm::Twine(chunk) + " is not positive");
    for (int64_t left = *dim; left > 0; left -= chunk)
      sizes.push_back(std::min(chunk, left));
  } else {
    sizes = *split;
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        return ctx.invalid("split size " + llvm::Twine(s) + " is negative");
      total += s;
    }
    if (total != *dim)
      return ctx.invalid("split sizes add up to " + llvm::Twine(total) + ", not the dim's " +
                         llvm::Twine(*dim));
  }
  if (static_cast<int64_t>(sizes.size()) > kMaxMappedElements * 16)
    return ctx.unsupported("a split into " + llvm::Twine(sizes.size()) + " pieces");
  if (sizes.size() == 1) {
    seq.elements.push_back(x);
  } else if (!sizes.empty()) {
    SmallVector<Value> pieces =
        ctx.makeMulti<SplitOp>(sizes.size(), x, ctx.i64(*axis), ctx.i64s(sizes));
    seq.elements.assign(pieces.begin(), pieces.end());
  }
  if (dropDim)
    for (Value &v : seq.elements)
      v = squeeze(ctx, v, {*axis});
  if (ctx.failed())
    return failure();
  return ctx.setSequenceOutput(0, std::move(seq));
}

/// SequenceMap: the body applied to each position of the sequences (the
/// tensor inputs passed whole), unrolled; each body output is a sequence.
LogicalResult importSequenceMap(NodeContext &ctx) {
  const onnx::GraphProto *body = ctx.graphAttr("body");
  if (!body)
    return ctx.invalid("needs a body graph");
  std::optional<Sequence> first = ctx.sequenceInput(0);
  if (!first)
    return failure();
  int64_t length = static_cast<int64_t>(first->elements.size());
  if (length > kMaxMappedElements)
    return ctx.unsupported("SequenceMap over " + llvm::Twine(length) +
                           " tensors (kiln unrolls at most " +
                           llvm::Twine(kMaxMappedElements) + ")");
  SmallVector<std::optional<Sequence>> sequences{first};
  SmallVector<Value> tensors{Value()};
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    if (ctx.isSequence(i)) {
      sequences.push_back(ctx.sequenceInput(i));
      if (sequences.back() && static_cast<int64_t>(sequences.back()->elements.size()) != length)
        return ctx.invalid("input sequences have " + llvm::Twine(length) + " and " +
                           llvm::Twine(sequences.back()->elements.size()) + " tensors");
      tensors.push_back(Value());
    } else {
      sequences.push_back(std::nullopt);
      tensors.push_back(ctx.input(i));
    }
  }
  if (ctx.failed())
    return failure();
  SmallVector<Sequence> outputs(body->output_size());
  for (auto [k, out] : llvm::enumerate(body->output())) {
    const auto &t = out.type().tensor_type();
    outputs[k].elementType = t.elem_type() ? elementTypeOf(ctx.context(), t.elem_type()) : Type();
  }
  for (int64_t t = 0; t < length; ++t) {
    SmallVector<Value> bodyInputs;
    for (size_t i = 0; i < sequences.size(); ++i)
      bodyInputs.push_back(sequences[i] ? sequences[i]->elements[t] : tensors[i]);
    SmallVector<Value> bodyOutputs;
    if (failed(ctx.importSubgraph(*body, bodyInputs, bodyOutputs)))
      return failure();
    for (auto [k, v] : llvm::enumerate(bodyOutputs)) {
      outputs[k].elements.push_back(v);
      outputs[k].elementType = NodeContext::elementTypeOf(v);
    }
  }
  for (size_t k = 0; k < ctx.numOutputs() && k < outputs.size(); ++k) {
    if (!outputs[k].elementType)
      return ctx.unsupported("body output " + llvm::Twine(k) +
                             " declares no element type and the sequence is empty");
    if (failed(ctx.setSequenceOutput(k, std::move(outputs[k]))))
      return failure();
  }
  return ctx.finish();
}

/// Optional: its input, or an empty optional (the `type` attribute only).
LogicalResult importOptional(NodeContext &ctx) {
  // `type` declares the element type of an empty optional, which holds no
  // value to compute with; with an input, the input's type is the one.
  ctx.attrsWithoutEffect({"type"});
  if (!ctx.hasInput(0))
    return ctx.setEmptyOptionalOutput(0);
  if (ctx.isSequence(0)) {
    std::optional<Sequence> seq = ctx.sequenceInput(0);
    return seq ? ctx.setSequenceOutput(0, std::move(*seq)) : failure();
  }
  return ctx.setOutput(0, ctx.input(0));
}

/// OptionalHasElement: whether the optional (or, from opset 18, a tensor
/// or nothing) has a value, known when compiling.
LogicalResult importOptionalHasElement(NodeContext &ctx) {
  bool present = ctx.hasInput(0) && !ctx.isEmptyOptional(0);
  if (present && !ctx.isSequence(0) && !ctx.input(0))
    return failure();
  return ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(
                              RankedTensorType::get({}, ctx.b.getI1Type()), present)));
}

/// OptionalGetElement: the optional's value (a tensor passes through).
LogicalResult importOptionalGetElement(NodeContext &ctx) {
  if (ctx.isEmptyOptional(0))
    return ctx.invalid("reads an optional without a value");
  if (ctx.isSequence(0)) {
    std::optional<Sequence> seq = ctx.sequenceInput(0);
    return seq ? ctx.setSequenceOutput(0, std::move(*seq)) : failure();
  }
  return ctx.setOutput(0, ctx.input(0));
}

} // namespace

void registerSequenceOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("SequenceEmpty", 11, any, importSequenceEmpty);
  r.add("SequenceConstruct", 11, any, importSequenceConstruct);
  r.add("SequenceInsert", 11, any, importSequenceInsert);
  r.add("SequenceErase", 11, any, importSequenceErase);
  r.add("SequenceAt", 11, any, importSequenceAt);
  r.add("SequenceLength", 11, any, importSequenceLength);
  r.add("ConcatFromSequence", 11, any, importConcatFromSequence);
  r.add("SplitToSequence", 11, any, importSplitToSequence);
  r.add("SequenceMap", 17, any, importSequenceMap);
  r.add("Optional", 15, any, importOptional);
  r.add("OptionalHasElement", 15, any, importOptionalHasElement);
  r.add("OptionalGetElement", 15, any, importOptionalGetElement);
}

} // namespace kiln::onnx_frontend
