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
#include "llvm/ADT/StringExtras.h"
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
  const std::string path = source.path();
  Phase last = options.stopAfter.value_or(Phase::Codegen);
  auto stopHere = [&](Phase phase) -> std::optional<CompileSummary> {
    if (options.stopAfter != phase)
      return std::nullopt;
    printModule(module, options.irOutput ? *options.irOutput : llvm::outs());
    return CompileSummary{*target, "", ""};
  };

  // The artifact's names and hash come from the model as imported.
  ArtifactContents contents;
  contents.outputPath = options.outputPath;
  contents.target = *target;
  contents.maxBatch = options.maxBatch;
  contents.batchBuckets = options.batchBuckets;
  std::vector<autodiff::StepState> states;
  if (options.train) {
    auto built = autodiff::buildTrainingStep(module, *options.train);
    if (!built)
      return built.takeError();
    states = std::move(*built);
  }
  auto entry = module.lookupSymbol<func::FuncOp>("main");
  if (llvm::Error e = addNodeOutputs(entry, options.extraOutputs))
    return std::move(e);
  contents.inputs = describeTensors(entry, false);
  contents.outputs = describeTensors(entry, true);
  for (autodiff::StepState &state : states)
    contents.sessionTensors.push_back({state.input, state.output, std::move(state.initial)});
  if (!options.batchBuckets.empty()) {
    if (llvm::none_of(contents.inputs, [](const ModelTensor &t) {
          return !t.dims.empty() && t.dims[0] < 0;
        }))
      return error("--batch-buckets needs an input whose dim 0 (the batch) is dynamic; " +
                   options.outputPath + "'s model has none (import with --dynamic-batch)");
    for (int64_t b : options.batchBuckets)
      if (options.maxBatch && b > options.maxBatch)
        return error("batch bucket " + std::to_string(b) + " is above --max-batch=" +
                     std::to_string(options.maxBatch));
  }
  if (!options.stopAfter)
    contents.contentHash = contentHash(module, options, *target);
  contents.entryFunction = "kiln_main";
  entry.setSymName(contents.entryFunction);
  entry->setAttr("llvm.emit_c_interface", UnitAttr::get(module.getContext()));
  if (auto done = stopHere(Phase::Import))
    return *done;

  // graph, fuse; then the backend claims library calls on whole kernels
  // with exact shapes.
  Phase fused = options.fuse ? Phase::Fuse : Phase::Graph;
  step(1);
  if (llvm::Error e = runPhases(module, Phase::Import, std::min(fused, last), options, path))
    return std::move(e);
  if (auto done = stopHere(Phase::Graph))
    return *done;
  if (auto done = stopHere(Phase::Fuse))
    return *done;
  step(2);
  if (options.targetOptions.libraries)
    contents.libraryCalls = (*backend)->claimLibraryCalls(module, options.targetOptions);
  step(3);

  // linalg (its kernels are what the report lists), then plan.
  if (llvm::Error e = runPhases(module, Phase::Fuse, std::min(Phase::Linalg, last), options, path))
    return std::move(e);
  llvm::json::Array kernels =
      listKernels(module, contents.entryFunction, **backend, contents.libraryCalls,
                  /*mark=*/!options.stopAfter.has_value());
  if (auto done = stopHere(Phase::Linalg))
    return *done;
  step(4);
  if (llvm::Error e = runPhases(module, Phase::Linalg, std::min(Phase::Plan, last), options, path))
    return std::move(e);
  if (auto done = stopHere(Phase::Plan))
    return *done;

  // The backend's code generation and artifact.
  step(5);
  PassManager codegen(module.getContext());
  (*backend)->buildCodegenPipeline(codegen, options.targetOptions);
  if (failed(codegen.run(module)))
    return error("compiling " + path + " failed (see above)");
  if (auto done = stopHere(Phase::Codegen))
    return *done;
  MemoryPlanSummary plan = readMemoryPlan(module, contents.entryFunction);
  contents.arenaBytes = plan.arenaBytes;
  contents.report = buildReport(plan, std::move(kernels));
  step(6);
  if (llvm::Error e = (*backend)->emitArtifact(module, contents, options.targetOptions))
    return std::move(e);
  CompileSummary summary{*target, contents.contentHash, ""};
  summary.report =
      describeMemoryPlan(plan) + "\n" + (*backend)->codeSummary(module, contents) + "\n";
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
