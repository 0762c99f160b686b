//===- VerifyCommand.cpp - `kiln verify-artifact model.so` ----------------===//
//
// An artifact is code: loading it runs it (docs/Security.md). This command
// checks a file's bytes without loading it: it prints the SHA-256 of the
// file, or compares it with the one recorded when the artifact was built
// (`kiln compile` prints it) and exits 1 when they differ. A program does
// the same check and the load in one step with kiln_model_load_verified.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

llvm::Expected<std::string> sha256OfFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read '" + path +
                                                          "': " + buffer.getError().message());
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef((*buffer)->getBuffer()));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

static void printVerifyUsage(llvm::raw_ostream &os) {
  os << "usage: kiln verify-artifact <model.so|.a|.o> [--expect-hash SHA256]\n\n"
        "Prints the SHA-256 of a compiled artifact's file, without loading it\n"
        "(loading an artifact runs its code). With --expect-hash (64 hex\n"
        "digits, optionally prefixed `sha256:`), compares it with the hash\n"
        "recorded when the artifact was built (`kiln compile` prints it) and\n"
        "exits 1 when they differ. kiln_model_load_verified() does the same\n"
        "check and the load in one step.\n";
}

int runVerifyArtifact(llvm::ArrayRef<llvm::StringRef> args) {
  std::string path, expected;
  ArgumentCursor cursor(args);
  for (; !cursor.done(); cursor.next()) {
    llvm::StringRef arg = cursor.current();
    if (arg == "--help" || arg == "-h") {
      printVerifyUsage(llvm::outs());
      return 0;
    }
    if (auto v = cursor.value("--expect-hash")) {
      expected = llvm::StringRef(*v).trim().lower();
      llvm::StringRef e(expected);
      if (e.consume_front("sha256:"))
        expected = e.str();
    } else if (!arg.starts_with("-") && path.empty()) {
      path = arg.str();
    } else {
      llvm::errs() << "kiln verify-artifact: unexpected argument '" << arg << "'\n\n";
      printVerifyUsage(llvm::errs());
      return 2;
    }
  }
  if (path.empty()) {
    printVerifyUsage(llvm::errs());
    return 2;
  }
  if (!expected.empty() &&
      (expected.size() != 64 || !llvm::all_of(expected, llvm::isHexDigit))) {
    llvm::errs() << "kiln verify-artifact: --expect-hash must be a SHA-256 digest (64 hex "
                    "digits), not '"
                 << expected << "'\n";
    return 2;
  }
  auto actual = sha256OfFile(path);
  if (!actual) {
    llvm::errs() << "kiln verify-artifact: " << llvm::toString(actual.takeError()) << "\n";
    return 1;
  }
  if (expected.empty()) {
    llvm::outs() << *actual << "  " << path << "\n";
    return 0;
  }
  if (*actual != expected) {
    llvm::errs() << "kiln verify-artifact: " << path << " has SHA-256 " << *actual
                 << ", not the expected " << expected << ": do not load it\n";
    return 1;
  }
  llvm::outs() << path << ": OK (sha256 " << *actual << ")\n";
  return 0;
}

} // namespace kiln::cli
