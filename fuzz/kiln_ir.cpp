//===- kiln_ir.cpp - fuzz kiln IR parsing and the import contract ---------===//
//
// Input: kiln IR as `kiln compile model.mlir|.mlirbc` reads it (text or
// bytecode). It is parsed, checked against the import contract
// (kiln-verify-contract{phase=import}) and, when it passes, taken through
// the graph phase like a model from a frontend.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzContext.h"

#include "compiler/Driver/Driver.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::fuzz::QuietContext quiet;
  // As `kiln compile model.mlir` reads it (a null-terminated copy).
  std::string ignored;
  llvm::raw_string_ostream errors(ignored);
  mlir::OwningOpRef<mlir::ModuleOp> module = kiln::driver::parseIr(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.mlir"),
      quiet.context, errors);
  if (!module)
    return 0;
  kiln::fuzz::runGraphPhase(quiet.context, *module);
  return 0;
}
