//===- Commands.h - the subcommands of `kiln` -------------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kiln::onnx_frontend {
struct ImportResult;
} // namespace kiln::onnx_frontend

namespace kiln::cli {

/// Prints every issue of an import, grouped by kind, one line each.
void printImportIssues(llvm::raw_ostream &os,
                       const onnx_frontend::ImportResult &result);

/// Each command takes the arguments after its name and returns the exit
/// code: 0 success, 1 the input has problems, 2 bad usage.
int runCheck(llvm::ArrayRef<llvm::StringRef> args);
int runImport(llvm::ArrayRef<llvm::StringRef> args);
int runOps(llvm::ArrayRef<llvm::StringRef> args);
int runCompile(llvm::ArrayRef<llvm::StringRef> args);
int runRun(llvm::ArrayRef<llvm::StringRef> args);
int runBench(llvm::ArrayRef<llvm::StringRef> args);
int runInspect(llvm::ArrayRef<llvm::StringRef> args);

/// Dispatches `kiln <command> ...`.
int runKiln(int argc, char **argv);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMMANDS_H
