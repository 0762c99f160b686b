//===- HostCode.cpp - LLVM dialect -> x86-64 object code ------------------===//

#include "backends/common/HostCode.h"
#include "backends/common/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/LEB128.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace kiln::host {

void buildHostLowering(mlir::OpPassManager &pm, const HostLoweringOptions &options) {
  using namespace mlir;
  // Row temporaries are freed at the end of each iteration (no
  // canonicalisation may run between this and the lowering to branches).
  pm.addPass(createScopeLoopAllocas());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Expanding strided metadata of dynamic views builds affine.apply.
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.genericAllocation;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // Intrinsics first; what LLVM has no intrinsic for (erf, atan, tanh)
  // becomes a libm call.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = options.barePointerCalls;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void registerTranslations(mlir::DialectRegistry &registry) {
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
}

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The processor features that code may use and a host may lack, in
/// LLVM's names; the runtime's CPU device knows each of them.
static constexpr const char *kCheckedFeatures[] = {
    "sse4.1",   "sse4.2",   "popcnt",   "avx",         "avx2",       "fma",
    "f16c",     "bmi",      "bmi2",     "movbe",       "avx512f",    "avx512dq",
    "avx512cd", "avx512bw", "avx512vl", "avx512vnni",  "avx512bf16", "avx512fp16",
    "amx-tile", "amx-bf16", "amx-int8", "avxvnni"};

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const CpuTarget &target) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string lookupError;
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!llvmTarget)
    return error("no LLVM target for " + triple.str() + ": " + lookupError);
  std::string cpu = target.cpu == "host" ? llvm::sys::getHostCPUName().str() : target.cpu;
  std::string features;
  if (target.cpu == "host") {
    llvm::SubtargetFeatures f;
    for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
      f.AddFeature(name, enabled);
    features = f.getString();
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return error("cannot create a target machine for CPU '" + cpu + "'");
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpu))
    return error("unknown CPU '" + cpu + "' (try x86-64, x86-64-v3, skylake-avx512)");
  return std::move(machine);
}

std::string describeTarget(const llvm::TargetMachine &machine) {
  return machine.getTargetTriple().str() + " " + machine.getTargetCPU().str();
}

std::string requiredFeatures(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  std::string list;
  for (const char *feature : kCheckedFeatures)
    if (info->checkFeatures(std::string("+") + feature))
      list += (list.empty() ? "" : ",") + std::string(feature);
  return list;
}

std::vector<artifact::ConstantBlob> extractConstants(mlir::ModuleOp module, size_t minBytes) {
  std::vector<artifact::ConstantBlob> blobs;
  module.walk([&](mlir::LLVM::GlobalOp global) {
    if (!global.getConstant() || !global.getValueAttr())
      return;
    auto elements = llvm::dyn_cast<mlir::ElementsAttr>(global.getValueAttr());
    if (!elements)
      return;
    auto type = llvm::cast<mlir::ShapedType>(elements.getType());
    mlir::Type element = type.getElementType();
    if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
      return;
    size_t bytes = static_cast<size_t>(type.getNumElements()) * element.getIntOrFloatBitWidth() / 8;
    if (bytes < minBytes)
      return;
    llvm::ArrayRef<char> data;
    if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(elements)) {
      mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob)
        return;
      data = blob->getData();
    } else if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(elements)) {
      if (dense.isSplat())
        return; // LLVM emits a splat cheaply (zeroinitializer or a fill).
      data = dense.getRawData();
    } else {
      return;
    }
    if (data.size() != bytes)
      return;
    artifact::ConstantBlob blob;
    blob.symbol = global.getSymName().str();
    blob.alignment = global.getAlignment().value_or(64);
    blob.bytes = data;
    blobs.push_back(std::move(blob));
    global.removeValueAttr();
    global.setLinkage(mlir::LLVM::Linkage::External);
    global.setVisibility_(mlir::LLVM::Visibility::Hidden);
    global.setDsoLocal(true);
  });
  // Past kLargeConstantBytes the weights go to the large section, beyond
  // the 2 GiB a PC-relative reference reaches: the code reads their
  // addresses from the GOT (a declaration that is not dso_local).
  uint64_t total = 0;
  for (const artifact::ConstantBlob &blob : blobs)
    total += blob.bytes.size();
  if (total > artifact::kLargeConstantBytes) {
    llvm::StringSet<> large;
    for (artifact::ConstantBlob &blob : blobs) {
      blob.large = true;
      large.insert(blob.symbol);
    }
    module.walk([&](mlir::LLVM::GlobalOp global) {
      if (large.contains(global.getSymName())) {
        global.setVisibility_(mlir::LLVM::Visibility::Default);
        global.setDsoLocal(false);
      }
    });
  }
  return blobs;
}

void measureRowTemporaries(mlir::ModuleOp module, StackUse &use) {
  mlir::DataLayout layout(module);
  module.walk([&](mlir::LLVM::LLVMFuncOp function) {
    uint64_t bytes = 0;
    function.walk([&](mlir::LLVM::AllocaOp alloca) {
      llvm::APInt count;
      if (!mlir::matchPattern(alloca.getArraySize(), mlir::m_ConstantInt(&count)))
        return;
      bytes += count.getZExtValue() * layout.getTypeSize(alloca.getElemType()).getFixedValue();
    });
    use.rowTemporaries = std::max(use.rowTemporaries, bytes);
  });
}

/// The largest entry of an object's .stack_sizes section: pairs of a
/// function address (8 bytes, relocated) and its frame size (ULEB128).
static uint64_t largestFrame(llvm::StringRef objectBytes) {
  auto object = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(objectBytes, "model.o"));
  if (!object) {
    llvm::consumeError(object.takeError());
    return 0;
  }
  uint64_t largest = 0;
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name || *name != ".stack_sizes") {
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    const uint8_t *p = reinterpret_cast<const uint8_t *>(contents->data());
    const uint8_t *end = p + contents->size();
    while (end - p > 8) {
      p += 8;
      unsigned length = 0;
      const char *error = nullptr;
      uint64_t size = llvm::decodeULEB128(p, &length, end, &error);
      if (error)
        break;
      largest = std::max(largest, size);
      p += length;
    }
  }
  return largest;
}

llvm::Expected<std::string> emitObject(mlir::ModuleOp module, llvm::TargetMachine &machine,
                                       StackUse &use) {
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = mlir::translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return error("translation to LLVM IR failed");
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());

  auto optimize = mlir::makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, &machine);
  if (llvm::Error e = optimize(llvmModule.get()))
    return std::move(e);

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  // Each function's frame size, for the artifact's stack bound.
  machine.Options.EmitStackSizeSection = true;
  if (machine.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return error("the target cannot emit object files");
  pm.run(*llvmModule);
  std::string object(buffer.begin(), buffer.end());
  use.largestFrame = largestFrame(object);
  return object;
}

} // namespace kiln::host
