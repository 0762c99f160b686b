//===- CudaBackend.cpp - the CUDA target ----------------------------------===//
//
// The CUDA `Backend`: every loop nest becomes a kernel (threads mapped by
// kiln-gpu-map-loops), lowered through MLIR's NVVM path to PTX and by
// ptxas to a cubin for each `--gpu`; the host code (allocation from the
// session's device pool, the launches) is compiled for x86-64 as the CPU
// backend compiles its code. The runtime's CUDA device loads the cubin
// that fits the GPU (or JIT-compiles the PTX), launches on the session's
// stream, and captures a run into a CUDA Graph per batch bucket.
//
// Matmuls run in cuBLASLt, convolutions in cuDNN (backends/cuda/
// LibraryCalls.cpp). A training step (--train) compiles like any model,
// its inference entry too; its session-owned tensors stay on the host.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/CudaBackend.h"

#include "backends/common/Descriptor.h"
#include "backends/common/EntryPoint.h"
#include "backends/common/HostCode.h"
#include "backends/common/LibraryClaims.h"
#include "backends/common/StringCalls.h"
#include "backends/cuda/CudaArtifact.h"
#include "backends/cuda/LibraryCalls.h"
#include "backends/cuda/Passes.h"
#include "backends/cuda/Pipeline.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::cuda {
namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The GPUs the code is for: sm_XY, X.Y >= 7.0 (what LLVM's NVPTX and the
/// PTX version Kiln emits cover).
llvm::Expected<std::vector<std::string>> parseChips(llvm::StringRef list) {
  std::vector<std::string> chips;
  llvm::SmallVector<llvm::StringRef> parts;
  list.split(parts, ',', -1, false);
  for (llvm::StringRef part : parts) {
    part = part.trim();
    llvm::StringRef digits = part;
    unsigned arch = 0;
    if (digits.consume_front("sm_") && (digits.ends_with("a") || digits.ends_with("f")) &&
        !digits.drop_back().getAsInteger(10, arch) && arch >= 70 && arch <= 121)
      // sm_90a, sm_100f: code for one architecture (or family) only, for
      // instructions Kiln's kernels do not use.
      return error("--gpu=" + part + ": architecture-specific targets are not supported; sm_" +
                   std::to_string(arch) + " runs on the same GPUs (and its PTX on later ones)");
    digits = part;
    if (!digits.consume_front("sm_") || digits.getAsInteger(10, arch) || arch < 70 || arch > 121)
      return error("unknown GPU '" + part +
                   "' (--gpu takes sm_70 .. sm_121, e.g. sm_80 for A100, sm_90 for H100/H200)");
    if (llvm::find(chips, part.str()) == chips.end())
      chips.push_back(part.str());
  }
  if (chips.empty())
    return error("--gpu names no GPU");
  return chips;
}

class CudaBackend : public Backend {
public:
  llvm::StringRef name() const override { return "cuda"; }
  llvm::StringRef description() const override {
    return "NVIDIA GPUs: generated kernels as PTX and cubins (ptxas), matmuls in cuBLASLt, "
           "convolutions in cuDNN, CUDA Graphs at run time";
  }
  std::vector<std::pair<std::string, std::string>> settingsHelp() const override {
    return {{"gpu", "the GPUs, comma-separated (default sm_80,sm_90): a cubin each, and PTX "
                    "of the newest for later GPUs"},
            {"block-size", "threads a block of the generated kernels (default 256)"},
            {"emulate", "1: no GPU code; the loop nests as mapped onto blocks and threads, "
                        "compiled for this CPU and run sequentially (a CPU artifact, to check "
                        "the mapping; no library calls)"},
            {"allow-nondeterministic",
             "1: the runtime may pick cuDNN algorithms whose results vary from run to run "
             "(default 0: deterministic ones only)"}};
  }

  llvm::Expected<CudaCodegenOptions> settings(const TargetOptions &options) const {
    CudaCodegenOptions settings;
    settings.toolkitPath = findToolkit();
    for (const auto &entry : options.settings) {
      llvm::StringRef key = entry.getKey(), value = entry.getValue();
      if (key == "gpu") {
        auto chips = parseChips(value);
        if (!chips)
          return chips.takeError();
        settings.chips = *chips;
      } else if (key == "emulate") {
        settings.emulate = value != "0";
      } else if (key == "allow-nondeterministic") {
        if (value != "0" && value != "1")
          return error("the cuda target's allow-nondeterministic is 0 or 1, not '" + value + "'");
        settings.allowNondeterministic = value == "1";
      } else if (key == "block-size") {
        if (value.getAsInteger(10, settings.blockSize) || settings.blockSize < 32 ||
            settings.blockSize > 1024 || settings.blockSize % 32 != 0)
          return error("the cuda target's block-size is a multiple of 32 in [32, 1024], not '" +
                       value + "'");
      } else {
        return unknownSetting(key);
      }
    }
    return settings;
  }

  void registerDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
    library::registerLibraryCallBufferization(registry);
    // String operations: calls of the entry point's C, which the host runs
    // on copies of their device buffers (kiln-gpu-map-loops' host calls).
    strings::registerStringBufferization(registry);
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
    // What convert-gpu-to-nvvm lowers through each dialect's interface.
    arith::registerConvertArithToLLVMInterface(registry);
    cf::registerConvertControlFlowToLLVMInterface(registry);
    registerConvertFuncToLLVMInterface(registry);
    index::registerConvertIndexToLLVMInterface(registry);
    registerConvertMathToLLVMInterface(registry);
    registerConvertMemRefToLLVMInterface(registry);
    registerConvertNVVMToLLVMInterface(registry);
    ub::registerConvertUBToLLVMInterface(registry);
    // LLVM IR of the kernels (PTX) and of the host code.
    registerGPUDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
    host::registerTranslations(registry);
  }

  llvm::Expected<std::string> targetDescription(const TargetOptions &options) const override {
    auto parsed = settings(options);
    if (!parsed)
      return parsed.takeError();
    if (parsed->emulate)
      return "x86_64 x86-64: CUDA loop nests emulated (block " +
             std::to_string(parsed->blockSize) + ")";
    return "nvptx64-nvidia-cuda " + llvm::join(parsed->chips, ",") + " block " +
           std::to_string(parsed->blockSize) + " (host x86-64)" +
           (parsed->allowNondeterministic ? ", nondeterministic algorithms allowed" : "");
  }

  std::vector<LibraryCall> claimLibraryCalls(ModuleOp module,
                                             const TargetOptions &options) const override {
    auto parsed = settings(options);
    if (!parsed) {
      llvm::consumeError(parsed.takeError()); // targetDescription reported it
      return {};
    }
    if (parsed->emulate) {
      // The CPU runs every loop nest as the GPU would, on the graph the
      // GPU's code has.
      cuda::chainConcats(module);
      return {};
    }
    return cuda::claimLibraryCalls(module);
  }

  std::string libraryCallLabel(const LibraryCall &call) const override {
    return (call.kind == LibraryKind::Matmul ? "cuBLASLt " : "cuDNN ") + call.summary();
  }

  void buildCodegenPipeline(OpPassManager &pm, const TargetOptions &options) const override {
    auto parsed = settings(options);
    if (!parsed) {
      llvm::consumeError(parsed.takeError()); // targetDescription reported it
      buildCudaCodegenPipeline(pm, CudaCodegenOptions{});
      return;
    }
    buildCudaCodegenPipeline(pm, *parsed);
  }

  std::string codeSummary(ModuleOp module, const ArtifactContents &contents) const override {
    if (!module->hasAttr(kKernelsAttr))
      return "loop nests mapped onto blocks and threads, emulated on the CPU";
    auto kernels = module->getAttrOfType<ArrayAttr>(kKernelsAttr);
    auto launches = module->getAttrOfType<ArrayAttr>(kLaunchesAttr);
    auto ptx = module->getAttrOfType<DictionaryAttr>(kPtxAttr);
    std::string chips;
    if (ptx)
      for (NamedAttribute entry : ptx)
        chips += (chips.empty() ? "" : ",") + entry.getName().str();
    std::string summary =
        "kernels: " + std::to_string(contents.libraryCalls.size()) +
        " library calls (cuBLASLt, cuDNN), ";
    if (!kernels || kernels.empty())
      return summary + "no generated CUDA kernel";
    return summary + std::to_string(kernels.size()) + " generated CUDA kernels (" +
           std::to_string(launches ? launches.size() : 0) + " launches a run) for " + chips;
  }

  bool runsStrings() const override { return true; }

  std::vector<std::string> compileNotes(ModuleOp module) const override {
    if (!module->hasAttr(kKernelsAttr))
      return {}; // (emulated: the reads are copies on the CPU)
    std::vector<std::string> notes;
    auto reads = module->getAttrOfType<ArrayAttr>(kDeviceReadsAttr);
    if (reads && !reads.empty())
      notes.push_back(
          "note: the host reads " + std::to_string(reads.size()) +
          " value(s) back from the GPU (sizes, shapes or pads decided at run time, given "
          "as inputs or computed): each run waits for them and is not captured into a "
          "CUDA Graph (--constant-shapes with --freeze-input makes those given as inputs "
          "constants)");
    auto calls = module->getAttrOfType<ArrayAttr>(kHostCallsAttr);
    if (calls && !calls.empty())
      notes.push_back("note: the host runs " + std::to_string(calls.size()) +
                      " string operation(s) on copies of their GPU buffers: each run waits "
                      "for them and is not captured into a CUDA Graph");
    return notes;
  }

  llvm::Error emitArtifact(ModuleOp module, const ArtifactContents &contents,
                           const TargetOptions &options) const override {
    auto parsed = settings(options);
    if (!parsed)
      return parsed.takeError();
    artifact::DescriptorFields fields;
    fields.runFunction = "run";
    if (parsed->emulate) {
      // The mapped loop nests themselves: a CPU artifact.
      fields.device = KILN_DEVICE_CPU;
      DeviceCode reads;
      if (llvm::Error e = addDeviceReads(module, reads))
        return e;
      return writeWithHostCode(module, contents, fields, reads);
    }
    auto ptxas = findPtxas(parsed->toolkitPath);
    if (!ptxas)
      return ptxas.takeError();
    uint32_t flags = 0;
    if (parsed->allowNondeterministic)
      flags |= KILN_GPU_ALLOW_NONDETERMINISTIC;
    auto device = buildDeviceCode(module, *ptxas, flags);
    if (!device)
      return device.takeError();
    fields.device = KILN_DEVICE_CUDA;
    fields.gpuCode = "&gpu_code";
    return writeWithHostCode(module, contents, fields, *device);
  }

private:
  /// Compiles the host code (portable x86-64: it allocates and launches,
  /// or, emulated, runs the mapped loops) and writes the artifact with
  /// `device`'s binaries and forwarders.
  static llvm::Error writeWithHostCode(ModuleOp module, const ArtifactContents &contents,
                                       const artifact::DescriptorFields &fields,
                                       const DeviceCode &device) {
    host::CpuTarget target;
    target.cpu = "x86-64";
    auto machine = host::createTargetMachine(target);
    if (!machine)
      return machine.takeError();
    std::vector<artifact::ConstantBlob> constants = host::extractConstants(module);
    host::StackUse stack;
    host::measureRowTemporaries(module, stack);
    auto object = host::emitObject(module, **machine, stack);
    if (!object)
      return object.takeError();
    ArtifactContents withStack = contents;
    withStack.stackBytes = stack.total();
    llvm::append_range(constants, device.blobs);
    std::string source = artifact::entryPointSource(withStack, device.ranks, device.forwarders) +
                         artifact::descriptorSource(withStack, fields);
    return artifact::writeArtifact(*object, source, withStack, constants);
  }
};

} // namespace

void registerCudaBackend() { registerBackend(std::make_unique<CudaBackend>()); }

} // namespace kiln::cuda
