//===- Driver.cpp - the phases of a compile, in order ---------------------===//

#include "compiler/Driver/Driver.h"

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Driver/Report.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace kiln::driver {

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<const Backend *> findBackend(llvm::StringRef name) {
  if (const Backend *backend = lookupBackend(name))
    return backend;
  std::string known;
  for (const std::string &n : registeredBackendNames())
    known += (known.empty() ? "" : ", ") + n;
  return error("unknown target '" + name + "' (known: " + known + ")");
}

namespace {
/// A stream that hashes what is written to it (the module's bytecode,
/// without holding a copy of its weights).
class HashStream : public llvm::raw_ostream {
public:
  explicit HashStream(llvm::SHA256 &hash) : hash(hash) { SetUnbuffered(); }

private:
  void write_impl(const char *data, size_t size) override {
    hash.update(llvm::StringRef(data, size));
    position += size;
  }
  uint64_t current_pos() const override { return position; }
  llvm::SHA256 &hash;
  uint64_t position = 0;
};

/// A context with every dialect and extension the phases use.
struct CompileContext {
  explicit CompileContext(const ModelSource &source, const Backend *backend) {
    DialectRegistry registry;
    registry.insert<KilnDialect>();
    autodiff::registerGradientRules(registry);
    registerAllDialects(registry);
    registerAllExtensions(registry);
    source.registerDialects(registry);
    if (backend)
      backend->registerDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadDialect<KilnDialect, func::FuncDialect>();
  }
  std::unique_ptr<MLIRContext> context;
};
} // namespace

/// Loads the source and checks the import contract.
static llvm::Expected<OwningOpRef<ModuleOp>> loadModel(ModelSource &source,
                                                       MLIRContext &context) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  OwningOpRef<ModuleOp> module = source.load(context, os);
  if (!module)
    return error(source.path() + " cannot be imported:\n" + problems);
  PassManager pm(&context);
  buildImportCheck(pm);
  if (failed(pm.run(*module)))
    return error(source.path() + " is not kiln IR as the import phase leaves it (see above)");
  return std::move(module);
}

/// Runs the target-neutral phases after `from` up to `to`.
static llvm::Error runPhases(ModuleOp module, Phase from, Phase to, const CompileOptions &options,
                             llvm::StringRef path) {
  if (to <= from)
    return llvm::Error::success();
  PassManager pm(module.getContext());
  PipelineOptions pipeline;
  pipeline.startAfter = from;
  pipeline.stopAfter = to;
  pipeline.maxBatch = options.maxBatch;
  pipeline.fuse = options.fuse;
  pipeline.remat = options.train && options.train->remat;
  buildPipeline(pm, pipeline);
  if (failed(pm.run(module)))
    return error("compiling " + path + " failed (see above)");
  return llvm::Error::success();
}

/// The model's inputs or outputs as the entry function declares them.
static std::vector<ModelTensor> describeTensors(func::FuncOp entry, bool results) {
  std::vector<ModelTensor> tensors;
  FunctionType type = entry.getFunctionType();
  unsigned count = results ? type.getNumResults() : type.getNumInputs();
  llvm::StringRef nameKey = KilnDialect::NameAttrHelper::getNameStr();
  for (unsigned i = 0; i < count; ++i) {
    auto ranked = cast<RankedTensorType>(results ? type.getResult(i) : type.getInput(i));
    auto name = results ? entry.getResultAttrOfType<StringAttr>(i, nameKey)
                        : entry.getArgAttrOfType<StringAttr>(i, nameKey);
    ModelTensor t;
    t.name = name ? name.str() : (results ? "output" : "input") + std::to_string(i);
    t.elementType = ranked.getElementType();
    t.string = results ? static_cast<bool>(entry.getResultAttr(i, kStringAttr))
                       : static_cast<bool>(entry.getArgAttr(i, kStringAttr));
    for (int64_t d : ranked.getShape())
      t.dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
    tensors.push_back(std::move(t));
  }
  return tensors;
}

