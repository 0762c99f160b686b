//===- ModelInput.cpp - the model a command reads -------------------------===//

#include "tools/kiln/ModelInput.h"
#include "frontends/onnx/OnnxSource.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

const char *kModelInputUsage =
    "  --freeze-input N=F   replace graph input N by the tensor in F (an ONNX\n"
    "                       TensorProto .pb or .npy), specialising the model\n"
    "  --dynamic-batch      make dim 0 of every graph input dynamic (not of\n"
    "                       inputs only read as shapes, axes or counts)\n"
    "  --dim NAME=N         give every graph input dim named NAME (its\n"
    "                       dim_param) the size N: a model declaring\n"
    "                       [N, 3, H, W] compiles for H=224 with --dim H=224\n"
    "  --constant-shapes    report shapes, axes and counts that are not constants\n"
    "                       as `needs a constant` (for --freeze-input) instead of\n"
    "                       reading them when the model runs\n";

bool ModelInput::consume(ArgumentCursor &cursor, llvm::StringRef command, int &exitCode) {
  llvm::StringRef arg = cursor.current();
  if (arg == "--dynamic-batch") {
    dynamicBatch = true;
    return true;
  }
  if (arg == "--constant-shapes") {
    constantShapes = true;
    return true;
  }
  if (std::optional<std::string> v = cursor.value("--dim")) {
    size_t eq = v->find('=');
    long long size = 0;
    if (eq == std::string::npos || eq == 0 ||
        llvm::StringRef(*v).substr(eq + 1).getAsInteger(10, size) || size < 1) {
      llvm::errs() << "kiln " << command << ": --dim takes NAME=N, N a positive integer, got '"
                   << *v << "'\n";
      exitCode = 2;
      return true;
    }
    for (auto &[name, given] : namedDims)
      if (name == v->substr(0, eq)) {
        llvm::errs() << "kiln " << command << ": --dim " << name << " is given twice\n";
        exitCode = 2;
        return true;
      }
    namedDims.push_back({v->substr(0, eq), size});
    return true;
  }
  if (std::optional<std::string> v = cursor.value("--freeze-input")) {
    size_t eq = v->find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v->size()) {
      llvm::errs() << "kiln " << command << ": --freeze-input takes NAME=FILE, got '" << *v
                   << "'\n";
      exitCode = 2;
      return true;
    }
    frozen.push_back({v->substr(0, eq), v->substr(eq + 1)});
    return true;
  }
  if (!arg.starts_with("-") && path.empty()) {
    path = arg.str();
    return true;
  }
  return false;
}

llvm::Expected<std::unique_ptr<driver::ModelSource>> ModelInput::source() const {
  if (driver::isIrFile(path)) {
    if (dynamicBatch || constantShapes || !frozen.empty() || !namedDims.empty())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--dynamic-batch, --dim, --constant-shapes and --freeze-input apply when importing "
          "ONNX; '" +
              path +
              "' is kiln IR already (pass them to kiln import)");
    return driver::createIrFileSource(path);
  }
  onnx_frontend::OnnxSourceOptions options;
  options.dynamicBatch = dynamicBatch;
  options.frozenInputs = frozen;
  options.namedDims = namedDims;
  options.training = training;
  options.constantShapes = constantShapes;
  return onnx_frontend::createOnnxSource(path, std::move(options));
}

} // namespace kiln::cli
