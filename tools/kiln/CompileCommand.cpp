//===- CompileCommand.cpp - `kiln compile model.onnx -o model.so` ---------===//
//
// ONNX -> kiln (import) -> graph -> linalg -> LLVM dialect -> object code ->
// artifact (.so / .a / .o and .h). `--compile-to=PHASE` prints the IR after
// a phase instead.
//
//===----------------------------------------------------------------------===//

#include "backends/cpu/Artifact.h"
#include "backends/cpu/CpuCodegen.h"
#include "backends/cpu/LibraryCalls.h"
#include "compiler/Pipelines/Pipelines.h"
#include "frontends/onnx/Importer.h"
#include "frontends/onnx/TensorData.h"
#include "kiln/kiln_model_abi.h"
#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kiln::onnx_frontend;

namespace kiln::cli {

static const char *kCompileUsage =
    "usage: kiln compile <model.onnx> -o <model.so|model.a|model.o> [options]\n\n"
    "Compiles the model for this CPU and writes the artifact and its C header\n"
    "(same name, .h).\n"
    "  --cpu=NAME           target CPU: host (default), x86-64, x86-64-v3, ...\n"
    "  --no-libraries       generate every convolution instead of calling oneDNN\n"
    "  --report             print the memory plan and the kernels' summary\n"
    "  --freeze-input N=F   replace graph input N by the tensor in F (.pb)\n"
    "  --dynamic-batch      make dim 0 of every graph input dynamic\n"
    "  --max-batch=N        plan memory for batches up to N (dim 0 of dynamic\n"
    "                       inputs): buffers that grow with the batch join the\n"
    "                       arena; the runtime refuses larger batches\n"
    "  --conv-post-ops      run convolution epilogues as oneDNN post-ops (slower\n"
    "                       with oneDNN 2.6's plain layouts; for comparison)\n"
    "  --no-fuse            skip fusion (kiln-fuse and the linalg phase's\n"
    "                       elementwise fusion): every op its own kernel\n"
    "  --compile-to=PHASE   print the IR after PHASE (import, graph, fuse, linalg,\n"
    "                       llvm) instead of writing an artifact\n"
    "  --verify=DIR         then run the artifact on DIR/input_*.pb (or .npy)\n"
    "                       and compare with DIR/output_*.pb; fail beyond the\n"
    "                       tolerance (--atol, --rtol as for kiln run)\n";

namespace {
/// What kiln-plan-memory recorded on a function, plus the kernel counts.
struct MemoryPlanSummary {
  int64_t arenaBytes = 0, lowerBound = 0, naiveBytes = 0, planned = 0, unplanned = 0;
  int64_t inPlace = 0, bounded = 0, maxBatch = 0;
  int64_t parallelChunks = 0;
  int64_t positions = 0;
  llvm::SmallVector<int64_t> buffers; ///< (offset, size, first, last) each
};
} // namespace

/// The ONNX node names a location carries (a fused location: all of them).
static void namesOf(Location loc, std::vector<std::string> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string n = name.getName().str();
    if (!llvm::is_contained(names, n))
      names.push_back(n);
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      namesOf(inner, names);
  }
}

/// The kernels of the entry point after the linalg phase: each library
/// call and each linalg op (a loop nest), with the model's nodes in it.
static llvm::json::Array listKernels(ModuleOp module,
                                     const std::vector<cpu::LibraryCall> &calls) {
  llvm::json::Array kernels;
  auto entry = module.lookupSymbol<func::FuncOp>("kiln_main");
  if (!entry)
    return kernels;
  for (Operation &op : entry.getBody().front()) {
    std::string kind;
    if (auto call = dyn_cast<LibraryCallOp>(op)) {
      const cpu::LibraryCall &c = calls.at(call.getId());
      static const char *activations[] = {"",      "+relu", "+clip",     "+sigmoid",
                                          "+tanh", "+gelu", "+gelu_tanh"};
      kind = std::string("oneDNN ") + (c.kind == KILN_LIBRARY_CONV ? "conv" : "matmul") +
             (c.hasBias ? "+bias" : "") + (c.hasResidual ? "+residual" : "") +
             activations[c.activation];
    } else if (isa<linalg::LinalgOp>(op)) {
      kind = "loop nest (" + op.getName().getStringRef().str() + ")";
    } else if (isa<scf::ForallOp>(op)) {
      kind = "row loop (reduction kernel)";
    } else {
      continue;
    }
    std::vector<std::string> names;
    namesOf(op.getLoc(), names);
    llvm::json::Array ops;
    for (const std::string &n : names)
      ops.push_back(n);
    kernels.push_back(llvm::json::Object{{"kind", kind}, {"ops", std::move(ops)}});
  }
  return kernels;
}