/// The model nodes an op came from (its location's names).
static bool fromNode(Operation *op, llvm::StringRef node) {
  bool found = false;
  op->getLoc()->walk([&](Location loc) {
    if (auto name = dyn_cast<NameLoc>(loc))
      found |= name.getName() == node;
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// Makes the results of each node in `nodes` outputs of `entry` (the last
/// op imported from the node gives its results).
static llvm::Error addNodeOutputs(func::FuncOp entry, llvm::ArrayRef<std::string> nodes) {
  auto ret = cast<func::ReturnOp>(entry.getBody().front().getTerminator());
  llvm::StringRef nameKey = KilnDialect::NameAttrHelper::getNameStr();
  for (const std::string &node : nodes) {
    Operation *last = nullptr;
    for (Operation &op : entry.getBody().front())
      if (op.getNumResults() > 0 && fromNode(&op, node))
        last = &op;
    if (!last)
      return error("no node named '" + node + "' in the model (`kiln inspect` lists the nodes "
                   "of each kernel)");
    for (auto [i, result] : llvm::enumerate(last->getResults())) {
      if (!isa<RankedTensorType>(result.getType()))
        return error("node '" + node + "' result " + std::to_string(i) + " has type " +
                     [&] {
                       std::string text;
                       llvm::raw_string_ostream os(text);
                       os << result.getType();
                       return text;
                     }() + ", which an output cannot have");
      unsigned index = ret->getNumOperands();
      ret->insertOperands(index, result);
      entry.insertResult(index, result.getType(),
                         DictionaryAttr::get(entry.getContext(),
                                             {NamedAttribute(
                                                 StringAttr::get(entry.getContext(), nameKey),
                                                 StringAttr::get(entry.getContext(),
                                                                 i == 0 ? node
                                                                        : node + ":" +
                                                                              std::to_string(i)))}));
    }
  }
  return llvm::Error::success();
}

/// Of the imported module (its bytecode: the weights included), the
/// backend's target and every flag that changes the code. The same model
/// gives the same hash whether it came as ONNX or as kiln IR.
static std::string contentHash(ModuleOp module, const CompileOptions &options,
                               llvm::StringRef target) {
  llvm::SHA256 hash;
  {
    HashStream os(hash);
    (void)writeBytecodeToFile(module, os);
  }
  std::string flags = "kiln-0.2 target=" + options.target + " " + target.str();
  if (!options.targetOptions.libraries)
    flags += " no-libraries";
  if (!options.fuse)
    flags += " no-fuse";
  if (options.maxBatch)
    flags += " max-batch=" + std::to_string(options.maxBatch);
  if (!options.batchBuckets.empty()) {
    flags += " batch-buckets=";
    for (int64_t b : options.batchBuckets)
      flags += std::to_string(b) + ",";
  }
  std::vector<std::string> settings;
  for (const auto &entry : options.targetOptions.settings)
    settings.push_back(entry.getKey().str() + "=" + entry.getValue());
  llvm::sort(settings);
  for (const std::string &s : settings)
    flags += " " + s;
  hash.update(flags);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

static void printModule(ModuleOp module, llvm::raw_ostream &os) {
  module.print(os);
  os << "\n";
}

/// Compiles `module`'s `main` (imported, checked) into the artifact
/// `contents` describes: its tables, hash and name are filled in here.
/// `stop(phase)` is asked after each phase and ends the compile (true)
/// when the caller printed the IR instead; `step(i)` reports progress.
static llvm::Error compileEntry(ModuleOp module, const Backend &backend,
                                const std::string &target, const CompileOptions &options,
                                ArtifactContents &contents,
                                llvm::function_ref<bool(Phase)> stop,
                                llvm::function_ref<void(size_t)> step,
                                MemoryPlanSummary *planOut = nullptr,
                                autodiff::RematSummary *remat = nullptr) {
  const std::string path = contents.outputPath;
  Phase last = options.stopAfter.value_or(Phase::Codegen);
  auto entry = module.lookupSymbol<func::FuncOp>("main");
  if (llvm::Error e = addNodeOutputs(entry, options.extraOutputs))
    return e;
  contents.inputs = describeTensors(entry, false);
  contents.outputs = describeTensors(entry, true);
  // (The runtime refuses to load an artifact that returns nothing.)
  if (contents.outputs.empty())
    return error("the model has no outputs: there is nothing to compute (a graph must list at "
                 "least one output)");
  contents.strings = static_cast<bool>(module.walk([](StringOp) { return WalkResult::interrupt(); })
                                           .wasInterrupted());
  auto isString = [](const ModelTensor &t) { return t.string; };
  if ((contents.strings || llvm::any_of(contents.inputs, isString) ||
       llvm::any_of(contents.outputs, isString)) &&
      !backend.runsStrings())
    return error("the model computes on string tensors, which the " + backend.name().str() +
                 " target does not run (the cpu target does)");
  if (!contents.batchBuckets.empty()) {
    if (llvm::none_of(contents.inputs, [](const ModelTensor &t) {
          return !t.dims.empty() && t.dims[0] < 0;
        }))
      return error("--batch-buckets needs an input whose dim 0 (the batch) is dynamic; " +
                   options.outputPath + "'s model has none (import with --dynamic-batch)");
    for (int64_t b : contents.batchBuckets)
      if (contents.maxBatch && b > contents.maxBatch)
        return error("batch bucket " + std::to_string(b) + " is above --max-batch=" +
                     std::to_string(contents.maxBatch));
  }
  if (!options.stopAfter)
    contents.contentHash = contentHash(module, options, target);
  contents.entryFunction = "kiln_main";
  entry.setSymName(contents.entryFunction);
  entry->setAttr("llvm.emit_c_interface", UnitAttr::get(module.getContext()));
  if (stop(Phase::Import))
    return llvm::Error::success();

  // graph, fuse; then the backend claims library calls on whole kernels
  // with exact shapes.
  Phase fused = options.fuse ? Phase::Fuse : Phase::Graph;
  step(1);
  if (llvm::Error e = runPhases(module, Phase::Import, std::min(fused, last), options, path))
    return e;
  if (stop(Phase::Graph) || stop(Phase::Fuse))
    return llvm::Error::success();
  if (auto summary = entry->getAttrOfType<DenseI64ArrayAttr>(autodiff::kRematAttr)) {
    if (remat && summary.size() == 2)
      *remat = {summary[0], summary[1]};
    entry->removeAttr(autodiff::kRematAttr);
  }
  step(2);
  if (options.targetOptions.libraries)
    contents.libraryCalls = backend.claimLibraryCalls(module, options.targetOptions);
  step(3);

  // linalg (its kernels are what the report lists), then plan.
  if (llvm::Error e = runPhases(module, Phase::Fuse, std::min(Phase::Linalg, last), options, path))
    return e;
  llvm::json::Array kernels =
      listKernels(module, contents.entryFunction, backend, contents.libraryCalls,
                  /*mark=*/!options.stopAfter.has_value());
  if (stop(Phase::Linalg))
    return llvm::Error::success();
  step(4);
  if (llvm::Error e = runPhases(module, Phase::Linalg, std::min(Phase::Plan, last), options, path))
    return e;
  if (stop(Phase::Plan))
    return llvm::Error::success();

  // The backend's code generation and artifact.
  step(5);
  PassManager codegen(module.getContext());
  backend.buildCodegenPipeline(codegen, options.targetOptions);
  if (failed(codegen.run(module)))
    return error("compiling " + path + " failed (see above)");
  if (stop(Phase::Codegen))
    return llvm::Error::success();
  MemoryPlanSummary plan = readMemoryPlan(module, contents.entryFunction);
  contents.arenaBytes = plan.arenaBytes;
  contents.report =
      buildReport(plan, std::move(kernels), backend.codeSummary(module, contents));
  if (planOut)
    *planOut = plan;
  step(6);
  return backend.emitArtifact(module, contents, options.targetOptions);
}

/// A training step's inference entry: `module` (the model as imported)
/// with the step's parameters as read-only session-owned inputs, compiled
/// into a relocatable object in `work` that the step's artifact links in.
static llvm::Error compileInferenceEntry(ModuleOp module, const Backend &backend,
                                         const std::string &target,
                                         const CompileOptions &options,
                                         const std::vector<autodiff::StepState> &training,
                                         llvm::StringRef work, ArtifactContents &step) {
  auto lifted = autodiff::buildInferenceEntry(module, *options.train);
  if (!lifted)
    return lifted.takeError();
  ArtifactContents contents;
  contents.outputPath = (work + "/inference.o").str();
  contents.target = target;
  contents.maxBatch = options.maxBatch;
  contents.batchBuckets = options.batchBuckets;
  contents.descriptorSymbol = "kiln_model_descriptor_inference";
  for (autodiff::StepState &state : *lifted) {
    auto same = llvm::find_if(training, [&](const autodiff::StepState &t) {
      return t.name == state.name;
    });
    if (same == training.end())
      return error("--train: internal error: the inference entry's parameter '" + state.name +
                   "' is not the training step's");
    contents.sessionTensors.push_back(
        {state.input, state.output, {}, static_cast<int64_t>(same - training.begin())});
  }
  CompileOptions entryOptions = options;
  entryOptions.train.reset();
  entryOptions.extraOutputs.clear();
  entryOptions.stopAfter.reset();
  if (llvm::Error e = compileEntry(
          module, backend, target, entryOptions, contents, [](Phase) { return false; },
          [](size_t) {}))
    return e;
  step.inferenceObject = contents.outputPath;
  step.inferenceSymbol = contents.descriptorSymbol;
  return llvm::Error::success();
}

llvm::Expected<CompileSummary> compile(ModelSource &source, const CompileOptions &options) {
  auto backend = findBackend(options.target);
  if (!backend)
    return backend.takeError();
  auto target = (*backend)->targetDescription(options.targetOptions);
  if (!target)
    return target.takeError();
  auto step = [&](size_t i) {
    if (options.onStep)
      options.onStep(i);
  };
  CompileContext compileContext(source, *backend);
  step(0);
  auto loaded = loadModel(source, *compileContext.context);
  if (!loaded)
    return loaded.takeError();
  ModuleOp module = **loaded;
  bool stopped = false;
  auto stopHere = [&](Phase phase) {
    if (options.stopAfter != phase)
      return false;
    printModule(module, options.irOutput ? *options.irOutput : llvm::outs());
    stopped = true;
    return true;
  };

  // The artifact's names and hash come from the model as imported.
  ArtifactContents contents;
  contents.outputPath = options.outputPath;
  contents.target = *target;
  contents.maxBatch = options.maxBatch;
  contents.batchBuckets = options.batchBuckets;
  autodiff::RematSummary remat;
  llvm::SmallString<128> work;
  llvm::scope_exit removeWork([&] {
    if (!work.empty())
      llvm::sys::fs::remove_directories(work);
  });
  if (options.train) {
    // The inference entry first, from the model as imported; the step's
    // shapes are static and its batch fixed, so --max-batch and
    // --batch-buckets are the inference entry's.
    OwningOpRef<ModuleOp> inference = module.clone();
    auto built = autodiff::buildTrainingStep(module, *options.train);
    if (!built)
      return built.takeError();
    contents.maxBatch = 0;
    contents.batchBuckets.clear();
    if (!options.stopAfter) {
      if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-inference", work))
        return error("cannot create a temporary folder: " + ec.message());
      if (llvm::Error e = compileInferenceEntry(*inference, **backend, *target, options, *built,
                                                work, contents))
        return std::move(e);
    }
    for (autodiff::StepState &state : *built)
      contents.sessionTensors.push_back({state.input, state.output, std::move(state.initial)});
  }
  MemoryPlanSummary plan;
  if (llvm::Error e =
          compileEntry(module, **backend, *target, options, contents, stopHere, step, &plan,
                       &remat))
    return std::move(e);
  if (stopped)
    return CompileSummary{*target, "", ""};
  CompileSummary summary{*target, contents.contentHash, ""};
  summary.report =
      describeMemoryPlan(plan) + "\n" + (*backend)->codeSummary(module, contents) + "\n";
  llvm::append_range(summary.notes, (*backend)->compileNotes(module));
  auto kib = [](int64_t bytes) {
    std::string s;
    llvm::raw_string_ostream(s) << llvm::format("%.1f KiB", bytes / 1024.0);
    return s;
  };
  if (options.train) {
    summary.notes.push_back("training step: " + std::to_string(contents.sessionTensors.size()) +
                            " session-owned tensors; activations saved for the backward pass: " +
                            std::to_string(plan.savedBuffers) + " buffers, " +
                            kib(plan.savedBytes) + " of the " + kib(plan.arenaBytes) +
                            " arena; an inference entry");
    if (options.train->remat)
      summary.notes.push_back("--remat: " + std::to_string(remat.values) +
                              " forward values (" + kib(remat.bytes) +
                              ") recomputed in the backward pass instead of saved");
  }
  return summary;
}

llvm::Error importModel(ModelSource &source, Phase stopAfter, llvm::StringRef outputPath) {
  CompileContext compileContext(source, nullptr);
  auto loaded = loadModel(source, *compileContext.context);
  if (!loaded)
    return loaded.takeError();
  ModuleOp module = **loaded;
  CompileOptions options;
  if (llvm::Error e = runPhases(module, Phase::Import, stopAfter, options, source.path()))
    return e;
  std::string message;
  auto output = openOutputFile(outputPath, &message);
  if (!output)
    return error(message);
  if (outputPath.ends_with(".mlirbc")) {
    if (failed(writeBytecodeToFile(module, output->os())))
      return error("cannot write bytecode to '" + outputPath + "'");
  } else {
    // In a file, locations carry the model's node names (kernel reports),
    // so that compiling it gives the artifact the model gives; on stdout
    // the IR is for reading.
    OpPrintingFlags flags;
    if (outputPath != "-")
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    module.print(output->os(), flags);
    output->os() << "\n";
  }
  output->keep();
  return llvm::Error::success();
}

} // namespace kiln::driver
