//===- ImportCommand.cpp - `kiln import model.onnx -o model.mlirbc` -------===//

#include "compiler/Driver/Driver.h"
#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"
#include "tools/kiln/ModelInput.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

static const char *kImportUsage =
    "usage: kiln import <model.onnx> [-o out.mlir|out.mlirbc] [--compile-to=PHASE]\n"
    "                   [--freeze-input NAME=FILE.pb]... [--dynamic-batch]\n\n"
    "Writes the model as kiln IR (to stdout without -o): MLIR bytecode when the\n"
    "output ends in .mlirbc (weights as binary), text otherwise (with locations\n"
    "in a file, so that it compiles to the artifact the ONNX file gives).\n"
    "`kiln compile` takes either and compiles it as it would the ONNX file.\n"
    "  --compile-to=PHASE   import (default) or graph: stop after that phase\n";

int runImport(llvm::ArrayRef<llvm::StringRef> args) {
  ModelInput model;
  std::string outputPath = "-";
  Phase phase = Phase::Import;
  int exitCode = 0;
  for (ArgumentCursor cursor(args); !cursor.done() && exitCode == 0; cursor.next()) {
    llvm::StringRef arg = cursor.current();
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kImportUsage << kModelInputUsage;
      return 0;
    }
    if (std::optional<std::string> v = cursor.value("--compile-to")) {
      std::optional<Phase> p = parsePhase(*v);
      if (!p || *p > Phase::Graph) {
        llvm::errs() << "kiln import: --compile-to must be import or graph, got '" << *v
                     << "'\n";
        return 2;
      }
      phase = *p;
    } else if (std::optional<std::string> v = cursor.value("-o")) {
      outputPath = *v;
    } else if (!model.consume(cursor, "import", exitCode)) {
      llvm::errs() << "kiln import: unexpected argument '" << arg << "'\n\n"
                   << kImportUsage << kModelInputUsage;
      return 2;
    }
  }
  if (exitCode != 0)
    return exitCode;
  if (model.path.empty()) {
    llvm::errs() << kImportUsage << kModelInputUsage;
    return 2;
  }
  auto source = model.source();
  if (!source) {
    llvm::errs() << "kiln import: " << llvm::toString(source.takeError()) << "\n";
    return 2;
  }
  if (llvm::Error e = driver::importModel(**source, phase, outputPath)) {
    llvm::errs() << "kiln import: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}

} // namespace kiln::cli
