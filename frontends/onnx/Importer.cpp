//===- Importer.cpp - ONNX model -> kiln dialect --------------------------===//
//
// The driver: loads the model, turns graph inputs into function arguments
// and initializers into constants, imports the scheduled nodes through the
// op registry, and returns the graph outputs. Every node is tried even
// after a failure, so one run reports every problem; users of a failed
// node's outputs are skipped without a second report.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/Importer.h"
#include "frontends/onnx/ImporterState.h"
#include "frontends/onnx/ops/Helpers.h"
#include "frontends/onnx/OpRegistry.h"
#include "frontends/onnx/TensorData.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln::onnx_frontend {

llvm::StringRef issueKindName(IssueKind kind) {
  switch (kind) {
  case IssueKind::Unsupported:
    return "unsupported";
  case IssueKind::NeedsConstant:
    return "needs a constant";
  case IssueKind::Invalid:
    return "invalid";
  case IssueKind::Internal:
    return "internal (a Kiln bug or unnamed limitation, not the model's fault; please report it)";
  }
  return "unknown";
}

void loadImporterDialects(MLIRContext &context) {
  context.loadDialect<KilnDialect, func::FuncDialect>();
}

static TensorInfo describeValueInfo(const onnx::ValueInfoProto &info) {
  TensorInfo out;
  out.name = info.name();
  const auto &tensor = info.type().tensor_type();
  out.dataType = dataTypeName(tensor.elem_type()).str();
  if (!tensor.has_shape()) {
    out.dims.push_back("(unranked)");
    return out;
  }
  for (const auto &dim : tensor.shape().dim()) {
    if (dim.has_dim_value())
      out.dims.push_back(std::to_string(dim.dim_value()));
    else if (dim.has_dim_param() && !dim.dim_param().empty())
      out.dims.push_back(dim.dim_param());
    else
      out.dims.push_back("?");
  }
  return out;
}

/// The kiln type of a graph input or output, or an error message; a
/// string tensor is one of i64 handles (`isString` set).
static FailureOr<RankedTensorType> typeOfValueInfo(MLIRContext &context,
                                                   const onnx::ValueInfoProto &info,
                                                   std::string &error, bool &isString) {
  if (!info.type().has_tensor_type()) {
    error = "'" + info.name() + "' is not a tensor (sequences, maps and "
                                "optionals are not supported)";
    return failure();
  }
  const auto &tensor = info.type().tensor_type();
  isString = tensor.elem_type() == onnx::TensorProto::STRING;
  Type element = isString ? IntegerType::get(&context, 64)
                          : elementTypeOf(&context, tensor.elem_type());
  if (!element) {
    error = "'" + info.name() + "' has data type " +
            dataTypeName(tensor.elem_type()).str() +
            ", which kiln does not support";
    return failure();
  }
  if (!tensor.has_shape()) {
    error = "'" + info.name() + "' has no shape (rank unknown)";
    return failure();
  }
  SmallVector<int64_t> dims;
  for (const auto &dim : tensor.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() < 0) {
      error = "'" + info.name() + "' has a negative dim";
      return failure();
    }
    dims.push_back(dim.has_dim_value() ? dim.dim_value()
                                       : ShapedType::kDynamic);
  }
  return RankedTensorType::get(dims, element);
}

/// `type` (of graph input `info`) with each dim whose dim_param
/// ImportOptions::namedDims gives a size taking it; the names used are
/// added to `used`.
static RankedTensorType withNamedDims(const onnx::ValueInfoProto &info, RankedTensorType type,
                                      const llvm::StringMap<int64_t> &namedDims,
                                      llvm::StringSet<> &used) {
  if (namedDims.empty() || !info.type().tensor_type().has_shape())
    return type;
  SmallVector<int64_t> dims(type.getShape());
  const auto &shape = info.type().tensor_type().shape();
  for (int i = 0; i < shape.dim_size() && i < static_cast<int>(dims.size()); ++i) {
    auto size = namedDims.find(shape.dim(i).dim_param());
    if (shape.dim(i).has_dim_value() || size == namedDims.end())
      continue;
    dims[i] = size->second;
    used.insert(size->first());
  }
  return RankedTensorType::get(dims, type.getElementType());
}

