//===- kiln_ir.cpp - fuzz kiln IR parsing and the import contract ---------===//
//
// Input: kiln IR as `kiln compile model.mlir|.mlirbc` reads it (text or
// bytecode). It is parsed, checked against the import contract
// (kiln-verify-contract{phase=import}) and, when it passes, taken through
// the graph phase like a model from a frontend.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzContext.h"


#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::fuzz::QuietContext quiet;
  llvm::SourceMgr sources;
  // The parser wants a null-terminated buffer: a copy of the bytes.
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.mlir"),
      llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sources, mlir::ParserConfig(&quiet.context));
  if (!module)
    return 0;
  kiln::fuzz::runGraphPhase(quiet.context, *module);
  return 0;
}
