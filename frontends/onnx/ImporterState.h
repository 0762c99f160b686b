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
#include "frontends/onnx/SymbolicShapes.h"

#include "llvm/ADT/StringSet.h"

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
  /// Names whose producer failed: their users are skipped, not reported.
  llvm::StringSet<> poisoned;
  std::vector<ImportIssue> issues;
};

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_IMPORTERSTATE_H