/// The dim_params of the graph's inputs, for an error ("none" if none).
static std::string namedDimsOf(const onnx::GraphProto &graph) {
  llvm::SetVector<llvm::StringRef> names;
  for (const auto &input : graph.input())
    for (const auto &dim : input.type().tensor_type().shape().dim())
      if (dim.has_dim_param() && !dim.dim_param().empty())
        names.insert(dim.dim_param());
  return names.empty() ? "its inputs name none" : "they are " + llvm::join(names, ", ");
}

namespace {
class GraphImporter {
public:
  GraphImporter(ImporterState &state) : state(state) {}

  void run(ImportResult &result);

private:
  void importInitializers();
  func::FuncOp createFunction();
  void importNode(const onnx::NodeProto &node, size_t index);
  void modelIssue(IssueKind kind, const std::string &message) {
    state.issues.push_back({kind, "", "", message, ""});
  }
  void checkDeclaredOutput(const onnx::ValueInfoProto &output, Value value);
  bool refuseUnread(NodeContext &ctx, ArrayRef<size_t> inputs, ArrayRef<std::string> attributes);

  ImporterState &state;
};
} // namespace

/// Refuses the node of `ctx` for each input position in `inputs` and each
/// attribute in `attributes` that no importer looked at (an input beyond
/// the op's, a misspelled attribute, one of another opset, or one Kiln
/// does not implement: compiled as if absent, it could compute something
/// else), poisoning its outputs; true when there was one.
bool GraphImporter::refuseUnread(NodeContext &ctx, ArrayRef<size_t> inputs,
                                 ArrayRef<std::string> attributes) {
  std::string where = " is not one Kiln reads for " + ctx.node.op_type() + " at opset " +
                      std::to_string(ctx.opset);
  for (size_t i : inputs)
    ctx.unsupported("input " + std::to_string(i) + " ('" + ctx.node.input(i) + "')" + where +
                    " (beyond the op's inputs there, or an optional one Kiln does not "
                    "implement); compiling without it could compute something else");
  for (const std::string &name : attributes)
    ctx.unsupported("attribute '" + name + "'" + where +
                    " (not an attribute of the op there, or one Kiln does not implement); "
                    "compiling without it could compute something else");
  if (inputs.empty() && attributes.empty())
    return false;
  for (const std::string &out : ctx.node.output())
    state.poisoned.insert(out);
  return true;
}

void GraphImporter::importInitializers() {
  auto &graph = *state.model.proto->mutable_graph();
  OpBuilder &b = state.builder;
  for (auto &init : *graph.mutable_initializer()) {
    std::string name = init.name();
    if (init.data_type() == onnx::TensorProto::STRING) {
      // A string constant: its text in the artifact, handles to it.
      Location loc = NameLoc::get(b.getStringAttr(name),
                                  FileLineColLoc::get(&state.context, state.model.path, 0, 0));
      std::string error;
      Value v = stringTensorConstant(b, loc, init, error);
      if (!v) {
        modelIssue(IssueKind::Invalid, "initializer '" + name + "': " + error);
        state.poisoned.insert(name);
        continue;
      }
      state.values[name] = v;
      state.strings.insert(v);
      continue;
    }
    auto attr = tensorToAttr(&state.context, init, state.model.directory,
                             /*preferResource=*/true);
    if (!attr) {
      modelIssue(IssueKind::Invalid,
                 "initializer: " + llvm::toString(attr.takeError()));
      state.poisoned.insert(name);
      continue;
    }
    Location loc = NameLoc::get(b.getStringAttr(name),
                                FileLineColLoc::get(&state.context,
                                                    state.model.path, 0, 0));
    state.values[name] = ConstantOp::create(b, loc, *attr);
  }
  for (const auto &[name, attr] : state.options.frozenInputs) {
    Location loc = NameLoc::get(b.getStringAttr(name));
    state.values[name] = ConstantOp::create(b, loc, attr);
  }
}

