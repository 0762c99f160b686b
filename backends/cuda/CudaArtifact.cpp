//===- CudaArtifact.cpp - a CUDA artifact's device code and entry ---------===//

#include "backends/cuda/CudaArtifact.h"
#include "backends/cuda/Passes.h"
#include "kiln/kiln_model_abi.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace kiln::cuda {

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string findToolkit() {
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable); value && *value &&
                                                    llvm::sys::fs::is_directory(value))
      return value;
  if (llvm::sys::fs::is_directory("/usr/local/cuda"))
    return "/usr/local/cuda";
  return "";
}

llvm::Expected<std::string> findPtxas(llvm::StringRef toolkitPath) {
  if (const char *value = std::getenv("KILN_PTXAS"); value && *value) {
    if (llvm::sys::fs::can_execute(value))
      return std::string(value);
    return error(llvm::Twine("KILN_PTXAS names '") + value + "', which is not an executable");
  }
  if (!toolkitPath.empty()) {
    llvm::SmallString<128> path(toolkitPath);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return path.str().str();
  }
  if (auto found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return error("the CUDA backend needs ptxas (the CUDA toolkit's assembler) and found none: "
               "tried $KILN_PTXAS, " +
               (toolkitPath.empty() ? std::string("no toolkit") : toolkitPath.str() + "/bin") +
               " and the PATH (install the CUDA toolkit or set CUDA_HOME)");
}

/// "sm_90" -> 90.
static unsigned archOf(llvm::StringRef chip) {
  unsigned arch = 0;
  if (chip.consume_front("sm_"))
    chip.take_while([](char c) { return c >= '0' && c <= '9'; }).getAsInteger(10, arch);
  return arch;
}

/// Assembles `ptx` for `chip` into a cubin.
static llvm::Expected<std::string> assemble(llvm::StringRef ptxas, llvm::StringRef ptx,
                                            llvm::StringRef chip) {
  llvm::SmallString<128> work;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-ptxas", work))
    return error("cannot create a temporary folder: " + ec.message());
  std::string in = (work + "/kernels.ptx").str(), out = (work + "/kernels.cubin").str();
  std::string log = (work + "/ptxas.log").str();
  auto cleanup = [&] { llvm::sys::fs::remove_directories(work); };
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec) {
      cleanup();
      return error("cannot write '" + in + "': " + ec.message());
    }
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> argv = {ptxas, arch, "-O3", in, "-o", out};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, argv, std::nullopt, redirects, 0, 0, &message);
  if (rc != 0) {
    std::string output;
    if (auto buffer = llvm::MemoryBuffer::getFile(log))
      output = (*buffer)->getBuffer().str();
    cleanup();
    return error("ptxas " + arch + " failed (" + std::to_string(rc) + "): " +
                 (output.empty() ? message : output));
  }
  auto buffer = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
  if (!buffer) {
    cleanup();
    return error("ptxas wrote no '" + out + "'");
  }
  std::string cubin = (*buffer)->getBuffer().str();
  cleanup();
  return cubin;
}

/// The C type of a scalar kernel operand; "" for one the ABI lacks.
static std::string cType(Type t) {
  if (t.isIndex())
    return "int64_t";
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
    case 8:
      return "uint8_t";
    case 16:
      return "int16_t";
    case 32:
      return "int32_t";
    case 64:
      return "int64_t";
    default:
      return "";
    }
  }
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  return "";
}

