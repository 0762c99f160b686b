//===- CpuCodegen.h - LLVM dialect -> x86-64 object code --------*- C++ -*-===//
//
// Translates a module in the LLVM dialect to LLVM IR, optimises it at -O3
// for the chosen CPU and emits a relocatable object, all in process.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_CPUCODEGEN_H
#define KILN_BACKENDS_CPU_CPUCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kiln::cpu {

struct CpuTarget {
  /// "host" for the machine compiling, or an LLVM CPU name
  /// ("x86-64-v3", "skylake-avx512", ...).
  std::string cpu = "host";
};

struct ObjectCode {
  std::string bytes;  ///< an ELF relocatable object
  std::string target; ///< "triple cpu", for the artifact descriptor
};

/// Registers the LLVM IR translations `module`'s context needs.
void registerTranslations(mlir::MLIRContext &context);

/// Compiles `module` (LLVM dialect only) to object code.
llvm::Expected<ObjectCode> emitObject(mlir::ModuleOp module, const CpuTarget &target);

} // namespace kiln::cpu

#endif // KILN_BACKENDS_CPU_CPUCODEGEN_H