/// Whether input `index` of an `opType` node gives a shape, axes, sizes or
/// a count (it has no batch dim).
static bool isShapeOperand(llvm::StringRef opType, int index) {
  static const llvm::StringMap<std::vector<int>> operands = {
      {"Reshape", {1}}, {"Expand", {1}}, {"Tile", {1}}, {"Slice", {1, 2, 3, 4}},
      {"Pad", {1, 3}}, {"Resize", {1, 2, 3}}, {"Upsample", {1}}, {"Unsqueeze", {1}},
      {"Squeeze", {1}}, {"ReduceSum", {1}}, {"ReduceMean", {1}}, {"ReduceMax", {1}},
      {"ReduceMin", {1}}, {"ReduceProd", {1}}, {"ReduceL1", {1}}, {"ReduceL2", {1}},
      {"ReduceLogSum", {1}}, {"ReduceLogSumExp", {1}}, {"ReduceSumSquare", {1}},
      {"TopK", {1}}, {"OneHot", {1}}, {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}},
      {"Split", {1}}, {"CumSum", {1}}, {"Trilu", {1}}, {"HannWindow", {0}},
      {"HammingWindow", {0}}, {"BlackmanWindow", {0}}, {"MaxUnpool", {2}},
      {"CenterCropPad", {1, 2}}, {"Col2Im", {1, 2}}, {"SplitToSequence", {1}}};
  auto found = operands.find(opType);
  return found != operands.end() && llvm::is_contained(found->second, index);
}

/// Graph inputs that only nodes' shape operands read: --dynamic-batch
/// leaves their length alone (it is a rank, not a batch).
static llvm::StringSet<> shapeOnlyInputs(const onnx::GraphProto &graph) {
  llvm::StringSet<> shapes, data;
  for (const auto &node : graph.node())
    for (int i = 0; i < node.input_size(); ++i)
      (isShapeOperand(node.op_type(), i) ? shapes : data).insert(node.input(i));
  for (const auto &output : graph.output())
    data.insert(output.name());
  llvm::StringSet<> only;
  for (const auto &entry : shapes)
    if (!data.contains(entry.getKey()))
      only.insert(entry.getKey());
  return only;
}

/// Ops that only move elements (or read only dims): they take string
/// tensors, and their results of a string input are strings.
static bool movesElements(llvm::StringRef opType) {
  static const llvm::StringSet<> ops = {"Identity", "Reshape",  "Flatten", "Squeeze", "Unsqueeze",
                                        "Transpose", "Concat", "Gather", "Slice", "Split",
                                        "Expand", "Tile", "Shape", "Size"};
  return ops.contains(opType);
}

/// Ops whose importers read the characters of string tensors
/// (ops/Strings.cpp).
static bool readsStrings(llvm::StringRef domain, llvm::StringRef opType) {
  if (domain == "ai.onnx.ml")
    return opType == "LabelEncoder";
  static const llvm::StringSet<> ops = {"StringNormalizer", "StringConcat", "StringSplit",
                                        "RegexFullMatch", "Cast", "CastLike", "Equal"};
  return domain.empty() && ops.contains(opType);
}

/// An attribute that a later opset of a default-domain op made an input:
/// a model that still gives it at that opset is invalid (onnx.checker and
/// ONNX Runtime refuse it), and an importer that reads the input alone
/// would quietly compute something else (ReduceMax's `axes` at opset 18:
/// a reduction over every axis). The message, or "" when there is none.
static std::string movedAttribute(const onnx::NodeProto &node, int64_t opset) {
  struct Moved {
    llvm::StringLiteral op, attribute;
    int64_t since;
  };
  static constexpr Moved table[] = {
      {"ReduceSum", "axes", 13},       {"ReduceMax", "axes", 18},  {"ReduceMin", "axes", 18},
      {"ReduceMean", "axes", 18},      {"ReduceProd", "axes", 18}, {"ReduceL1", "axes", 18},
      {"ReduceL2", "axes", 18},        {"ReduceLogSum", "axes", 18},
      {"ReduceLogSumExp", "axes", 18}, {"ReduceSumSquare", "axes", 18},
      {"Squeeze", "axes", 13},         {"Unsqueeze", "axes", 13},  {"Split", "split", 13},
      {"Pad", "pads", 11},             {"Pad", "value", 11},       {"Slice", "starts", 10},
      {"Slice", "ends", 10},           {"Slice", "axes", 10},      {"TopK", "k", 10},
      {"Clip", "min", 11},             {"Clip", "max", 11},        {"Dropout", "ratio", 12},
      {"Upsample", "scales", 9},       {"Reshape", "shape", 5}};
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return "";
  for (const onnx::AttributeProto &attribute : node.attribute())
    for (const Moved &m : table)
      if (opset >= m.since && node.op_type() == m.op && attribute.name() == m.attribute)
        return "attribute '" + attribute.name() + "' is an input of " + node.op_type() +
               " from opset " + std::to_string(m.since) + " (the model imports opset " +
               std::to_string(opset) + "): give it as the input";
  return "";
}

