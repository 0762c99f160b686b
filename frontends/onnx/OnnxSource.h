//===- OnnxSource.h - the ONNX importer as a driver source ------*- C++ -*-===//

#ifndef KILN_FRONTENDS_ONNX_ONNXSOURCE_H
#define KILN_FRONTENDS_ONNX_ONNXSOURCE_H

#include "compiler/Driver/ModelSource.h"
#include "frontends/onnx/Importer.h"

#include <memory>

namespace kiln::onnx_frontend {

/// Prints every issue of an import, grouped by kind, one line each.
void printImportIssues(llvm::raw_ostream &os, const ImportResult &result);

/// What `kiln compile` and `kiln import` set of ImportOptions. Frozen
/// inputs are given as files (`name` -> ONNX TensorProto .pb or .npy) and
/// read when the model is loaded.
struct OnnxSourceOptions {
  bool dynamicBatch = false;
  std::vector<std::pair<std::string, std::string>> frozenInputs;
  /// ImportOptions::namedDims.
  std::vector<std::pair<std::string, int64_t>> namedDims;
  bool training = false;
  bool constantShapes = false;
};

/// The model at `path`, imported in process with `options`.
std::unique_ptr<driver::ModelSource> createOnnxSource(llvm::StringRef path,
                                                      OnnxSourceOptions options);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_ONNXSOURCE_H
