//===- OnnxSource.cpp - the ONNX importer as a driver source --------------===//

#include "frontends/onnx/OnnxSource.h"
#include "frontends/onnx/TensorData.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln::onnx_frontend {

void printImportIssues(llvm::raw_ostream &os, const ImportResult &result) {
  for (IssueKind kind : {IssueKind::Invalid, IssueKind::Internal, IssueKind::Unsupported,
                         IssueKind::NeedsConstant}) {
    size_t count =
        llvm::count_if(result.issues, [&](const ImportIssue &i) { return i.kind == kind; });
    if (count == 0)
      continue;
    os << issueKindName(kind) << " (" << count << "):\n";
    for (const ImportIssue &issue : result.issues) {
      if (issue.kind != kind)
        continue;
      os << "  ";
      if (!issue.node.empty())
        os << "node " << issue.node << ": ";
      os << issue.message << "\n";
    }
  }
}

namespace {
class OnnxSource : public driver::ModelSource {
public:
  OnnxSource(llvm::StringRef path, OnnxSourceOptions given)
      : file(path.str()), given(std::move(given)) {}

  std::string path() const override { return file; }

  mlir::OwningOpRef<mlir::ModuleOp> load(mlir::MLIRContext &context,
                                         llvm::raw_ostream &errors) override {
    loadImporterDialects(context);
    ImportOptions options;
    options.dynamicBatch = given.dynamicBatch;
    options.training = given.training;
    options.constantShapes = given.constantShapes;
    for (const auto &[name, size] : given.namedDims)
      options.namedDims[name] = size;
    for (const auto &[name, tensorFile] : given.frozenInputs) {
      auto attr = readTensorFile(&context, tensorFile);
      if (!attr) {
        errors << "  --freeze-input " << name << ": " << llvm::toString(attr.takeError())
               << "\n";
        return nullptr;
      }
      options.frozenInputs[name] = *attr;
    }
    ImportResult imported = importOnnxModel(context, file, options);
    if (!imported.module)
      printImportIssues(errors, imported);
    return std::move(imported.module);
  }

private:
  std::string file;
  OnnxSourceOptions given;
};
} // namespace

std::unique_ptr<driver::ModelSource> createOnnxSource(llvm::StringRef path,
                                                      OnnxSourceOptions options) {
  return std::make_unique<OnnxSource>(path, std::move(options));
}

} // namespace kiln::onnx_frontend
