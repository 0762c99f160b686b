//===- ModelLoader.cpp - read and check an ONNX model file ----------------===//

#include "frontends/onnx/ModelLoader.h"

#include "onnx/onnx.pb.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

#include <queue>

namespace kiln::onnx_frontend {

LoadedModel::LoadedModel() = default;
LoadedModel::~LoadedModel() = default;
LoadedModel::LoadedModel(LoadedModel &&) = default;

static llvm::StringRef canonicalDomain(llvm::StringRef domain) {
  return domain == "ai.onnx" ? "" : domain;
}

int64_t LoadedModel::opsetOf(const onnx::NodeProto &node) const {
  auto it = opsets.find(canonicalDomain(node.domain()));
  return it == opsets.end() ? -1 : it->second;
}

/// Calls `f` on every subgraph (If's branches, Loop's and Scan's bodies)
/// among `node`'s attributes.
template <typename F> static void forEachSubgraph(const onnx::NodeProto &node, F f) {
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (a.has_g())
      f(a.g());
    for (const onnx::GraphProto &g : a.graphs())
      f(g);
  }
}

bool isRead(const onnx::GraphProto &graph, const std::string &name) {
  for (const onnx::ValueInfoProto &output : graph.output())
    if (output.name() == name)
      return true;
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      if (input == name)
        return true;
    bool inSubgraph = false;
    forEachSubgraph(node, [&](const onnx::GraphProto &g) { inSubgraph |= isRead(g, name); });
    if (inSubgraph)
      return true;
  }
  return false;
}

void collectOuterReads(const onnx::NodeProto &node, llvm::StringSet<> &reads) {
  forEachSubgraph(node, [&](const onnx::GraphProto &g) {
    llvm::StringSet<> defined, read;
    for (const auto &input : g.input())
      defined.insert(input.name());
    for (const auto &init : g.initializer())
      defined.insert(init.name());
    for (const onnx::NodeProto &inner : g.node()) {
      for (const std::string &out : inner.output())
        defined.insert(out);
      for (const std::string &in : inner.input())
        if (!in.empty())
          read.insert(in);
      collectOuterReads(inner, read);
    }
    for (const auto &output : g.output())
      read.insert(output.name());
    for (const auto &entry : read)
      if (!defined.contains(entry.getKey()))
        reads.insert(entry.getKey());
  });
}

std::string describeNode(const onnx::NodeProto &node, size_t index) {
  if (!node.name().empty())
    return "'" + node.name() + "' (" + node.op_type() + ")";
  return "#" + std::to_string(index) + " (" + node.op_type() + ")";
}

static llvm::Error errorLines(const std::vector<std::string> &lines) {
  std::string all;
  for (const std::string &line : lines)
    all += (all.empty() ? "" : "\n") + line;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), all);
}

/// Refuses graphs past Kiln's limits (ModelLoader.h) before anything is
/// sized by them, naming what is too large.
static void checkLimits(const onnx::GraphProto &graph, std::vector<std::string> &problems) {
  auto tooMany = [&](const std::string &what, int64_t count, int64_t limit) {
    if (count > limit)
      problems.push_back(what + " has " + std::to_string(count) + ", more than Kiln's limit of " +
                         std::to_string(limit));
  };
  tooMany("the graph's node list", graph.node_size(), kMaxNodes);
  tooMany("the graph's initializer list", graph.initializer_size(), kMaxNodes);
  tooMany("the graph's input list", graph.input_size(), kMaxGraphInputsOutputs);
  tooMany("the graph's output list", graph.output_size(), kMaxGraphInputsOutputs);
  for (int i = 0; i < graph.node_size() && problems.size() < 20; ++i) {
    const onnx::NodeProto &node = graph.node(i);
    std::string where = "node " + describeNode(node, i);
    tooMany(where + "'s input list", node.input_size(), kMaxNodeInputsOutputs);
    tooMany(where + "'s output list", node.output_size(), kMaxNodeInputsOutputs);
    for (const onnx::AttributeProto &a : node.attribute()) {
      std::string attr = where + ", attribute '" + a.name() + "',";
      int64_t values = int64_t(a.ints_size()) + a.floats_size() + a.strings_size() +
                       a.tensors_size() + a.graphs_size() + a.sparse_tensors_size() +
                       a.type_protos_size();
      tooMany(attr, values, kMaxAttributeValues);
      tooMany(attr + " a string that", static_cast<int64_t>(a.s().size()), kMaxAttributeBytes);
    }
  }
}

