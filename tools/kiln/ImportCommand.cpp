//===- ImportCommand.cpp - `kiln import model.onnx -o model.mlir` ---------===//

#include "compiler/Pipelines/Pipelines.h"
#include "frontends/onnx/Importer.h"
#include "frontends/onnx/TensorData.h"
#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace kiln::onnx_frontend;

namespace kiln::cli {

static const char *kImportUsage =
    "usage: kiln import <model.onnx> [-o out.mlir] [--compile-to=PHASE]\n"
    "                   [--freeze-input NAME=FILE.pb]... [--dynamic-batch]\n\n"
    "Writes the model as kiln IR (to stdout without -o).\n"
    "  --compile-to=PHASE   import (default) or graph: stop after that phase\n"
    "  --freeze-input N=F   replace graph input N by the tensor in F (an ONNX\n"
    "                       TensorProto .pb file), specialising the model\n"
    "  --dynamic-batch      make dim 0 of every graph input dynamic\n";

int runImport(llvm::ArrayRef<llvm::StringRef> args) {
  std::string modelPath, outputPath = "-";
  Phase phase = Phase::Import;
  std::vector<std::pair<std::string, std::string>> frozen;
  bool dynamicBatch = false;
  for (ArgumentCursor cursor(args); !cursor.done(); cursor.next()) {
    llvm::StringRef arg = cursor.current();
    auto value = [&](llvm::StringRef flag) { return cursor.value(flag); };
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kImportUsage;
      return 0;
    }
    if (std::optional<std::string> v = value("--compile-to")) {
      std::optional<Phase> p = parsePhase(*v);
      if (!p || *p > Phase::Graph) {
        llvm::errs() << "kiln import: --compile-to must be import or graph, "
                        "got '" << *v << "'\n";
        return 2;
      }
      phase = *p;
    } else if (arg == "--dynamic-batch") {
      dynamicBatch = true;
    } else if (std::optional<std::string> v = value("--freeze-input")) {
      size_t eq = v->find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v->size()) {
        llvm::errs() << "kiln import: --freeze-input takes NAME=FILE, got '"
                     << *v << "'\n";
        return 2;
      }
      frozen.push_back({v->substr(0, eq), v->substr(eq + 1)});
    } else if (std::optional<std::string> v = value("-o")) {
      outputPath = *v;
    } else if (!arg.starts_with("-") && modelPath.empty()) {
      modelPath = arg.str();
    } else {
      llvm::errs() << "kiln import: unexpected argument '" << arg
                   << "'\n\n" << kImportUsage;
      return 2;
    }
  }
  if (modelPath.empty()) {
    llvm::errs() << kImportUsage;
    return 2;
  }

  mlir::MLIRContext context;
  loadImporterDialects(context);
  ImportOptions options;
  options.dynamicBatch = dynamicBatch;
  for (const auto &[name, file] : frozen) {
    auto attr = readTensorFile(&context, file);
    if (!attr) {
      llvm::errs() << "kiln import: --freeze-input " << name << ": "
                   << llvm::toString(attr.takeError()) << "\n";
      return 1;
    }
    options.frozenInputs[name] = *attr;
  }
  ImportResult result = importOnnxModel(context, modelPath, options);
  if (!result.module) {
    llvm::errs() << "kiln import: " << modelPath << " cannot be imported:\n";
    printImportIssues(llvm::errs(), result);
    return 1;
  }
  if (phase != Phase::Import) {
    mlir::PassManager pm(&context);
    buildPipeline(pm, PipelineOptions{phase});
    if (mlir::failed(pm.run(*result.module)))
      return 1;
  }
  std::string error;
  auto output = mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "kiln import: " << error << "\n";
    return 1;
  }
  result.module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

} // namespace kiln::cli