static MemoryPlanSummary readMemoryPlan(ModuleOp module, llvm::StringRef entry) {
  MemoryPlanSummary summary;
  module.walk([&](Operation *op) {
    auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!name)
      return;
    if (name.getValue().starts_with("__kiln_chunk_") && !name.getValue().ends_with("_entry"))
      ++summary.parallelChunks;
    auto plan = op->getAttrOfType<DictionaryAttr>("kiln.memory_plan");
    if (name.getValue() != entry || !plan)
      return;
    auto get = [&](llvm::StringRef key) {
      auto v = plan.getAs<IntegerAttr>(key);
      return v ? v.getInt() : 0;
    };
    summary.arenaBytes = get("arena_bytes");
    summary.lowerBound = get("lower_bound");
    summary.naiveBytes = get("naive_bytes");
    summary.planned = get("planned");
    summary.unplanned = get("unplanned");
    summary.inPlace = get("in_place");
    summary.bounded = get("bounded");
    summary.maxBatch = get("max_batch");
    summary.positions = get("positions");
    if (auto buffers = plan.getAs<DenseI64ArrayAttr>("buffers"))
      summary.buffers.assign(buffers.asArrayRef().begin(), buffers.asArrayRef().end());
  });
  return summary;
}

/// What `kiln inspect` shows, as JSON (docs/UserGuide.md).
static std::string buildReport(const MemoryPlanSummary &plan, llvm::json::Array kernels) {
  llvm::json::Array buffers;
  for (size_t i = 0; i + 4 <= plan.buffers.size(); i += 4)
    buffers.push_back(llvm::json::Array{plan.buffers[i], plan.buffers[i + 1],
                                        plan.buffers[i + 2], plan.buffers[i + 3]});
  llvm::json::Object report{{"arena_bytes", plan.arenaBytes},
                            {"lower_bound", plan.lowerBound},
                            {"naive_bytes", plan.naiveBytes},
                            {"planned", plan.planned},
                            {"unplanned", plan.unplanned},
                            {"in_place", plan.inPlace},
                            {"bounded", plan.bounded},
                            {"max_batch", plan.maxBatch},
                            {"positions", plan.positions},
                            {"buffers", std::move(buffers)},
                            {"kernels", std::move(kernels)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(report));
  return text;
}

static void printReport(const MemoryPlanSummary &plan, const cpu::ArtifactInfo &info) {
  auto kib = [](int64_t bytes) { return llvm::format("%.1f KiB", bytes / 1024.0); };
  llvm::outs() << "memory: arena " << kib(plan.arenaBytes) << " for " << plan.planned
               << " buffers (liveness lower bound " << kib(plan.lowerBound)
               << ", naive sum " << kib(plan.naiveBytes) << "); " << plan.inPlace
               << " written in place of a dead operand";
  if (plan.maxBatch)
    llvm::outs() << "; " << plan.bounded << " with dynamic dims sized for batch "
                 << plan.maxBatch;
  llvm::outs() << "; " << plan.unplanned
               << " buffers with unbounded dynamic dims or escaping come from the pool\n"
               << "kernels: " << info.libraryCalls.size() << " library calls (oneDNN), "
               << plan.parallelChunks << " generated loop nests on the runtime's threads\n";
}

static int32_t dtypeOf(Type t) {
  if (t.isF32()) return KILN_DTYPE_F32;
  if (t.isF64()) return KILN_DTYPE_F64;
  if (t.isF16()) return KILN_DTYPE_F16;
  if (t.isBF16()) return KILN_DTYPE_BF16;
  if (t.isInteger(1)) return KILN_DTYPE_BOOL;
  if (t.isUnsignedInteger(8)) return KILN_DTYPE_U8;
  if (t.isUnsignedInteger(16)) return KILN_DTYPE_U16;
  if (t.isUnsignedInteger(32)) return KILN_DTYPE_U32;
  if (t.isUnsignedInteger(64)) return KILN_DTYPE_U64;
  if (t.isInteger(8)) return KILN_DTYPE_I8;
  if (t.isInteger(16)) return KILN_DTYPE_I16;
  if (t.isInteger(32)) return KILN_DTYPE_I32;
  if (t.isInteger(64)) return KILN_DTYPE_I64;
  return 0;
}

static cpu::ArtifactTensor describe(Type type, Attribute name, size_t index,
                                    const char *what) {
  auto ranked = cast<RankedTensorType>(type);
  cpu::ArtifactTensor t;
  auto str = dyn_cast_or_null<StringAttr>(name);
  t.name = str ? str.str() : std::string(what) + std::to_string(index);
  t.dtype = dtypeOf(ranked.getElementType());
  for (int64_t d : ranked.getShape())
    t.dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return t;
}

int runCompile(llvm::ArrayRef<llvm::StringRef> args) {
  std::string modelPath, outputPath, cpuName = "host";
  bool noLibraries = false;
  bool report = false;
  bool dynamicBatch = false;
  bool noFuse = false;
  int64_t maxBatch = 0;
  bool convPostOps = false;
  llvm::json::Array kernels;
  std::string verifyDir, atol, rtol;
  std::optional<Phase> stopAfter;
  std::vector<std::pair<std::string, std::string>> frozen;
  for (ArgumentCursor cursor(args); !cursor.done(); cursor.next()) {
    llvm::StringRef arg = cursor.current();
    auto value = [&](llvm::StringRef flag) { return cursor.value(flag); };
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kCompileUsage;
      return 0;
    }
    if (auto v = value("--compile-to")) {
      stopAfter = parsePhase(*v);
      if (!stopAfter) {
        llvm::errs() << "kiln compile: unknown phase '" << *v
                     << "' (import, graph, linalg, llvm)\n";
        return 2;
      }
    } else if (auto v = value("--verify")) {
      verifyDir = *v;
    } else if (auto v = value("--atol")) {
      atol = *v;
    } else if (auto v = value("--rtol")) {
      rtol = *v;
    } else if (arg == "--no-libraries") {
      noLibraries = true;
    } else if (arg == "--conv-post-ops") {
      convPostOps = true;
    } else if (arg == "--no-fuse") {
      noFuse = true;
    } else if (arg == "--dynamic-batch") {
      dynamicBatch = true;
    } else if (auto v = value("--max-batch")) {
      if (llvm::StringRef(*v).getAsInteger(10, maxBatch) || maxBatch <= 0) {
        llvm::errs() << "kiln compile: --max-batch takes a positive integer, got '" << *v
                     << "'\n";
        return 2;
      }
    } else if (arg == "--report") {
      report = true;
    } else if (auto v = value("--cpu")) {
      cpuName = *v;
    } else if (auto v = value("--freeze-input")) {
      size_t eq = v->find('=');
      if (eq == std::string::npos || eq == 0) {
        llvm::errs() << "kiln compile: --freeze-input takes NAME=FILE\n";
        return 2;
      }
      frozen.push_back({v->substr(0, eq), v->substr(eq + 1)});
    } else if (auto v = value("-o")) {
      outputPath = *v;
    } else if (!arg.starts_with("-") && modelPath.empty()) {
      modelPath = arg.str();
    } else {
      llvm::errs() << "kiln compile: unexpected argument '" << arg << "'\n\n"
                   << kCompileUsage;
      return 2;
    }
  }
  if (modelPath.empty() || (outputPath.empty() && !stopAfter)) {
    llvm::errs() << kCompileUsage;
    return 2;
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  cpu::registerLibraryCallBufferization(registry);
  MLIRContext context(registry);
  cpu::registerTranslations(context);
  ImportOptions options;
  options.dynamicBatch = dynamicBatch;
  loadImporterDialects(context);
  for (const auto &[name, file] : frozen) {
    auto attr = readTensorFile(&context, file);
    if (!attr) {
      llvm::errs() << "kiln compile: --freeze-input " << name << ": "
                   << llvm::toString(attr.takeError()) << "\n";
      return 1;
    }
    options.frozenInputs[name] = *attr;
  }
  ImportResult imported = importOnnxModel(context, modelPath, options);
  if (!imported.module) {
    llvm::errs() << "kiln compile: " << modelPath << " cannot be imported:\n";
    printImportIssues(llvm::errs(), imported);
    return 1;
  }
  ModuleOp module = *imported.module;
  auto entry = module.lookupSymbol<func::FuncOp>("main");
  cpu::ArtifactInfo info;
  FunctionType signature = entry.getFunctionType();
  for (size_t i = 0; i < signature.getNumInputs(); ++i)
    info.inputs.push_back(describe(signature.getInput(i), entry.getArgAttr(i, "kiln.name"), i, "input"));
  for (size_t i = 0; i < signature.getNumResults(); ++i)
    info.outputs.push_back(describe(signature.getResult(i), entry.getResultAttr(i, "kiln.name"), i, "output"));
  entry.setSymName("kiln_main");
  entry->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));

  if (!stopAfter || *stopAfter != Phase::Import) {
    // The graph and fuse phases first, so library calls see exact shapes
    // and whole kernels.
    PassManager graph(&context);
    Phase first = stopAfter && *stopAfter < Phase::Fuse ? *stopAfter : Phase::Fuse;
    if (noFuse && first == Phase::Fuse)
      first = Phase::Graph;
    buildPipeline(graph, PipelineOptions{first});
    if (failed(graph.run(module))) {
      llvm::errs() << "kiln compile: compiling " << modelPath << " failed (see above)\n";
      return 1;
    }
    if (!noLibraries)
      info.libraryCalls = cpu::assignLibraryCalls(module, {convPostOps});
    // linalg, then the kernels as they stand, then llvm.
    Phase last = stopAfter.value_or(Phase::LLVM);
    for (auto [from, to] : {std::pair{Phase::Fuse, Phase::Linalg},
                            std::pair{Phase::Linalg, Phase::LLVM}}) {
      if (last <= from)
        break;
      PassManager pm(&context);
      PipelineOptions pipeline;
      pipeline.startAfter = from;
      pipeline.stopAfter = std::min(to, last);
      pipeline.genericAllocation = true;
      pipeline.parallelChunks = true;
      pipeline.maxBatch = maxBatch;
      pipeline.fuse = !noFuse;
      buildPipeline(pm, pipeline);
      if (failed(pm.run(module))) {
        llvm::errs() << "kiln compile: compiling " << modelPath << " failed (see above)\n";
        return 1;
      }
      if (to == Phase::Linalg)
        kernels = listKernels(module, info.libraryCalls);
    }
  }
  if (stopAfter) {
    module.print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }

  // The entry point's memory plan (kiln-plan-memory) sizes the arena.
  MemoryPlanSummary plan = readMemoryPlan(module, "kiln_main");
  info.arenaBytes = plan.arenaBytes;
  info.maxBatch = maxBatch;
  info.report = buildReport(plan, std::move(kernels));
  auto object = cpu::emitObject(module, cpu::CpuTarget{cpuName});
  if (!object) {
    llvm::errs() << "kiln compile: " << llvm::toString(object.takeError()) << "\n";
    return 1;
  }
  // The content hash covers the model's bytes, the flags and the frozen
  // inputs' bytes: the same inputs give the same hash and artifact.
  llvm::SHA256 hash;
  auto addFile = [&](llvm::StringRef path) {
    if (auto buffer = llvm::MemoryBuffer::getFile(path, false, false))
      hash.update((*buffer)->getBuffer());
  };
  addFile(modelPath);
  hash.update("kiln-0.1 cpu=" + cpuName + " target=" + object->target +
              (noLibraries ? " no-libraries" : "") + (dynamicBatch ? " dynamic-batch" : "") + (noFuse ? " no-fuse" : "") +
              (maxBatch ? " max-batch=" + std::to_string(maxBatch) : "") +
              (convPostOps ? " conv-post-ops" : ""));
  for (const auto &[name, file] : frozen) {
    hash.update("freeze " + name);
    addFile(file);
  }
  info.contentHash = llvm::toHex(hash.final(), /*LowerCase=*/true);
  info.target = object->target;
  info.entrySymbol = "_mlir_ciface_kiln_main";
  if (llvm::Error e = cpu::writeArtifact(outputPath, object->bytes, info)) {
    llvm::errs() << "kiln compile: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  llvm::outs() << "compiled " << modelPath << " -> " << outputPath << " (target "
               << info.target << ", hash " << info.contentHash.substr(0, 16) << ")\n";
  if (report)
    printReport(plan, info);
  if (verifyDir.empty())
    return 0;
  // --verify: run the artifact on the data set, matching files to tensors
  // by position (input_0 is the first input).
  std::vector<std::string> runArgs = {outputPath};
  for (const char *kind : {"input", "output"}) {
    for (size_t i = 0;; ++i) {
      std::string base = verifyDir + "/" + kind + "_" + std::to_string(i);
      std::string file;
      for (const char *ext : {".pb", ".npy"})
        if (llvm::sys::fs::exists(base + ext))
          file = base + ext;
      if (file.empty())
        break;
      runArgs.push_back(std::string(kind) == "input" ? "--input" : "--expected");
      runArgs.push_back("@" + std::to_string(i) + "=" + file);
    }
  }
  if (!atol.empty())
    runArgs.insert(runArgs.end(), {"--atol", atol});
  if (!rtol.empty())
    runArgs.insert(runArgs.end(), {"--rtol", rtol});
  std::vector<llvm::StringRef> refs(runArgs.begin(), runArgs.end());
  int rc = runRun(refs);
  if (rc != 0)
    llvm::errs() << "kiln compile: --verify failed for " << outputPath << "\n";
  return rc;
}

} // namespace kiln::cli
