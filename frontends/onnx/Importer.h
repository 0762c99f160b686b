//===- Importer.h - ONNX model -> kiln dialect ------------------*- C++ -*-===//
//
// The public entry points of the ONNX frontend: import a model file into a
// module of kiln IR, or check one and list everything Kiln cannot import.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_IMPORTER_H
#define KILN_FRONTENDS_ONNX_IMPORTER_H

#include "frontends/onnx/NodeContext.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace kiln::onnx_frontend {

struct ImportOptions {
  /// Graph inputs replaced by these values (compile-time specialisation);
  /// they are no longer function arguments.
  llvm::StringMap<mlir::ElementsAttr> frozenInputs;
  /// Name of the function to create.
  std::string functionName = "main";
  /// Dim 0 (the batch) of every graph input of rank >= 1 becomes dynamic,
  /// whatever the model declares.
  bool dynamicBatch = false;
  /// Named dims (an input dim's dim_param) given a size (`--dim H=224`):
  /// every graph input dim of that name takes it, after dynamicBatch.
  llvm::StringMap<int64_t> namedDims;
  /// The model is imported for a training step (`kiln compile --train`):
  /// every Dropout becomes kiln.dropout (whatever its training_mode), and
  /// BatchNormalization with training_mode = 1 imports (its running
  /// statistics' outputs, if unused) as the step trains it.
  bool training = false;
  /// Shapes, axes and counts that are not constants are needs-constant
  /// issues instead of values read at run time (`--constant-shapes`: for
  /// specialising a model with --freeze-input, and for the CUDA backend,
  /// which reads nothing on the host).
  bool constantShapes = false;
};

/// One problem found while importing, with the node it concerns.
struct ImportIssue {
  IssueKind kind;
  std::string node;    ///< description of the node, or "" for the model
  std::string opType;  ///< "" for the model
  std::string message;
  std::string input;   ///< for NeedsConstant: the input's name
};

/// The description of a graph input or output.
struct TensorInfo {
  std::string name;
  std::string dataType;
  std::vector<std::string> dims; ///< size, or dim_param name, or "?"
};

struct ImportResult {
  /// The module, or null when any issue was found.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<ImportIssue> issues;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<std::pair<std::string, int64_t>> opsets;
  size_t numNodes = 0;
  std::string producer;
};

/// Imports the model at `path`. Loading problems (unreadable or malformed
/// files, bad graphs) are reported as one Invalid issue per problem; then
/// every node is tried and every failing node is reported.
ImportResult importOnnxModel(mlir::MLIRContext &context, llvm::StringRef path,
                             const ImportOptions &options = {});

/// Imports a serialised model held in memory (`name` stands for it in
/// messages). It has no folder, so a tensor with external data is an
/// error. The fuzz targets call this.
ImportResult importOnnxBytes(mlir::MLIRContext &context, llvm::StringRef bytes,
                             llvm::StringRef name, const ImportOptions &options = {});

/// Registers the dialects the importer's output uses.
void loadImporterDialects(mlir::MLIRContext &context);

llvm::StringRef issueKindName(IssueKind kind);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_IMPORTER_H
