//===- CpuBackend.cpp - the CPU target ------------------------------------===//
//
// The CPU `Backend`: oneDNN runs the convolutions and matmuls it can (with
// their epilogues as post-ops where that is faster), LLVM compiles the
// rest for the chosen processor, and the runtime's CPU device runs it on
// the process's OpenMP threads.
//
//===----------------------------------------------------------------------===//

#include "backends/cpu/CpuBackend.h"
#include "backends/common/StringCalls.h"
#include "backends/common/Descriptor.h"
#include "backends/common/EntryPoint.h"
#include "backends/common/HostCode.h"
#include "backends/common/LibraryClaims.h"
#include "backends/cpu/LibraryCalls.h"
#include "backends/cpu/Passes.h"
#include "backends/cpu/Pipeline.h"

#include "kiln/kiln_toolchain.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#include <cstdlib>
#include <optional>

using namespace mlir;

namespace kiln::cpu {
using namespace host;
namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The settings `kiln compile` passes (`--cpu`, `--conv-post-ops`,
/// `--conv-layout`).
struct CpuSettings {
  CpuTarget target;
  LibraryCallOptions calls;
};

/// Replaces the bytes of each library call's constant weights in
/// `constants` with the runtime's packing of them (kiln_toolchain.h) and
/// records the layout in the call. Weights that several calls share are
/// packed only when every call wants the same layout; a call oneDNN takes
/// plain, or cannot prepare here, keeps plain weights (the runtime packs
/// them when a session is created). `storage` owns the packed bytes.
static void prepackWeights(ArtifactContents &contents,
                           std::vector<artifact::ConstantBlob> &constants,
                           std::vector<std::string> &storage) {
  llvm::StringMap<size_t> blobOf;
  for (auto [i, blob] : llvm::enumerate(constants))
    blobOf[blob.symbol] = i;
  // symbol -> (layout, packed) of every call reading it; nullopt: keep plain.
  llvm::StringMap<std::optional<std::pair<std::string, std::string>>> packing;
  for (const LibraryCall &call : contents.libraryCalls) {
    auto found = blobOf.find(call.weightsSymbol);
    if (call.weightsSymbol.empty() || found == blobOf.end())
      continue;
    artifact::LibraryCallRecord record(call, constants[found->second].bytes.data());
    void *packed = nullptr, *layout = nullptr;
    size_t packedBytes = 0, layoutBytes = 0;
    std::optional<std::pair<std::string, std::string>> result;
    if (kiln_cpu_prepack_weights(&record.record, 0, &packed, &packedBytes, &layout,
                                 &layoutBytes) == KILN_OK &&
        packed)
      result.emplace(std::string(static_cast<char *>(layout), layoutBytes),
                     std::string(static_cast<char *>(packed), packedBytes));
    std::free(packed);
    std::free(layout);
    auto [entry, inserted] = packing.try_emplace(call.weightsSymbol, result);
    if (!inserted && entry->second != result)
      entry->second.reset();
  }
  storage.reserve(packing.size());
  for (LibraryCall &call : contents.libraryCalls) {
    auto entry = packing.find(call.weightsSymbol);
    if (call.weightsSymbol.empty() || entry == packing.end() || !entry->second)
      continue;
    call.weightsLayout = entry->second->first;
  }
  for (auto &[symbol, result] : packing) {
    if (!result)
      continue;
    storage.push_back(std::move(result->second)); // not a second copy of every weight
    constants[blobOf[symbol]].bytes = llvm::ArrayRef<char>(storage.back().data(), storage.back().size());
  }
}

/// The C source of the artifact's entry point and descriptor (device
/// CPU, needing `requiredFeatures`).
static std::string artifactSource(const ArtifactContents &contents,
                                  llvm::StringRef requiredFeatures) {
  artifact::DescriptorFields fields;
  fields.device = KILN_DEVICE_CPU;
  fields.requiredFeatures = requiredFeatures.str();
  fields.runFunction = "run";
  return artifact::entryPointSource(contents) + artifact::descriptorSource(contents, fields);
}

class CpuBackend : public Backend {
public:
  llvm::StringRef name() const override { return "cpu"; }
  llvm::StringRef description() const override {
    return "this machine's processor family through LLVM; convolutions and matmuls in oneDNN";
  }
  std::vector<std::pair<std::string, std::string>> settingsHelp() const override {
    return {{"cpu", "the processor: host (default) or an LLVM CPU name (x86-64-v3, ...)"},
            {"conv-post-ops", "1 (default): convolution epilogues as oneDNN post-ops; 0: "
                              "generated after the convolution"},
            {"conv-layout", "nhwc (default): activations between oneDNN convolutions stay "
                            "channels-last; nchw: every convolution reorders"},
            {"prepack", "1 (default): constant weights stored in oneDNN's layout for this "
                        "host (--cpu=host only); 0: plain, packed when a session starts"}};
  }

  llvm::Expected<CpuSettings> settings(const TargetOptions &options) const {
    CpuSettings settings;
    for (const auto &entry : options.settings) {
      llvm::StringRef key = entry.getKey(), value = entry.getValue();
      if (key == "cpu") {
        settings.target.cpu = value.str();
      } else if (key == "conv-post-ops") {
        settings.calls.convolutionPostOps = value != "0";
      } else if (key == "prepack") {
        settings.calls.prepackWeights = value != "0";
      } else if (key == "conv-layout") {
        if (value != "nhwc" && value != "nchw")
          return error("the cpu target's conv-layout is nhwc or nchw, not '" + value + "'");
        settings.calls.channelsLast = value == "nhwc";
      } else {
        return unknownSetting(key);
      }
    }
    return settings;
  }

  /// The target machine `options` name.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
  targetMachine(const TargetOptions &options) const {
    auto parsed = settings(options);
    if (!parsed)
      return parsed.takeError();
    return createTargetMachine(parsed->target);
  }

  bool runsStrings() const override { return true; }

  void registerDialects(DialectRegistry &registry) const override {
    library::registerLibraryCallBufferization(registry);
    strings::registerStringBufferization(registry);
    registerTranslations(registry);
  }

  llvm::Expected<std::string> targetDescription(const TargetOptions &options) const override {
    auto machine = targetMachine(options);
    if (!machine)
      return machine.takeError();
    return describeTarget(**machine);
  }

  std::vector<LibraryCall> claimLibraryCalls(ModuleOp module,
                                             const TargetOptions &options) const override {
    auto parsed = settings(options);
    if (!parsed) {
      llvm::consumeError(parsed.takeError()); // targetDescription reported it
      return {};
    }
    return assignLibraryCalls(module, parsed->calls);
  }

  std::string libraryCallLabel(const LibraryCall &call) const override {
    return "oneDNN " + call.summary();
  }

  void buildCodegenPipeline(OpPassManager &pm, const TargetOptions &) const override {
    buildCpuCodegenPipeline(pm, CpuCodegenOptions{});
  }

  std::string codeSummary(ModuleOp module, const ArtifactContents &contents) const override {
    int64_t chunks = 0;
    module.walk([&](Operation *op) {
      auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (name && name.getValue().starts_with(kChunkPrefix) &&
          !name.getValue().ends_with("_entry"))
        ++chunks;
    });
    return "kernels: " + std::to_string(contents.libraryCalls.size()) +
           " library calls (oneDNN), " + std::to_string(chunks) +
           " generated loop nests on the runtime's threads";
  }

  llvm::Error emitArtifact(ModuleOp module, const ArtifactContents &contents,
                           const TargetOptions &options) const override {
    auto machine = targetMachine(options);
    if (!machine)
      return machine.takeError();
    // The constant weights kiln-export-library-weights named.
    ArtifactContents withWeights = contents;
    if (auto weights = module->getAttrOfType<DictionaryAttr>(kLibraryWeightsAttr)) {
      for (NamedAttribute entry : weights) {
        unsigned id;
        auto symbol = dyn_cast<FlatSymbolRefAttr>(entry.getValue());
        if (entry.getName().getValue().getAsInteger(10, id) || !symbol ||
            id >= withWeights.libraryCalls.size())
          return error("malformed " + kLibraryWeightsAttr + " attribute");
        // Operand 1 is a weight only for the kinds that have one.
        LibraryKind kind = withWeights.libraryCalls[id].kind;
        if (kind == LibraryKind::Convolution || kind == LibraryKind::Matmul)
          withWeights.libraryCalls[id].weightsSymbol = symbol.getValue().str();
      }
    }
    std::vector<artifact::ConstantBlob> constants = extractConstants(module);
    // For this host, constant weights go into the artifact already in the
    // layout oneDNN picks (what a session would otherwise pack).
    std::vector<std::string> packedStorage;
    auto parsed = settings(options);
    if (parsed && parsed->target.cpu == "host" && parsed->calls.prepackWeights)
      prepackWeights(withWeights, constants, packedStorage);
    StackUse stack;
    measureRowTemporaries(module, stack);
    auto object = emitObject(module, **machine, stack);
    if (!object)
      return object.takeError();
    withWeights.stackBytes = stack.total();
    return artifact::writeArtifact(
        *object, artifactSource(withWeights, requiredFeatures(**machine)), withWeights, constants);
  }
};

} // namespace

void registerCpuBackend() { registerBackend(std::make_unique<CpuBackend>()); }

} // namespace kiln::cpu