llvm::Error addDeviceReads(ModuleOp module, DeviceCode &code) {
  llvm::raw_string_ostream os(code.forwarders);
  auto reads = module->getAttrOfType<ArrayAttr>(kDeviceReadsAttr);
  code.deviceReads = reads ? reads.size() : 0;
  for (size_t n = 0; n < code.deviceReads; ++n) {
    auto type = cast<MemRefType>(cast<TypeAttr>(reads[n]).getValue());
    std::string element = cType(type.getElementType());
    if (element.empty())
      return error("the CUDA backend cannot read this element type from device memory");
    int64_t rank = type.getRank();
    code.ranks.insert(rank);
    std::string signature, at;
    for (int64_t d = 0; d < rank; ++d) {
      signature += ", int64_t i" + std::to_string(d);
      at += " + i" + std::to_string(d) + " * m->strides[" + std::to_string(d) + "]";
    }
    os << "__attribute__((visibility(\"hidden\"))) " << element << " _mlir_ciface_"
       << kDeviceReadPrefix << n << "(memref" << rank << " *m" << signature << ") {\n"
       << "  " << element << " value = 0;\n"
       << "  if (call_failed)\n    return value;\n"
       << "  const char *at = (const char *)m->aligned + (m->offset" << at << ") * sizeof value;\n"
       << "  if (services->read_device(services_state, &value, at, sizeof value) != 0)\n"
       << "    call_failed = 1;\n  return value;\n}\n";
  }

  // Host functions on copies of device buffers (kHostCallsAttr).
  auto calls = module->getAttrOfType<ArrayAttr>(kHostCallsAttr);
  code.hostCalls = calls ? calls.size() : 0;
  if (code.hostCalls) {
    code.ranks.insert(1);
    // The session's string storage holds the copies (host memory, freed
    // at the next run, so nothing leaks when a run stops half way).
    os << "/* A 1-D view of device memory copied to the host: `view`, the\n"
          " * same view of the copy; the span from its first to its last\n"
          " * element is `bytes` at `device` (read_device, unless `read` is 0). */\n"
          "typedef struct { memref1 view; char *device; void *copy; size_t bytes; } "
          "kiln_cuda_staged;\n"
          "static int kiln_cuda_stage(kiln_cuda_staged *s, const memref1 *m, size_t esize, "
          "int read) {\n"
          "  int64_t n = m->sizes[0], stride = m->strides[0], lo = m->offset, hi = m->offset;\n"
          "  if (n > 0) {\n"
          "    if (stride >= 0) hi += (n - 1) * stride;\n"
          "    else lo += (n - 1) * stride;\n  }\n"
          "  s->view = *m;\n"
          "  s->bytes = n > 0 ? (size_t)(hi - lo + 1) * esize : 0;\n"
          "  s->device = (char *)m->aligned + lo * (int64_t)esize;\n"
          "  s->copy = kiln_string_storage(s->bytes);\n"
          "  if (!s->copy) return -1;\n"
          "  s->view.allocated = s->view.aligned = s->copy;\n"
          "  s->view.offset = m->offset - lo;\n"
          "  if (read && s->bytes &&\n"
          "      services->read_device(services_state, s->copy, s->device, s->bytes) != 0)\n"
          "    return -1;\n"
          "  return 0;\n}\n";
  }
  for (size_t n = 0; n < code.hostCalls; ++n) {
    auto entry = cast<DictionaryAttr>(calls[n]);
    auto callee = entry.getAs<StringAttr>("callee");
    auto args = entry.getAs<ArrayAttr>("args");
    auto staged = entry.getAs<ArrayAttr>("staged");
    if (!callee || !args || !staged || args.size() != staged.size() || args.empty())
      return error("the CUDA backend's module has a malformed host call");
    size_t last = args.size() - 1;
    std::string signature, stage, pass;
    for (size_t k = 0; k < args.size(); ++k) {
      auto type = cast<MemRefType>(cast<TypeAttr>(args[k]).getValue());
      std::string a = "a" + std::to_string(k);
      signature += std::string(k ? ", " : "") + "memref1 *" + a;
      if (!cast<BoolAttr>(staged[k]).getValue()) {
        pass += std::string(k ? ", " : "") + a; // host memory: as it is
        continue;
      }
      size_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
      // The result is written whole; read first only where its view has
      // gaps the write-back would overwrite.
      std::string read = k == last ? "(" + a + "->sizes[0] > 1 && " + a + "->strides[0] != 1)"
                                   : std::string("1");
      stage += "  if (kiln_cuda_stage(&s" + std::to_string(k) + ", " + a + ", " +
               std::to_string(bytes) + ", " + read + ") != 0) {\n    call_failed = 1;\n"
               "    return;\n  }\n";
      pass += std::string(k ? ", " : "") + "&s" + std::to_string(k) + ".view";
    }
    os << "__attribute__((visibility(\"hidden\"))) void _mlir_ciface_" << kHostCallPrefix << n
       << "(" << signature << ") {\n"
       << "  if (call_failed)\n    return;\n";
    for (size_t k = 0; k < args.size(); ++k)
      if (cast<BoolAttr>(staged[k]).getValue())
        os << "  kiln_cuda_staged s" << k << ";\n";
    os << stage << "  _mlir_ciface_" << callee.getValue() << "(" << pass << ");\n";
    if (cast<BoolAttr>(staged[last]).getValue())
      os << "  if (!call_failed && s" << last << ".bytes &&\n"
         << "      services->write_device(services_state, s" << last << ".device, s" << last
         << ".copy, s" << last << ".bytes) != 0)\n    call_failed = 1;\n";
    os << "}\n";
  }
  return llvm::Error::success();
}