func::FuncOp GraphImporter::createFunction() {
  const onnx::GraphProto &graph = state.model.proto->graph();
  llvm::StringSet<> shapeInputs = shapeOnlyInputs(graph);
  MLIRContext &context = state.context;
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  SmallVector<bool> argStrings;
  llvm::StringSet<> initializerNames, namedDimsUsed;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());
  for (const auto &input : graph.input()) {
    // An input with an initializer of the same name is a constant with a
    // default (IR version < 4 listed every weight as an input).
    if (initializerNames.contains(input.name()))
      continue;
    auto frozen = state.options.frozenInputs.find(input.name());
    if (frozen != state.options.frozenInputs.end())
      continue;
    std::string error;
    bool isString = false;
    FailureOr<RankedTensorType> type = typeOfValueInfo(context, input, error, isString);
    if (failed(type)) {
      modelIssue(IssueKind::Unsupported, "graph input " + error);
      state.poisoned.insert(input.name());
      continue;
    }
    if (state.options.dynamicBatch && type->getRank() >= 1 &&
        !shapeInputs.contains(input.name())) {
      SmallVector<int64_t> dims(type->getShape());
      dims[0] = ShapedType::kDynamic;
      type = RankedTensorType::get(dims, type->getElementType());
    }
    type = withNamedDims(input, *type, state.options.namedDims, namedDimsUsed);
    argTypes.push_back(*type);
    argNames.push_back(input.name());
    argStrings.push_back(isString);
  }
  for (const auto &entry : state.options.namedDims)
    if (!namedDimsUsed.contains(entry.getKey()))
      modelIssue(IssueKind::Invalid, "--dim names '" + entry.getKey().str() +
                                         "', which no graph input's dims are named (" +
                                         namedDimsOf(graph) + ")");
  for (const auto &[name, attr] : state.options.frozenInputs) {
    bool known = llvm::any_of(graph.input(), [&, n = name](const auto &in) {
      return in.name() == n;
    });
    if (!known)
      modelIssue(IssueKind::Invalid,
                 "--freeze-input names '" + name.str() +
                     "', which is not a graph input");
  }

  OpBuilder &b = state.builder;
  auto func = func::FuncOp::create(
      b, FileLineColLoc::get(&context, state.model.path, 0, 0),
      state.options.functionName, b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, KilnDialect::NameAttrHelper::getNameStr(), b.getStringAttr(name));
    state.values[name] = entry->getArgument(i);
    if (argStrings[i]) {
      func.setArgAttr(i, kStringAttr, b.getUnitAttr());
      state.strings.insert(entry->getArgument(i));
    }
  }
  b.setInsertionPointToStart(entry);
  return func;
}

