//===- Commands.h - the subcommands of `kiln` -------------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "kiln/kiln.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kiln::cli {

/// Each command takes the arguments after its name and returns the exit
/// code: 0 success, 1 the input has problems, 2 bad usage.
int runCheck(llvm::ArrayRef<llvm::StringRef> args);
int runImport(llvm::ArrayRef<llvm::StringRef> args);
int runOps(llvm::ArrayRef<llvm::StringRef> args);
int runCompile(llvm::ArrayRef<llvm::StringRef> args);
int runRun(llvm::ArrayRef<llvm::StringRef> args);
int runBench(llvm::ArrayRef<llvm::StringRef> args);
int runInspect(llvm::ArrayRef<llvm::StringRef> args);
int runVerifyArtifact(llvm::ArrayRef<llvm::StringRef> args);
int runExportWeights(llvm::ArrayRef<llvm::StringRef> args);

/// The model's inputs a caller passes (parameters of a training step are
/// the session's), as indices into its inputs, in order.
std::vector<uint32_t> callerInputs(const kiln_model *model);
int runVersion(llvm::ArrayRef<llvm::StringRef> args);

/// The SHA-256 of a file's bytes, as 64 lowercase hex digits.
llvm::Expected<std::string> sha256OfFile(llvm::StringRef path);

/// A loaded artifact, freed with the handle.
using ModelHandle = std::unique_ptr<kiln_model, void (*)(kiln_model *)>;
/// Loads the artifact at `path` for `kiln <command>`; on failure prints
/// the runtime's reason and returns null.
ModelHandle loadArtifact(llvm::StringRef command, const std::string &path);

/// Dispatches `kiln <command> ...`.
int runKiln(int argc, char **argv);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMMANDS_H
