//===- NodeContext.cpp - what an op importer sees of one node -------------===//

#include "frontends/onnx/NodeContext.h"
#include "frontends/onnx/ImporterState.h"
#include "frontends/onnx/TensorData.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace kiln::onnx_frontend {

NodeContext::NodeContext(ImporterState &state, const onnx::NodeProto &node,
                         std::string description, int64_t opset)
    : node(node), opset(opset), b(state.builder),
      loc(NameLoc::get(
          StringAttr::get(&state.context,
                          node.name().empty() ? node.op_type() : node.name()),
          FileLineColLoc::get(&state.context, state.model.path, 0, 0))),
      state(state), description(std::move(description)) {
  // Opsets 1 to 5 let a node name inputs its output may overwrite (an
  // optimisation hint, ONNX's "legacy" attribute): no effect on values.
  if (opset < 6 && (node.domain().empty() || node.domain() == "ai.onnx"))
    attributesRead.insert("consumed_inputs");
}

llvm::StringRef NodeContext::opType() const { return node.op_type(); }

//===----------------------------------------------------------------------===//
// diagnostics
//===----------------------------------------------------------------------===//

RecordedFailure NodeContext::record(IssueKind kind, const llvm::Twine &message) {
  if (!hasFailed)
    state.issues.push_back(
        {kind, description, node.op_type(), message.str(), ""});
  hasFailed = true;
  return {};
}

RecordedFailure NodeContext::unsupported(const llvm::Twine &why) {
  return record(IssueKind::Unsupported, why);
}

RecordedFailure NodeContext::invalid(const llvm::Twine &why) {
  return record(IssueKind::Invalid, why);
}

RecordedFailure NodeContext::internal(const llvm::Twine &why) {
  return record(IssueKind::Internal, why);
}

RecordedFailure NodeContext::needsConstant(size_t i, llvm::StringRef what) {
  std::string name = i < numInputs() ? node.input(i) : "";
  bool isGraphInput = false;
  for (const auto &in : state.model.proto->graph().input())
    isGraphInput |= in.name() == name;
  std::string why = what.str() + " (input '" + name +
                    "') must be known at compile time, but " +
                    (isGraphInput ? "it is a graph input; freeze it with "
                                    "--freeze-input " + name + "=<file>"
                                  : "it is computed at run time");
  if (!hasFailed)
    state.issues.push_back(
        {IssueKind::NeedsConstant, description, node.op_type(), why, name});
  hasFailed = true;
  return {};
}

