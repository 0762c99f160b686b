//===- OnnxSource.h - the ONNX importer as a driver source ------*- C++ -*-===//

#ifndef KILN_FRONTENDS_ONNX_ONNXSOURCE_H
#define KILN_FRONTENDS_ONNX_ONNXSOURCE_H

#include "compiler/Driver/ModelSource.h"
#include "frontends/onnx/Importer.h"

#include <memory>

namespace kiln::onnx_frontend {

/// Prints every issue of an import, grouped by kind, one line each.
void printImportIssues(llvm::raw_ostream &os, const ImportResult &result);

/// The model at `path`, imported in process with `options`. Frozen inputs
/// are given as files (`name` -> ONNX TensorProto .pb or .npy) and read
/// when the model is loaded. `training`: ImportOptions::training.
std::unique_ptr<driver::ModelSource>
createOnnxSource(llvm::StringRef path, bool dynamicBatch,
                 std::vector<std::pair<std::string, std::string>> frozenInputs,
                 bool training = false, bool constantShapes = false);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_ONNXSOURCE_H