/// Orders the nodes so that every input is defined first; reports inputs
/// that nothing defines and cycles.
static void scheduleNodes(LoadedModel &model,
                          std::vector<std::string> &problems) {
  const onnx::GraphProto &graph = model.proto->graph();
  llvm::StringSet<> defined;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());

  // Who produces each name, and catch names defined twice.
  llvm::StringMap<int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const std::string &out : graph.node(i).output()) {
      if (out.empty())
        continue;
      if (defined.contains(out) || !producer.try_emplace(out, i).second)
        problems.push_back("node " + describeNode(graph.node(i), i) +
                           " defines '" + out +
                           "', which is already defined elsewhere");
    }

  std::vector<int> pending(graph.node_size(), 0);
  std::vector<std::vector<int>> users(graph.node_size());
  std::vector<int> ready;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    // A subgraph's reads of outer names order the node after their
    // producers too.
    llvm::StringSet<> outer;
    collectOuterReads(node, outer);
    std::vector<std::string> reads(node.input().begin(), node.input().end());
    for (const auto &entry : outer)
      if (!llvm::is_contained(reads, entry.getKey()))
        reads.push_back(entry.getKey().str());
    for (const std::string &in : reads) {
      if (in.empty() || defined.contains(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        problems.push_back("node " + describeNode(node, i) + " reads '" + in +
                           "', which no node, graph input or initializer "
                           "defines");
        continue;
      }
      ++pending[i];
      users[it->second].push_back(i);
    }
    if (pending[i] == 0)
      ready.push_back(i);
  }
  // Kahn's algorithm, always taking the first ready node in file order, so
  // a graph that is already sorted keeps its order.
  std::priority_queue<int, std::vector<int>, std::greater<int>> queue(
      std::greater<int>(), std::move(ready));
  std::vector<bool> done(graph.node_size(), false);
  while (!queue.empty()) {
    int i = queue.top();
    queue.pop();
    done[i] = true;
    model.schedule.push_back(&graph.node(i));
    for (int user : users[i])
      if (--pending[user] == 0)
        queue.push(user);
  }
  std::string stuck;
  for (int i = 0; i < graph.node_size(); ++i)
    if (!done[i] && pending[i] > 0)
      stuck += (stuck.empty() ? "" : ", ") + describeNode(graph.node(i), i);
  if (!stuck.empty() && problems.empty())
    problems.push_back("the graph has a cycle through nodes " + stuck);

  if (graph.output_size() == 0)
    problems.push_back("the graph lists no outputs: there is nothing to compute");
  for (const auto &output : graph.output())
    if (!defined.contains(output.name()) && !producer.count(output.name()))
      problems.push_back("graph output '" + output.name() +
                         "' is not defined by any node, input or "
                         "initializer");
}

llvm::Expected<LoadedModel> loadModel(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read '" + path + "': " +
                                       buffer.getError().message());
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  return loadModelFromBytes((*buffer)->getBuffer(), path,
                            directory.empty() ? "." : llvm::StringRef(directory));
}

llvm::Expected<LoadedModel> loadModelFromBytes(llvm::StringRef bytes,
                                               llvm::StringRef path,
                                               llvm::StringRef directory) {
  LoadedModel model;
  model.path = path.str();
  model.directory = directory.str();
  model.proto = std::make_unique<onnx::ModelProto>();

  const auto *data = reinterpret_cast<const uint8_t *>(bytes.data());
  size_t size = bytes.size();
  if (size > INT32_MAX)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + path + "' is larger than 2 GiB; store weights as external data");
  google::protobuf::io::CodedInputStream stream(data, static_cast<int>(size));
  stream.SetRecursionLimit(64);
  if (!model.proto->ParseFromCodedStream(&stream) ||
      !stream.ConsumedEntireMessage())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + path + "' is not a valid ONNX model (the protobuf does not "
                     "parse; the file may be truncated or not ONNX at all)");

  std::vector<std::string> problems;
  const onnx::ModelProto &proto = *model.proto;
  if (!proto.has_graph())
    problems.push_back("'" + path.str() + "' has no graph");
  if (proto.opset_import_size() == 0)
    problems.push_back("'" + path.str() + "' imports no opset");
  for (const auto &opset : proto.opset_import()) {
    llvm::StringRef domain = canonicalDomain(opset.domain());
    model.opsets[domain] = opset.version();
    if (domain.empty() &&
        (opset.version() < kMinOpset || opset.version() > kMaxKnownOpset))
      problems.push_back("default-domain opset " +
                         std::to_string(opset.version()) +
                         " is outside the range Kiln knows (" +
                         std::to_string(kMinOpset) + " to " +
                         std::to_string(kMaxKnownOpset) + ")");
  }
  if (!problems.empty())
    return errorLines(problems);

  checkLimits(proto.graph(), problems);
  if (!problems.empty())
    return errorLines(problems);

  for (int i = 0; i < proto.graph().node_size(); ++i) {
    const onnx::NodeProto &node = proto.graph().node(i);
    if (model.opsetOf(node) < 0)
      problems.push_back("node " + describeNode(node, i) + " uses domain '" +
                         node.domain() + "', which the model does not import");
  }
  scheduleNodes(model, problems);
  if (!problems.empty())
    return errorLines(problems);
  return std::move(model);
}

} // namespace kiln::onnx_frontend