std::optional<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                                  llvm::StringRef what) {
  if (axis < -rank || axis >= rank) {
    invalid(what + " " + llvm::Twine(axis) + " is out of range for rank " +
            llvm::Twine(rank));
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// inputs
//===----------------------------------------------------------------------===//

size_t NodeContext::numInputs() const { return node.input_size(); }

bool NodeContext::hasInput(size_t i) const {
  inputsRead.insert(i);
  return i < numInputs() && !node.input(i).empty();
}

Value NodeContext::optionalInput(size_t i) {
  if (!hasInput(i))
    return {};
  return state.values.lookup(node.input(i));
}

Value NodeContext::input(size_t i) {
  if (!hasInput(i)) {
    invalid("required input " + llvm::Twine(i) + " is missing");
    return {};
  }
  Value v = optionalInput(i);
  // Say why there is no value, rather than fail later on a null one.
  if (!v && state.symbolic.count(node.input(i)))
    unsupported("input " + llvm::Twine(i) + " ('" + node.input(i) +
                "') is a shape computed at run time from dynamic dims; this op cannot read "
                "it as a tensor yet");
  else if (!v && state.emptyOptionals.contains(node.input(i)))
    invalid("input " + llvm::Twine(i) + " ('" + node.input(i) + "') is an optional without a value");
  else if (!v && state.sequences.count(node.input(i)))
    unsupported("input " + llvm::Twine(i) + " ('" + node.input(i) +
                "') is a sequence; this op reads a tensor");
  else if (!v && !state.poisoned.contains(node.input(i)))
    internal("input " + llvm::Twine(i) + " ('" + node.input(i) + "') has no value");
  return v;
}

Value NodeContext::valueNamed(StringRef name) const { return state.values.lookup(name); }

bool NodeContext::isEmptyOptional(size_t i) const {
  return hasInput(i) && state.emptyOptionals.contains(node.input(i));
}

bool NodeContext::isSequence(size_t i) const {
  return hasInput(i) && state.sequences.count(node.input(i)) != 0;
}

bool NodeContext::isString(size_t i) const {
  if (!hasInput(i))
    return false;
  mlir::Value v = state.values.lookup(node.input(i));
  return v && state.strings.contains(v);
}

llvm::LogicalResult NodeContext::setStringOutput(size_t i, mlir::Value value) {
  if (mlir::failed(setOutput(i, value)))
    return llvm::failure();
  state.strings.insert(value);
  return llvm::success();
}

mlir::Value NodeContext::asString(mlir::Value value) {
  if (value)
    state.strings.insert(value);
  return value;
}

std::optional<Sequence> NodeContext::sequenceInput(size_t i) {
  if (!hasInput(i)) {
    invalid("required input " + llvm::Twine(i) + " is missing");
    return std::nullopt;
  }
  auto found = state.sequences.find(node.input(i));
  if (found != state.sequences.end())
    return found->second;
  if (state.values.count(node.input(i)))
    invalid("input " + llvm::Twine(i) + " ('" + node.input(i) +
            "') is a tensor; this op reads a sequence");
  else if (!state.poisoned.contains(node.input(i)))
    internal("input " + llvm::Twine(i) + " ('" + node.input(i) + "') has no value");
  else
    hasFailed = true; // its producer failed, and said so
  return std::nullopt;
}

RankedTensorType NodeContext::typeOf(Value v) {
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

int64_t NodeContext::rankOf(Value v) {
  RankedTensorType t = typeOf(v);
  return t ? t.getRank() : 0;
}

Type NodeContext::elementTypeOf(Value v) {
  RankedTensorType t = typeOf(v);
  return t ? t.getElementType() : Type();
}

DenseElementsAttr NodeContext::constantOf(Value v) {
  if (!v)
    return {};
  if (auto constant = v.getDefiningOp<ConstantOp>())
    return dyn_cast<DenseElementsAttr>(constant.getValue());
  return {};
}

/// The dense constant behind input `i`, or null after recording why not.
static DenseElementsAttr requireConstant(NodeContext &ctx, size_t i, StringRef what) {
  Value v = ctx.input(i);
  if (!v)
    return {};
  DenseElementsAttr attr = NodeContext::constantOf(v);
  // A tensor without elements is known whatever it is computed from.
  RankedTensorType type = NodeContext::typeOf(v);
  if (!attr && type && type.hasStaticShape() && type.getNumElements() == 0)
    attr = DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>());
  if (!attr)
    ctx.needsConstant(i, what);
  return attr;
}

std::optional<SmallVector<int64_t>> NodeContext::intsInput(size_t i,
                                                           StringRef what) {
  DenseElementsAttr attr = requireConstant(*this, i, what);
  if (!attr)
    return std::nullopt;
  SmallVector<int64_t> out;
  if (isa<IntegerType>(attr.getElementType())) {
    bool zeroExtend = attr.getElementType().isInteger(1) ||
                      attr.getElementType().isUnsignedInteger();
    for (const APInt &x : attr.getValues<APInt>())
      out.push_back(zeroExtend ? x.getZExtValue() : x.getSExtValue());
  } else {
    for (const APFloat &x : attr.getValues<APFloat>())
      out.push_back(static_cast<int64_t>(x.convertToDouble()));
  }
  return out;
}

bool NodeContext::isKnownInput(size_t i) {
  // --constant-shapes: the constant path, which reports what is not.
  if (!hasInput(i) || state.options.constantShapes)
    return true;
  if (isSymbolic(i))
    return false;
  Value v = optionalInput(i);
  RankedTensorType type = typeOf(v);
  return constantOf(v) || (type && type.hasStaticShape() && type.getNumElements() == 0);
}

bool NodeContext::isSymbolic(size_t i) const {
  return hasInput(i) && state.symbolic.count(node.input(i)) != 0;
}

std::optional<SymbolicInts> NodeContext::symbolicInput(size_t i, StringRef what) {
  inputsRead.insert(i);
  if (i < static_cast<size_t>(node.input_size())) {
    auto found = state.symbolic.find(node.input(i));
    if (found != state.symbolic.end())
      return found->second;
  }
  std::optional<SmallVector<int64_t>> ints = intsInput(i, what);
  if (!ints)
    return std::nullopt;
  SymbolicInts out;
  out.scalar = rankOf(input(i)) == 0;
  if (RankedTensorType type = typeOf(input(i)); type && type.getRank() > 1)
    out.dims = llvm::to_vector(type.getShape());
  for (int64_t v : *ints)
    out.values.push_back(v);
  return out;
}

LogicalResult NodeContext::setSymbolicOutput(size_t i, const SymbolicInts &value) {
  if (hasFailed)
    return failure();
  if (value.fullyKnown()) {
    SmallVector<int64_t> known;
    for (const std::optional<int64_t> &v : value.values)
      known.push_back(*v);
    Value constant = indices(known);
    if ((value.scalar || !value.dims.empty()) && constant)
      constant = make<ReshapeOp>(constant, i64s(value.dims));
    return setOutput(i, constant);
  }
  if (hasOutput(i))
    state.symbolic[node.output(i)] = value;
  return success();
}

std::optional<SmallVector<double>> NodeContext::floatsInput(size_t i,
                                                            StringRef what) {
  DenseElementsAttr attr = requireConstant(*this, i, what);
  if (!attr)
    return std::nullopt;
  SmallVector<double> out;
  if (isa<IntegerType>(attr.getElementType())) {
    bool zeroExtend = attr.getElementType().isInteger(1) ||
                      attr.getElementType().isUnsignedInteger();
    for (const APInt &x : attr.getValues<APInt>())
      out.push_back(zeroExtend ? static_cast<double>(x.getZExtValue())
                               : static_cast<double>(x.getSExtValue()));
  } else {
    for (APFloat x : attr.getValues<APFloat>()) {
      bool lost;
      x.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(x.convertToDouble());
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  attributesRead.insert(name);
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

const onnx::GraphProto *NodeContext::graphAttr(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  return a && a->has_g() ? &a->g() : nullptr;
}

LogicalResult NodeContext::importSubgraph(const onnx::GraphProto &body, ValueRange inputs,
                                          SmallVectorImpl<Value> &outputs) {
  if (hasFailed)
    return failure();
  if (static_cast<size_t>(body.input_size()) != inputs.size())
    return invalid("its body has " + llvm::Twine(body.input_size()) + " inputs, " +
                   llvm::Twine(inputs.size()) + " expected");
  if (!state.importNode)
    return internal("no graph importer to import its body with");
  // Each import is a fresh instance (an unrolled iteration): what an
  // earlier one bound to the body's names goes.
  auto forget = [&](const std::string &name) {
    state.values.erase(name);
    state.symbolic.erase(name);
    state.sequences.erase(name);
    state.emptyOptionals.erase(name);
    state.poisoned.erase(name);
  };
  for (const auto &in : body.input())
    forget(in.name());
  for (const auto &init : body.initializer())
    forget(init.name());
  for (const auto &inner : body.node())
    for (const std::string &out : inner.output())
      forget(out);
  for (auto [info, v] : llvm::zip(body.input(), inputs))
    state.values[info.name()] = v;
  for (const auto &init : body.initializer()) {
    onnx::TensorProto copy = init;
    auto value = tensorToAttr(context(), copy, state.model.directory, /*preferResource=*/false);
    if (!value)
      return invalid("body initializer: " + llvm::toString(value.takeError()));
    state.values[init.name()] = constant(*value);
  }
  size_t issuesBefore = state.issues.size();
  std::string outerScope = state.scope;
  state.scope = description + " body: ";
  for (auto [index, inner] : llvm::enumerate(body.node())) {
    state.importNode(inner, index);
    if (state.issues.size() != issuesBefore)
      break;
  }
  state.scope = outerScope;
  if (state.issues.size() != issuesBefore) {
    hasFailed = true; // the body node's issue says why
    return failure();
  }
  for (const auto &out : body.output()) {
    Value v = state.values.lookup(out.name());
    if (!v) {
      if (state.poisoned.contains(out.name())) {
        hasFailed = true; // an outer value it reads failed, and said so
        return failure();
      }
      if (state.symbolic.count(out.name()))
        return unsupported("body output '" + out.name() +
                           "' is a shape computed at run time from dynamic dims");
      if (state.sequences.count(out.name()))
        return unsupported("body output '" + out.name() +
                           "' is a sequence (a body gives back tensors)");
      if (state.emptyOptionals.contains(out.name()))
        return unsupported("body output '" + out.name() +
                           "' is an optional without a value (a body gives back tensors)");
      return invalid("body output '" + out.name() + "' has no value");
    }
    outputs.push_back(v);
  }
  return success();
}

int64_t NodeContext::intAttr(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : defaultValue;
}

float NodeContext::floatAttr(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return defaultValue;
  // Some exporters write integer-valued floats as ints.
  return a->type() == onnx::AttributeProto::INT ? static_cast<float>(a->i())
                                                : a->f();
}

std::string NodeContext::stringAttr(StringRef name,
                                    StringRef defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : defaultValue.str();
}

SmallVector<int64_t> NodeContext::intsAttr(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return {};
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

SmallVector<float> NodeContext::floatsAttr(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return {};
  return SmallVector<float>(a->floats().begin(), a->floats().end());
}

DenseElementsAttr NodeContext::tensorAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || !a->has_t())
    return {};
  onnx::TensorProto copy = a->t();
  auto attrOrError = tensorToAttr(context(), copy, state.model.directory,
                                  /*preferResource=*/false);
  if (!attrOrError) {
    invalid(llvm::toString(attrOrError.takeError()));
    return {};
  }
  return dyn_cast<DenseElementsAttr>(*attrOrError);
}

void NodeContext::attrsWithoutEffect(std::initializer_list<llvm::StringRef> names) {
  for (StringRef name : names)
    attributesRead.insert(name);
}

SmallVector<size_t> NodeContext::unreadInputs() const {
  SmallVector<size_t> unread;
  for (size_t i = 0; i < numInputs(); ++i)
    if (!node.input(i).empty() && !inputsRead.contains(i))
      unread.push_back(i);
  return unread;
}

SmallVector<std::string> NodeContext::unreadAttributes() const {
  SmallVector<std::string> unread;
  for (const auto &a : node.attribute())
    if (!attributesRead.contains(a.name()))
      unread.push_back(a.name());
  return unread;
}

//===----------------------------------------------------------------------===//
// outputs
//===----------------------------------------------------------------------===//

size_t NodeContext::numOutputs() const { return node.output_size(); }

bool NodeContext::hasOutput(size_t i) const {
  return i < numOutputs() && !node.output(i).empty();
}

bool NodeContext::training() const { return state.options.training; }

bool NodeContext::outputUsed(size_t i) const {
  return hasOutput(i) && isRead(state.model.proto->graph(), node.output(i));
}

LogicalResult NodeContext::setOutput(size_t i, Value value) {
  if (hasFailed)
    return failure();
  if (!value)
    return internal("the importer produced no value for output " + llvm::Twine(i));
  if (hasOutput(i))
    state.values[node.output(i)] = value;
  return success();
}

LogicalResult NodeContext::setEmptyOptionalOutput(size_t i) {
  if (hasFailed)
    return failure();
  if (hasOutput(i))
    state.emptyOptionals.insert(node.output(i));
  return success();
}

LogicalResult NodeContext::setSequenceOutput(size_t i, Sequence value) {
  if (hasFailed)
    return failure();
  if (llvm::any_of(value.elements, [](Value v) { return !v; }) || !value.elementType)
    return internal("the importer produced an incomplete sequence for output " +
                    llvm::Twine(i));
  for (Value v : value.elements)
    if (NodeContext::elementTypeOf(v) != value.elementType)
      return invalid("a sequence holds tensors of different element types");
  if (hasOutput(i))
    state.sequences[node.output(i)] = std::move(value);
  return success();
}

LogicalResult NodeContext::rejectOutput(size_t i, StringRef what) {
  if (hasOutput(i))
    return unsupported("output " + llvm::Twine(i) + " (" + what +
                       ") is not supported");
  return success();
}

LogicalResult NodeContext::finish() const {
  return failure(hasFailed);
}

//===----------------------------------------------------------------------===//
// building
//===----------------------------------------------------------------------===//

Type NodeContext::placeholderType() const {
  return UnrankedTensorType::get(b.getF32Type());
}

SmallVector<Value> NodeContext::finishOp(Operation *op) {
  // Capture what inference and the verifier say about this op.
  std::string message;
  {
    ScopedDiagnosticHandler handler(context(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        message += (message.empty() ? "" : "; ") + diag.str();
      return success();
    });
    if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      SmallVector<Type> types;
      if (succeeded(infer.inferReturnTypes(
              context(), op->getLoc(), op->getOperands(),
              op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
              op->getRegions(), types)) &&
          types.size() == op->getNumResults()) {
        for (auto [result, type] : llvm::zip(op->getResults(), types))
          result.setType(type);
      } else if (message.empty()) {
        message = "cannot infer the result type";
      }
    }
    if (message.empty())
      (void)mlir::verify(op);
  }
  if (!message.empty()) {
    std::string what = op->getName().getStringRef().str();
    // An op built on the node's own inputs states what the model asks
    // (e.g. Add of shapes that do not broadcast): the model is invalid. One
    // built on values the importer computed is Kiln's own mistake.
    bool onNodeInputs = llvm::all_of(op->getOperands(), [&](Value v) {
      for (size_t i = 0; i < numInputs(); ++i)
        if (hasInput(i) && state.values.lookup(node.input(i)) == v)
          return true;
      return false;
    });
    op->erase();
    if (onNodeInputs)
      invalid("building " + what + ": " + message);
    else
      internal("the importer built an invalid " + what + " (" + message +
               "): a Kiln limitation or bug, not a fault of the model");
    return {};
  }
  SmallVector<Value> results;
  if (succeeded(b.tryFold(op, results)) && !results.empty()) {
    op->erase();
    return results;
  }
  return SmallVector<Value>(op->getResults());
}

Value NodeContext::bitcast(Value v, Type elementType) {
  if (hasFailed || !v)
    return {};
  auto op = BitcastOp::create(b, loc, typeOf(v).clone(elementType), v);
  SmallVector<Value> results = finishOp(op);
  return results.empty() ? Value() : results.front();
}

Value NodeContext::cast(Value v, Type elementType, bool saturate) {
  if (hasFailed || !v)
    return {};
  RankedTensorType type = typeOf(v);
  if (type.getElementType() == elementType)
    return v;
  auto op = CastOp::create(b, loc, type.clone(elementType), v, saturate);
  SmallVector<Value> results = finishOp(op);
  return results.empty() ? Value() : results.front();
}

Value NodeContext::constant(ElementsAttr attr) {
  if (hasFailed || !attr)
    return {};
  return ConstantOp::create(b, loc, attr);
}

Value NodeContext::scalar(Type type, double value) {
  if (hasFailed || !type)
    return {};
  auto tensorType = RankedTensorType::get({}, type);
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(type))
    element = FloatAttr::get(floatType, value);
  else if (type.isInteger(1))
    element = BoolAttr::get(context(), value != 0);
  else
    element = IntegerAttr::get(type, static_cast<int64_t>(value));
  return constant(DenseElementsAttr::get(tensorType, element));
}

Value NodeContext::scalarLike(Value like, double value) {
  return like ? scalar(elementTypeOf(like), value) : Value();
}

Value NodeContext::indices(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    b.getI64Type());
  return constant(DenseElementsAttr::get(type, values));
}

} // namespace kiln::onnx_frontend
