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
    if (dynamicBatch || constantShapes || !frozen.empty())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--dynamic-batch, --constant-shapes and --freeze-input apply when importing ONNX; '" +
              path +
              "' is kiln IR already (pass them to kiln import)");
    return driver::createIrFileSource(path);
  }
  return onnx_frontend::createOnnxSource(path, dynamicBatch, frozen, training, constantShapes);
}

} // namespace kiln::cli
