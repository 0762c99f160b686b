//===- Backend.h - what a target plugs into the compiler --------*- C++ -*-===//
//
// A target is a `Backend` (modelled on IREE's TargetBackend). The driver
// (compiler/Driver) runs the target-neutral phases (import, graph, fuse,
// linalg, plan: compiler/Pipelines) and asks the chosen backend, in order:
//   1. after `fuse`:  claimLibraryCalls — which ops a vendor library runs;
//   2. after `plan`:  buildCodegenPipeline — its own passes (one file per
//      backend orders them);
//   3. then:          emitArtifact — object code and the artifact, written
//      through the shared descriptor writer (the backends' common folder).
// Backends register themselves (the backends' Registration.cpp); the
// compiler includes and links none of them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_BACKEND_H
#define KILN_COMPILER_TARGET_BACKEND_H

#include "compiler/Target/LibraryCall.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// Options for the backend, from `kiln compile`.
struct TargetOptions {
  /// Hand convolutions and matmuls to the target's vendor library (off:
  /// generate everything, `--no-libraries`).
  bool libraries = true;
  /// Backend-specific settings (`--cpu=NAME` is `cpu` -> NAME on the CPU
  /// backend); a backend rejects a key it does not take.
  llvm::StringMap<std::string> settings;
};

/// A model input or output, as the entry function declares it.
struct ModelTensor {
  std::string name;
  mlir::Type elementType;
  std::vector<int64_t> dims; ///< -1 for a dynamic dim
  /// A string tensor (KILN_DTYPE_STRING): i64 handles in the code, marked
  /// `kiln.string` on the entry function.
  bool string = false;
};

/// Everything the artifact holds besides the code.
struct ArtifactContents {
  /// .so, .a or .o; the C header goes next to it.
  std::string outputPath;
  std::vector<ModelTensor> inputs, outputs;
  /// The entry function (after codegen, the symbol its code defines).
  std::string entryFunction;
  std::vector<LibraryCall> libraryCalls;
  /// The code calls the string functions (kiln.string): the entry point
  /// defines them.
  bool strings = false;
  /// The planned arena of the entry function (kiln-plan-memory).
  int64_t arenaBytes = 0;
  /// The largest batch the arena holds (`--max-batch`), 0 if unbounded.
  int64_t maxBatch = 0;
  /// The batches a session prepares for when it is created.
  std::vector<int64_t> batchBuckets;
  /// The most stack one run's generated code takes (set by the backend's
  /// emitArtifact; 0 when unknown).
  uint64_t stackBytes = 0;
  /// Of the model (its kiln IR after import) and every flag.
  std::string contentHash;
  /// The backend's targetDescription().
  std::string target;
  /// The compile report (memory plan, kernels) as JSON.
  std::string report;
  /// Inputs the session owns (a training step's parameters and optimiser
  /// state, kiln_model_state): input index, the output that updates it,
  /// its initial bytes.
  /// `output` is KILN_STATE_READ_ONLY (UINT32_MAX) for an inference
  /// entry's parameters; `sharedInitial` >= 0: the initial bytes are the
  /// training step's session tensor of that index (the same artifact), not
  /// written again.
  struct SessionTensor {
    uint32_t input = 0, output = 0;
    std::vector<char> initial;
    int64_t sharedInitial = -1;
  };
  std::vector<SessionTensor> sessionTensors;
  /// The descriptor's symbol. Another than `kiln_model_descriptor` (a
  /// training step's inference entry) makes a .o whose other symbols are
  /// all local, so that it links into the training step's artifact.
  std::string descriptorSymbol = "kiln_model_descriptor";
  /// A training step's inference entry: its object (as above) and symbol,
  /// linked in and named by the descriptor's `inference`.
  std::string inferenceObject, inferenceSymbol;
};

class Backend {
public:
  virtual ~Backend();

  /// `--target=NAME`.
  virtual llvm::StringRef name() const = 0;
  /// One line for `kiln compile --help`.
  virtual llvm::StringRef description() const = 0;
  /// The settings the backend takes (key, help), for errors and --help.
  virtual std::vector<std::pair<std::string, std::string>> settingsHelp() const { return {}; }

  /// "the NAME target has no setting 'KEY' (known: ...)", for a backend's
  /// settings parser.
  llvm::Error unknownSetting(llvm::StringRef key) const;

  /// Whether its code runs kiln.string (string tensors); the driver
  /// refuses a model with strings for a backend that does not.
  virtual bool runsStrings() const { return false; }

  /// Dialect extensions and translations its passes need; called before
  /// the compile's context is created.
  virtual void registerDialects(mlir::DialectRegistry &registry) const {}

  /// Checks `options` and names the code it will produce ("x86_64-pc-
  /// linux-gnu znver3"): this goes into the content hash and the
  /// descriptor. Fails on an unknown setting (listing the known ones) or
  /// an unknown processor.
  virtual llvm::Expected<std::string> targetDescription(const TargetOptions &options) const = 0;

  /// After `fuse`: marks the ops a vendor library runs with
  /// `kiln.library_call = N` and returns their table (index N). May
  /// dissolve kernels it prefers to run as separate ops.
  virtual std::vector<LibraryCall> claimLibraryCalls(mlir::ModuleOp module,
                                                     const TargetOptions &options) const {
    return {};
  }
  /// How a claimed call is named in reports ("oneDNN conv+bias").
  virtual std::string libraryCallLabel(const LibraryCall &call) const { return call.summary(); }

  /// After `plan`: the backend's code-generation passes.
  virtual void buildCodegenPipeline(mlir::OpPassManager &pm,
                                    const TargetOptions &options) const = 0;
  /// One line for `kiln compile --report` on the code: kernels, threads.
  virtual std::string codeSummary(mlir::ModuleOp module, const ArtifactContents &contents) const;
  /// After codegen: what `kiln compile` tells the user about the code
  /// (a line each), such as how it will run differently.
  virtual std::vector<std::string> compileNotes(mlir::ModuleOp module) const { return {}; }

  /// After codegen: writes the artifact and its header.
  virtual llvm::Error emitArtifact(mlir::ModuleOp module, const ArtifactContents &contents,
                                   const TargetOptions &options) const = 0;
};

/// Adds `backend` to the registry (its name must be new).
void registerBackend(std::unique_ptr<Backend> backend);
/// The backend named `name`, or null.
const Backend *lookupBackend(llvm::StringRef name);
/// The registered backends' names, sorted.
std::vector<std::string> registeredBackendNames();

} // namespace kiln

#endif // KILN_COMPILER_TARGET_BACKEND_H