void GraphImporter::importNode(const onnx::NodeProto &node, size_t index) {
  std::string description = state.scope + describeNode(node, index);
  for (const std::string &in : node.input())
    if (!in.empty() && state.poisoned.contains(in)) {
      for (const std::string &out : node.output())
        state.poisoned.insert(out);
      // Still say when the op itself is unknown: `kiln check` lists all.
      if (!OpRegistry::get().knowsOp(node.domain(), node.op_type()))
        state.issues.push_back({IssueKind::Unsupported, description,
                                node.op_type(),
                                "no importer for this op type", ""});
      return;
    }
  int64_t opset = state.model.opsetOf(node);
  const OpRegistry &registry = OpRegistry::get();
  const OpImporter *importer =
      registry.lookup(node.domain(), node.op_type(), opset);
  auto fail = [&](const std::string &message) {
    state.issues.push_back(
        {IssueKind::Unsupported, description, node.op_type(), message, ""});
    for (const std::string &out : node.output())
      state.poisoned.insert(out);
  };
  if (!importer) {
    std::string domain = node.domain().empty() ? "" : node.domain() + ".";
    if (!registry.knowsOp(node.domain(), node.op_type()))
      fail("no importer for " + domain + node.op_type());
    else
      fail("opset " + std::to_string(opset) + " of " + node.op_type() +
           " is not supported (supported: " +
           registry.describeRanges(node.domain(), node.op_type()) + ")");
    return;
  }
  if (std::string moved = movedAttribute(node, opset); !moved.empty()) {
    state.issues.push_back({IssueKind::Invalid, description, node.op_type(), moved, ""});
    for (const std::string &out : node.output())
      state.poisoned.insert(out);
    return;
  }
  // String tensors go only to the importers that read characters and to
  // ops that move elements (their results are strings too).
  std::string stringInput;
  for (const std::string &in : node.input())
    if (!in.empty() && state.strings.contains(state.values.lookup(in))) {
      stringInput = in;
      break;
    }
  bool movesStrings = !stringInput.empty() && node.domain().empty() &&
                      movesElements(node.op_type());
  if (!stringInput.empty() && !movesStrings && !readsStrings(node.domain(), node.op_type())) {
    fail("reads the string tensor '" + stringInput +
         "' (Kiln's ops on strings: StringNormalizer, StringConcat, StringSplit, "
         "RegexFullMatch, Cast, CastLike, Equal, LabelEncoder, and ops that move elements)");
    return;
  }
  NodeContext ctx(state, node, description, opset);
  // Shape arithmetic on dims known only at run time is evaluated here, by
  // element (SymbolicShapes.h), next to its run-time value: Shape of a
  // dynamic tensor has both, and arithmetic on them computes both. The
  // elements known when compiling fold into constants and static dims;
  // every other op reads the run-time value.
  auto symbolicInput = llvm::find_if(node.input(), [&](const std::string &in) {
    return state.symbolic.count(in) != 0;
  });
  bool allHaveValues = llvm::all_of(node.input(), [&](const std::string &in) {
    return in.empty() || state.values.count(in) != 0;
  });
  if (symbolicInput != node.input().end() && node.op_type() != "Reshape" &&
      node.op_type() != "Expand" && isSymbolicArithmetic(node.op_type())) {
    bool runtimeValue = false;
    SmallVector<std::string> runtimeUnread;
    if (allHaveValues) {
      // The run-time value, best effort: where the op cannot build it, the
      // elements alone still serve Reshape and Expand.
      size_t issuesBefore = state.issues.size();
      NodeContext runtime(state, node, description, opset);
      runtimeValue = succeeded(importer->import(runtime)) && !runtime.failed();
      runtimeUnread = runtime.unreadAttributes();
      if (!runtimeValue) {
        state.issues.resize(issuesBefore);
        for (const std::string &out : node.output())
          state.values.erase(out);
      }
    }
    size_t issuesBefore = state.issues.size();
    if (failed(evaluateSymbolic(ctx)) || ctx.failed()) {
      // Arithmetic with a tensor known only at run time (a graph input) has
      // no per-element value; its run-time value is the result.
      if (runtimeValue) {
        state.issues.resize(issuesBefore);
        for (const std::string &out : node.output())
          state.symbolic.erase(out);
        refuseUnread(ctx, {}, runtimeUnread);
        return;
      }
      if (!ctx.failed())
        ctx.internal("the shape arithmetic failed without saying why");
      for (const std::string &out : node.output())
        state.poisoned.insert(out);
      return;
    }
    // Attributes that neither the run-time value nor the shape arithmetic
    // read.
    SmallVector<std::string> unread = ctx.unreadAttributes();
    if (runtimeValue)
      llvm::erase_if(unread, [&](const std::string &name) {
        return !llvm::is_contained(runtimeUnread, name);
      });
    refuseUnread(ctx, {}, unread);
    return;
  }
  if (symbolicInput != node.input().end() && node.op_type() != "Reshape" &&
      node.op_type() != "Expand" && !allHaveValues) {
    fail("reads '" + *symbolicInput +
         "', a shape computed at run time from dynamic dims (only shape arithmetic, "
         "Reshape and Expand can)");
    return;
  }
  if (failed(importer->import(ctx)) || ctx.failed()) {
    if (!ctx.failed())
      ctx.internal("the importer failed without saying why");
    for (const std::string &out : node.output())
      state.poisoned.insert(out);
    return;
  }
  // Inputs (Relu(x, y) ignored y) and attributes no accessor looked at.
  if (refuseUnread(ctx, ctx.unreadInputs(), ctx.unreadAttributes()))
    return;
  if (movesStrings && node.op_type() != "Shape" && node.op_type() != "Size")
    for (size_t i = 0; i < ctx.numOutputs(); ++i)
      if (ctx.hasOutput(i))
        if (Value v = state.values.lookup(node.output(i)))
          state.strings.insert(v);
  // An output nothing reads may stay unproduced (a training step's
  // Dropout mask or batch-norm statistics).
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    if (ctx.hasOutput(i) && !state.values.count(node.output(i)) &&
        !state.symbolic.count(node.output(i)) && !state.sequences.count(node.output(i)) &&
        !state.emptyOptionals.contains(node.output(i))) {
      if (ctx.outputUsed(i))
        ctx.unsupported("output " + std::to_string(i) + " ('" + node.output(i) +
                        "') is not produced");
      state.poisoned.insert(node.output(i));
    }
}

