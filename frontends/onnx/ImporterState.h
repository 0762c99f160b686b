//===- ImporterState.h - state shared by the driver and nodes ---*- C++ -*-===//
//
// Internal to the ONNX frontend: the builder, the map from ONNX value names
// to kiln values, and the issues found so far.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_IMPORTERSTATE_H
#define KILN_FRONTENDS_ONNX_IMPORTERSTATE_H

#include "frontends/onnx/Importer.h"
#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/NodeContext.h"
#include "frontends/onnx/SymbolicShapes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

namespace kiln::onnx_frontend {

class ImporterState {
public:
  ImporterState(mlir::MLIRContext &context, const LoadedModel &model,
                const ImportOptions &options)
      : context(context), builder(&context), model(model), options(options) {}

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  const LoadedModel &model;
  const ImportOptions &options;
  /// kiln value of every ONNX name imported so far.
  llvm::StringMap<mlir::Value> values;
  /// Shape computations with elements only known at run time
  /// (SymbolicShapes.h); these names have no kiln value.
  llvm::StringMap<SymbolicInts> symbolic;
  /// ONNX sequences, held as the list of their tensors: sequence ops
  /// (ops/Sequence.cpp) build and take apart lists whose length is known
  /// when compiling; these names have no kiln value.
  llvm::StringMap<Sequence> sequences;
  /// Optionals without a value (Optional with no input): the names of
  /// optionals with one are bound to the value itself.
  llvm::StringSet<> emptyOptionals;
  /// The values that are string tensors (i64 handles, see kiln.string):
  /// only string-aware importers (ops/Strings.cpp) and ops that move
  /// elements read them.
  llvm::DenseSet<mlir::Value> strings;
  /// Names whose producer failed: their users are skipped, not reported.
  llvm::StringSet<> poisoned;
  std::vector<ImportIssue> issues;
  /// Prefixed to node descriptions while a body is imported ("#0 (Scan)
  /// body: "), so that an issue names the node inside its op.
  std::string scope;
  /// Imports one node into the current scope (the graph importer's; a
  /// control-flow op's importer uses it for the nodes of its body).
  std::function<void(const onnx::NodeProto &, size_t)> importNode;
};

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_IMPORTERSTATE_H
