//===- HostCode.h - LLVM dialect -> x86-64 object code ----------*- C++ -*-===//
//
// Translates a module in the LLVM dialect to LLVM IR, optimises it at -O3
// for the chosen CPU and emits a relocatable object, all in process; and
// the lowering of host code to the LLVM dialect. The CPU backend's code is
// all host code; the CUDA backend's host code allocates and launches.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_HOSTCODE_H
#define KILN_BACKENDS_COMMON_HOSTCODE_H

#include "backends/common/Descriptor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::host {

/// Lowers bufferised host code (scf, memref, arith, math, func; no
/// parallel loops left to outline) to the LLVM dialect: allocation through
/// MLIR's generic functions (which the artifact routes to the runtime's
/// pool) unless `genericAllocation` is off (malloc, for mlir-runner), and
/// memref arguments as descriptors unless `barePointerCalls`.
struct HostLoweringOptions {
  bool genericAllocation = true;
  bool barePointerCalls = false;
};
void buildHostLowering(mlir::OpPassManager &pm, const HostLoweringOptions &options);

struct CpuTarget {
  /// "host" for the machine compiling, or an LLVM CPU name
  /// ("x86-64-v3", "skylake-avx512", ...).
  std::string cpu = "host";
};

/// Registers the LLVM IR translations the CPU backend's output needs.
void registerTranslations(mlir::DialectRegistry &registry);

/// The target machine for `target`; fails on an unknown CPU.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const CpuTarget &target);

/// "triple cpu", for the artifact descriptor.
std::string describeTarget(const llvm::TargetMachine &machine);

/// The features the runtime checks on the host that `machine`'s code may
/// use ("avx2,fma,..."), in LLVM's names.
std::string requiredFeatures(const llvm::TargetMachine &machine);

/// Moves the data of every constant global of at least `minBytes` out of
/// `module` (LLVM dialect): each becomes a hidden external declaration,
/// and its bytes (which the module's attributes keep alive) are returned
/// for the artifact's read-only data. LLVM's code generation then never
/// sees the weights (resnet50: 50 s -> seconds).
std::vector<artifact::ConstantBlob> extractConstants(mlir::ModuleOp module,
                                                     size_t minBytes = 4096);

/// The stack the generated code takes, at most: its largest function
/// frame (LLVM's .stack_sizes) and the most bytes of stack buffers (row
/// temporaries) one function allocates, each freed per loop iteration
/// (kiln-scope-loop-allocas) but counted here all at once.
struct StackUse {
  uint64_t largestFrame = 0;
  uint64_t rowTemporaries = 0;
  uint64_t total() const { return largestFrame + rowTemporaries; }
};

/// Fills `use.rowTemporaries` from the module in the LLVM dialect.
void measureRowTemporaries(mlir::ModuleOp module, StackUse &use);

/// Compiles `module` (LLVM dialect only) to an ELF relocatable object;
/// `use.largestFrame` from its .stack_sizes section.
llvm::Expected<std::string> emitObject(mlir::ModuleOp module, llvm::TargetMachine &machine,
                                       StackUse &use);

} // namespace kiln::host

#endif // KILN_BACKENDS_COMMON_HOSTCODE_H
