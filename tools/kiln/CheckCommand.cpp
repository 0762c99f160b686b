//===- CheckCommand.cpp - `kiln check model.onnx` -------------------------===//
//
// Imports the model and reports what it is (inputs, outputs, opsets) and
// every node Kiln cannot import, all at once, each with its name and
// reason. Exits 1 when there is any.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "frontends/onnx/Importer.h"
#include "frontends/onnx/OnnxSource.h"
#include "frontends/onnx/OpRegistry.h"
#include "tools/kiln/Commands.h"

#include "llvm/Support/raw_ostream.h"

using namespace kiln::onnx_frontend;

namespace kiln::cli {

static void printTensors(llvm::raw_ostream &os, llvm::StringRef title,
                         const std::vector<TensorInfo> &tensors) {
  os << title << ":\n";
  for (const TensorInfo &t : tensors) {
    os << "  " << t.name << "  " << t.dataType << " [";
    for (size_t i = 0; i < t.dims.size(); ++i)
      os << (i ? ", " : "") << t.dims[i];
    os << "]\n";
  }
}

int runCheck(llvm::ArrayRef<llvm::StringRef> args) {
  if (args.size() != 1 || args[0] == "--help" || args[0].starts_with("-")) {
    (args.size() == 1 && args[0] == "--help" ? llvm::outs() : llvm::errs())
        << "usage: kiln check <model.onnx>\n\n"
           "Prints the model's inputs, outputs and opsets, and every node or\n"
           "attribute Kiln cannot import, with the reason. Exits 1 if there\n"
           "is any.\n";
    return args.size() == 1 && args[0] == "--help" ? 0 : 2;
  }
  // With the gradient rules, as `kiln compile` has them (the Gradient op).
  mlir::DialectRegistry registry;
  kiln::autodiff::registerGradientRules(registry);
  mlir::MLIRContext context(registry);
  ImportResult result = importOnnxModel(context, args[0]);
  llvm::raw_ostream &os = llvm::outs();
  os << "model: " << args[0];
  if (!result.producer.empty())
    os << " (from " << result.producer << ")";
  os << "\n";
  if (!result.opsets.empty()) {
    os << "opsets:";
    for (const auto &[domain, version] : result.opsets)
      os << " " << (domain.empty() ? "ai.onnx" : domain) << " " << version;
    os << "\n";
    printTensors(os, "inputs", result.inputs);
    printTensors(os, "outputs", result.outputs);
    os << "nodes: " << result.numNodes << "\n";
  }
  if (result.issues.empty()) {
    os << "Kiln can import every node.\n";
    return 0;
  }
  printImportIssues(os, result);
  return 1;
}

int runOps(llvm::ArrayRef<llvm::StringRef> args) {
  if (!args.empty()) {
    llvm::errs() << "usage: kiln ops\n\nLists every ONNX op type Kiln imports "
                    "with the opsets it supports.\n";
    return args[0] == "--help" ? 0 : 2;
  }
  const OpRegistry &registry = OpRegistry::get();
  std::vector<std::string> types = registry.opTypes();
  for (const std::string &type : types)
    llvm::outs() << type << "  opsets " << registry.describeRanges("", type)
                 << "\n";
  llvm::outs() << types.size() << " op types\n";
  return 0;
}

} // namespace kiln::cli
