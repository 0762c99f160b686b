//===- Driver.h - the compile driver as a library ---------------*- C++ -*-===//
//
// compile(source, options): a model source (a frontend, or kiln IR in a
// file) -> import -> graph -> [autodiff, reserved] -> fuse -> the
// backend's library calls -> linalg -> plan -> the backend's codegen ->
// the artifact. Pass order lives in compiler/Pipelines (the target-neutral
// phases) and in each backend's pipeline file; this file only calls them
// in order. `kiln compile`, `kiln import` and the tests call it; the tool
// keeps only argument parsing and printing.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_DRIVER_H
#define KILN_COMPILER_DRIVER_DRIVER_H

#include "compiler/Autodiff/TrainingStep.h"
#include "compiler/Driver/ModelSource.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Backend.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace kiln::driver {

/// Whether `path` names kiln IR (.mlir text or .mlirbc bytecode).
bool isIrFile(llvm::StringRef path);
/// Kiln IR read from a .mlir or .mlirbc file.
std::unique_ptr<ModelSource> createIrFileSource(llvm::StringRef path);
/// Parses kiln IR (text or bytecode) from a null-terminated buffer, after
/// checking what MLIR's parser would abort on; problems go to `errors`.
/// A module naming an external weights file (`kiln.weights_file`, docs/
/// Contracts.md) has its blobs mapped from that file, found in `folder`
/// (refused when `folder` is empty); every `dense_resource` must then
/// have its bytes.
mlir::OwningOpRef<mlir::ModuleOp> parseIr(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                          mlir::MLIRContext &context,
                                          llvm::raw_ostream &errors,
                                          llvm::StringRef folder = "");

struct CompileOptions {
  /// The backend (`--target`).
  std::string target = "cpu";
  TargetOptions targetOptions;
  /// Fuse kernels (kiln-fuse and linalg's elementwise fusion).
  bool fuse = true;
  /// Plan the arena for batches up to this (0: dynamic buffers from the
  /// pool).
  int64_t maxBatch = 0;
  /// The batch sizes a session prepares its library calls for when it is
  /// created (`--batch-buckets`); empty: batch 1.
  std::vector<int64_t> batchBuckets;
  /// Print the IR after this phase to `irOutput` instead of writing an
  /// artifact.
  std::optional<Phase> stopAfter;
  llvm::raw_ostream *irOutput = nullptr;
  /// The artifact (.so, .a or .o); its header goes next to it.
  std::string outputPath;
  /// Model nodes whose results become extra outputs, named
  /// "<node>" (result 0) or "<node>:<i>" (`kiln run --dump`): values that
  /// fusion would keep out of memory are materialised.
  std::vector<std::string> extraOutputs;
  /// `kiln compile --train`: compile the model's training step instead.
  std::optional<autodiff::TrainOptions> train;
  /// Called as each step starts (`compileSteps` names them, in order), for
  /// progress reports.
  std::function<void(size_t step)> onStep;
};

/// The steps `compile` reports through CompileOptions::onStep.
inline constexpr const char *compileSteps[] = {"import", "graph", "fuse", "linalg",
                                               "plan",   "codegen", "artifact"};

/// What `kiln compile` reports of a written artifact.
struct CompileSummary {
  std::string target;
  std::string contentHash;
  /// `kiln compile --report`: the memory plan and the code, as lines.
  std::string report;
  /// Lines worth saying after a compile (a training step's saved
  /// activations and what --remat recomputes).
  std::vector<std::string> notes;
};

/// Compiles the model `source` gives. Diagnostics go to stderr as they
/// arise; the error says what failed.
llvm::Expected<CompileSummary> compile(ModelSource &source, const CompileOptions &options);

/// Imports the model (and runs the phases up to `stopAfter`, at most
/// `graph`) and writes its kiln IR to `outputPath` ("-": stdout): MLIR
/// bytecode when it ends in .mlirbc, text otherwise (with locations when
/// written to a file, so that it compiles to the same artifact).
llvm::Error importModel(ModelSource &source, Phase stopAfter, llvm::StringRef outputPath);

/// "unknown target 'x' (known: cpu)" unless `name` is registered.
llvm::Expected<const Backend *> findBackend(llvm::StringRef name);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_DRIVER_H