llvm::Expected<DeviceCode> buildDeviceCode(ModuleOp module, llvm::StringRef ptxasPath,
                                           uint32_t flags) {
  DeviceCode code;
  auto kernels = module->getAttrOfType<ArrayAttr>(kKernelsAttr);
  auto launches = module->getAttrOfType<ArrayAttr>(kLaunchesAttr);
  auto ptx = module->getAttrOfType<DictionaryAttr>(kPtxAttr);
  auto constants = module->getAttrOfType<ArrayAttr>(kConstantsAttr);
  if (!kernels || !launches || !ptx)
    return error("the CUDA backend's module lacks its kernels (kiln-cuda-lower-launches did "
                 "not run)");
  code.kernels = kernels.size();
  code.launches = launches.size();
  llvm::raw_string_ostream os(code.forwarders);
  os << "\n/* The CUDA backend's forwarders: kernel launches and constants. */\n";

  // Launches: the operands as the kernel's parameters (a memref expands
  // into its descriptor's fields, as the kernel's signature does).
  for (auto [n, entry] : llvm::enumerate(launches)) {
    auto launch = cast<DictionaryAttr>(entry);
    int64_t kernel = cast<IntegerAttr>(launch.get("kernel")).getInt();
    auto args = cast<ArrayAttr>(launch.get("args"));
    std::string signature, params;
    size_t count = 0;
    for (auto [k, attr] : llvm::enumerate(args)) {
      Type t = cast<TypeAttr>(attr).getValue();
      std::string a = "a" + std::to_string(k);
      if (auto memref = dyn_cast<MemRefType>(t)) {
        int64_t rank = memref.getRank();
        code.ranks.insert(rank);
        signature += ", memref" + std::to_string(rank) + " *" + a;
        params += "&" + a + "->allocated, &" + a + "->aligned, &" + a + "->offset, ";
        count += 3;
        for (const char *field : {"sizes", "strides"})
          for (int64_t d = 0; d < rank; ++d) {
            params += "&" + a + "->" + field + "[" + std::to_string(d) + "], ";
            ++count;
          }
        continue;
      }
      std::string type = cType(t);
      if (type.empty())
        return error("the CUDA backend cannot pass a value of this type to a kernel");
      signature += ", " + type + " " + a;
      params += "&" + a + ", ";
      ++count;
    }
    os << "__attribute__((visibility(\"hidden\"))) void _mlir_ciface_" << kLaunchPrefix << n
       << "(int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by, int64_t bz"
       << signature << ") {\n"
       << "  if (call_failed || gx <= 0 || gy <= 0 || gz <= 0)\n    return;\n"
       << "  const uint32_t grid[3] = {(uint32_t)gx, (uint32_t)gy, (uint32_t)gz};\n"
       << "  const uint32_t block[3] = {(uint32_t)bx, (uint32_t)by, (uint32_t)bz};\n"
       << "  void *params[" << std::max<size_t>(count, 1) << "] = {"
       << (count ? params.substr(0, params.size() - 2) : std::string("0")) << "};\n"
       << "  if (services->launch_kernel(services_state, " << kernel
       << "u, grid, block, params) != 0)\n    call_failed = 1;\n}\n";
  }

  os.flush();
  if (llvm::Error e = addDeviceReads(module, code))
    return std::move(e);
  if (code.deviceReads || code.hostCalls)
    flags |= KILN_GPU_READS_DEVICE;

  // Constants: the session's device copy in the host descriptor's place.
  size_t numConstants = constants ? constants.size() : 0;
  for (size_t i = 0; i < numConstants; ++i) {
    auto type = cast<MemRefType>(cast<TypeAttr>(constants[i]).getValue());
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return error("the CUDA backend expects constants of static shape");
    int64_t rank = type.getRank();
    code.ranks.insert(rank);
    uint64_t bytes = static_cast<uint64_t>(type.getNumElements()) *
                     ((type.getElementTypeBitWidth() + 7) / 8);
    os << "__attribute__((visibility(\"hidden\"))) void _mlir_ciface_" << kConstantPrefix << i
       << "(memref" << rank << " *result, memref" << rank << " *host) {\n"
       << "  *result = *host;\n"
       << "  void *device = services->device_constant(services_state, " << i
       << "u, host->aligned, " << bytes << "u);\n"
       << "  if (!device)\n    allocation_failed();\n"
       << "  else\n    result->allocated = result->aligned = device;\n}\n";
  }

  // The binaries: a cubin each GPU, the newest GPU's PTX for later ones.
  std::vector<std::pair<unsigned, std::string>> chips;
  for (NamedAttribute entry : ptx)
    chips.push_back({archOf(entry.getName().getValue()), entry.getName().str()});
  llvm::sort(chips);
  if (chips.empty() && !kernels.empty())
    return error("the CUDA backend produced no PTX");
  code.storage.reserve(chips.size() + 1);
  std::string table;
  llvm::raw_string_ostream ts(table);
  size_t blob = 0;
  auto add = [&](std::string bytes, unsigned format, unsigned arch) {
    code.storage.push_back(std::move(bytes));
    artifact::ConstantBlob c;
    c.symbol = "kiln_gpu_binary_" + std::to_string(blob++);
    c.alignment = 64;
    c.bytes = llvm::ArrayRef<char>(code.storage.back().data(), code.storage.back().size());
    code.blobs.push_back(c);
    ts << "  {" << (format == KILN_GPU_CUBIN ? "KILN_GPU_CUBIN" : "KILN_GPU_PTX") << ", " << arch
       << "u, " << code.storage.back().size() << "u, " << c.symbol << "},\n";
  };
  for (const auto &[arch, chip] : chips) {
    llvm::StringRef text = cast<StringAttr>(ptx.get(chip)).getValue();
    auto cubin = assemble(ptxasPath, text, chip);
    if (!cubin)
      return cubin.takeError();
    add(std::move(*cubin), KILN_GPU_CUBIN, arch);
  }
  if (!chips.empty()) {
    const auto &[arch, chip] = chips.back();
    std::string text = cast<StringAttr>(ptx.get(chip)).getValue().str();
    text.push_back('\0');
    add(std::move(text), KILN_GPU_PTX, arch);
  }
  os << "\n";
  for (const artifact::ConstantBlob &c : code.blobs)
    os << "extern const char " << c.symbol << "[] __attribute__((visibility(\"hidden\")));\n";
  // (A model without kernels, only views of its inputs, has no binary.)
  os << "static const kiln_gpu_binary gpu_binaries[] = {\n"
     << (table.empty() ? std::string("  {0, 0, 0, 0}\n") : table) << "};\n";
  os << "static const char *const gpu_kernels[] = {";
  for (auto [i, k] : llvm::enumerate(kernels))
    os << (i ? ", " : "") << artifact::quoted(cast<StringAttr>(k).getValue());
  os << (kernels.empty() ? "0" : "") << "};\n";
  os << "static const kiln_gpu_code gpu_code = {" << code.blobs.size() << "u, gpu_binaries, "
     << kernels.size() << "u, gpu_kernels, " << numConstants << "u, " << flags << "u};\n";
  return code;
}

} // namespace kiln::cuda
