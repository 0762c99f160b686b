//===- ModelInput.h - the model a command reads -----------------*- C++ -*-===//
//
// `kiln compile` and `kiln import` take the same model argument and the
// same import options: an ONNX file (imported in process, with
// --dynamic-batch, --dim and --freeze-input) or kiln IR (.mlir / .mlirbc).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_MODELINPUT_H
#define KILN_TOOLS_KILN_MODELINPUT_H

#include "compiler/Driver/Driver.h"
#include "tools/kiln/Arguments.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln::cli {

struct ModelInput {
  std::string path;
  bool dynamicBatch = false;
  bool constantShapes = false;
  std::vector<std::pair<std::string, std::string>> frozen;
  /// --dim NAME=N, in order.
  std::vector<std::pair<std::string, int64_t>> namedDims;
  /// Import for a training step (`kiln compile --train`).
  bool training = false;

  /// Takes the cursor's current argument if it is an import option;
  /// on a malformed one prints why (prefixed by `command`) and sets
  /// `exitCode` to 2.
  bool consume(ArgumentCursor &cursor, llvm::StringRef command, int &exitCode);

  /// The driver's source for the model: the ONNX importer, or kiln IR
  /// (which takes no import options: an error says so).
  llvm::Expected<std::unique_ptr<driver::ModelSource>> source() const;
};

/// Usage lines of the import options.
extern const char *kModelInputUsage;

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_MODELINPUT_H
