//===- ModelLoader.h - read and check an ONNX model file --------*- C++ -*-===//
//
// Parses a model file into a ModelProto and checks its graph structure
// before anything is imported: opsets, names, dangling edges, cycles. Every
// problem found is reported (not only the first), each naming the node or
// tensor it concerns.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_MODELLOADER_H
#define KILN_FRONTENDS_ONNX_MODELLOADER_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
class ModelProto;
class NodeProto;
} // namespace onnx

namespace kiln::onnx_frontend {

/// The oldest and newest default-domain opsets Kiln knows.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxKnownOpset = 28;

/// Limits on a model's graph, checked when it is loaded (docs/Security.md):
/// far above real models, low enough that nothing sized by them exhausts
/// memory or time. Compile time is near-linear in the node count (a
/// 100,000-node chain compiles in under a minute).
constexpr int64_t kMaxNodes = 1'000'000;
/// The runtime's limit on a model's inputs and outputs (kiln_runtime.c).
constexpr int64_t kMaxGraphInputsOutputs = 4096;
constexpr int64_t kMaxNodeInputsOutputs = 65536;
/// Values of one attribute (ints, floats, strings, tensors, graphs).
constexpr int64_t kMaxAttributeValues = 1 << 20;
/// Bytes of a string attribute.
constexpr int64_t kMaxAttributeBytes = 1 << 20;

/// A parsed model with the facts the importer needs about it.
struct LoadedModel {
  std::unique_ptr<onnx::ModelProto> proto;
  std::string path;      ///< as given
  std::string directory; ///< anchors external data
  /// Opset version per domain ("" is the default domain, "ai.onnx" too).
  llvm::StringMap<int64_t> opsets;
  /// Graph nodes in an order where every input is defined before use.
  std::vector<const onnx::NodeProto *> schedule;

  LoadedModel();
  ~LoadedModel();
  LoadedModel(LoadedModel &&);
  /// The opset of the domain of `node`, or -1 when the model imports none.
  int64_t opsetOf(const onnx::NodeProto &node) const;
};

/// Whether a node of `graph` or one of its outputs reads value `name`.
bool isRead(const onnx::GraphProto &graph, const std::string &name);

/// Adds to `reads` the names the subgraphs of `node` read from outside
/// themselves (ONNX subgraphs see the enclosing graphs' values).
void collectOuterReads(const onnx::NodeProto &node, llvm::StringSet<> &reads);

/// A name for a node in messages: its name, or "#<index> (<op type>)".
std::string describeNode(const onnx::NodeProto &node, size_t index);

/// Reads `path`, parses it and checks the graph. On failure the error holds
/// one line per problem.
llvm::Expected<LoadedModel> loadModel(llvm::StringRef path);

/// The same for a model already in memory (`path` names it in messages).
/// `directory` anchors external data; empty: the model may have none.
llvm::Expected<LoadedModel> loadModelFromBytes(llvm::StringRef bytes,
                                               llvm::StringRef path,
                                               llvm::StringRef directory);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_MODELLOADER_H