/// A graph output's declared type (when the model declares one) must be
/// what the graph computes: a data type ONNX defines and Kiln supports, the
/// computed element type, the computed rank, and every dim both know
/// statically. (They were ignored: a model declaring data type 999 or dims
/// [3, 5] for a [2, 4] result compiled without a word.)
void GraphImporter::checkDeclaredOutput(const onnx::ValueInfoProto &output, Value value) {
  if (!output.type().has_tensor_type())
    return;
  const auto &tensor = output.type().tensor_type();
  auto computed = dyn_cast<RankedTensorType>(value.getType());
  if (!computed)
    return;
  std::string name = "graph output '" + output.name() + "'";
  bool declaredString = tensor.elem_type() == onnx::TensorProto::STRING;
  if (declaredString != state.strings.contains(value) && tensor.elem_type() != 0) {
    modelIssue(IssueKind::Invalid, name + (declaredString ? " is declared string, but the graph "
                                                            "computes numbers"
                                                          : " is declared " +
                                                                dataTypeName(tensor.elem_type()).str() +
                                                                ", but the graph computes strings"));
    return;
  }
  if (tensor.elem_type() != 0 && !declaredString) {
    Type declared = elementTypeOf(&state.context, tensor.elem_type());
    if (!declared) {
      modelIssue(IssueKind::Invalid, name + " declares data type " +
                                         std::to_string(tensor.elem_type()) + " (" +
                                         dataTypeName(tensor.elem_type()).str() +
                                         "), which is not one Kiln supports");
      return;
    }
    if (declared != computed.getElementType()) {
      std::string got;
      llvm::raw_string_ostream os(got);
      os << computed.getElementType();
      modelIssue(IssueKind::Invalid, name + " is declared " +
                                         dataTypeName(tensor.elem_type()).str() +
                                         ", but the graph computes " + got);
      return;
    }
  }
  if (!tensor.has_shape())
    return;
  const auto &dims = tensor.shape().dim();
  auto describe = [&]() {
    std::string declared = "[", got = "[";
    for (int i = 0; i < dims.size(); ++i)
      declared += (i ? ", " : "") +
                  (dims[i].has_dim_value() ? std::to_string(dims[i].dim_value()) : "?");
    for (int64_t i = 0; i < computed.getRank(); ++i)
      got += (i ? ", " : "") + (computed.isDynamicDim(i) ? std::string("?")
                                                          : std::to_string(computed.getDimSize(i)));
    return declared + "], but the graph computes " + got + "]";
  };
  if (dims.size() != computed.getRank()) {
    modelIssue(IssueKind::Invalid, name + " is declared " + describe());
    return;
  }
  for (int i = 0; i < dims.size(); ++i)
    if (dims[i].has_dim_value() && !computed.isDynamicDim(i) &&
        dims[i].dim_value() != computed.getDimSize(i)) {
      modelIssue(IssueKind::Invalid, name + " is declared " + describe());
      return;
    }
}

void GraphImporter::run(ImportResult &result) {
  const onnx::GraphProto &graph = state.model.proto->graph();
  OpBuilder &b = state.builder;
  auto module = ModuleOp::create(b.getUnknownLoc());
  result.module = module;
  b.setInsertionPointToEnd(module.getBody());
  func::FuncOp func = createFunction();
  importInitializers();
  state.importNode = [this](const onnx::NodeProto &node, size_t index) {
    importNode(node, index);
  };
  for (auto [index, node] : llvm::enumerate(state.model.schedule))
    importNode(*node, index);

  SmallVector<Value> results;
  SmallVector<std::string> names;
  for (const auto &output : graph.output()) {
    Value v = state.values.lookup(output.name());
    if (!v) {
      if (state.emptyOptionals.contains(output.name()))
        modelIssue(IssueKind::Unsupported,
                   "graph output '" + output.name() +
                       "' is an optional without a value (a compiled model returns tensors)");
      else if (state.sequences.count(output.name()))
        modelIssue(IssueKind::Unsupported,
                   "graph output '" + output.name() +
                       "' is a sequence (a compiled model returns tensors; ConcatFromSequence "
                       "or SequenceAt give one)");
      else if (!state.poisoned.contains(output.name()))
        modelIssue(IssueKind::Invalid,
                   "graph output '" + output.name() + "' has no value");
      continue;
    }
    checkDeclaredOutput(output, v);
    results.push_back(v);
    names.push_back(output.name());
  }
  func::ReturnOp::create(b, func.getLoc(), results);
  func.setType(b.getFunctionType(func.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  for (auto [i, name] : llvm::enumerate(names))
    func.setResultAttr(i, KilnDialect::NameAttrHelper::getNameStr(), b.getStringAttr(name));
  for (auto [i, v] : llvm::enumerate(results))
    if (state.strings.contains(v))
      func.setResultAttr(i, kStringAttr, b.getUnitAttr());

  if (state.issues.empty()) {
    std::string message;
    ScopedDiagnosticHandler handler(&state.context, [&](Diagnostic &diag) {
      message += (message.empty() ? "" : "; ") + diag.str();
      return success();
    });
    if (failed(mlir::verify(module)))
      modelIssue(IssueKind::Invalid,
                 "the imported IR does not verify: " + message);
  }
}

static ImportResult importLoaded(MLIRContext &context, llvm::Expected<LoadedModel> model,
                                 const ImportOptions &options) {
  loadImporterDialects(context);
  ImportResult result;
  if (!model) {
    std::string all = llvm::toString(model.takeError());
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(all).split(lines, '\n');
    for (llvm::StringRef line : lines)
      result.issues.push_back({IssueKind::Invalid, "", "", line.str(), ""});
    return result;
  }
  const onnx::GraphProto &graph = model->proto->graph();
  for (const auto &in : graph.input())
    result.inputs.push_back(describeValueInfo(in));
  for (const auto &out : graph.output())
    result.outputs.push_back(describeValueInfo(out));
  for (const auto &entry : model->opsets)
    result.opsets.push_back({entry.getKey().str(), entry.getValue()});
  std::sort(result.opsets.begin(), result.opsets.end());
  result.numNodes = graph.node_size();
  result.producer = model->proto->producer_name();

  ImporterState state(context, *model, options);
  GraphImporter(state).run(result);
  result.issues = std::move(state.issues);
  if (!result.issues.empty())
    result.module = nullptr;
  return result;
}

ImportResult importOnnxModel(MLIRContext &context, llvm::StringRef path,
                             const ImportOptions &options) {
  return importLoaded(context, loadModel(path), options);
}

ImportResult importOnnxBytes(MLIRContext &context, llvm::StringRef bytes,
                             llvm::StringRef name, const ImportOptions &options) {
  return importLoaded(context, loadModelFromBytes(bytes, name, /*directory=*/""), options);
}

} // namespace kiln::onnx_frontend
