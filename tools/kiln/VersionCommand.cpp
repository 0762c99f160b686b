//===- VersionCommand.cpp - `kiln --version` -------------------------------===//
//
// Kiln's version and commit, the MLIR/LLVM it was built with, the vendor
// libraries this host would load (oneDNN; CUDA's driver and runtime, cuDNN
// and cuBLASLt when present), and the host CPU with its features. The
// vendor libraries are probed with dlopen, as the runtime loads them.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/Commands.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl_types.h>
#include <string>
#include <tuple>

#include "VersionInfo.inc"

namespace kiln::cli {

namespace {
/// A library opened for one question and closed after it.
struct Library {
  void *handle;
  explicit Library(const char *name) : handle(dlopen(name, RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle)
      dlclose(handle);
  }
  template <typename Fn> Fn get(const char *symbol) const {
    return handle ? reinterpret_cast<Fn>(dlsym(handle, symbol)) : nullptr;
  }
};
} // namespace

/// "13.0" from CUDA's 1000 * major + 10 * minor.
static std::string cudaVersion(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

static std::string onednnVersion() {
  Library lib("libdnnl.so.2");
  auto version = lib.get<const dnnl_version_t *(*)()>("dnnl_version");
  if (!version)
    return "not found (libdnnl.so.2; models that call oneDNN cannot run)";
  const dnnl_version_t *v = version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " (libdnnl.so.2)";
}

static std::string cudaLibraries() {
  std::string text;
  {
    Library lib("libcuda.so.1");
    auto get = lib.get<int (*)(int *)>("cuDriverGetVersion");
    int v = 0;
    text += "  CUDA driver: " +
            (get && get(&v) == 0 ? cudaVersion(v) : std::string("not found (libcuda.so.1)")) + "\n";
  }
  {
    Library lib("libcudart.so.13");
    auto get = lib.get<int (*)(int *)>("cudaRuntimeGetVersion");
    int v = 0;
    text += "  CUDA runtime: " +
            (get && get(&v) == 0 ? cudaVersion(v) : std::string("not found (libcudart.so.13)")) +
            "\n";
  }
  // Both number their versions 10000 * major + 100 * minor + patch.
  for (auto [what, file, symbol] : {std::tuple{"cuDNN", "libcudnn.so.9", "cudnnGetVersion"},
                                    {"cuBLASLt", "libcublasLt.so.13", "cublasLtGetVersion"}}) {
    Library lib(file);
    auto get = lib.get<size_t (*)()>(symbol);
    std::string v = std::string("not found (") + file + ")";
    if (get) {
      size_t n = get();
      v = std::to_string(n / 10000) + "." + std::to_string((n % 10000) / 100) + "." +
          std::to_string(n % 100);
    }
    text += std::string("  ") + what + ": " + v + "\n";
  }
  return text;
}

int runVersion(llvm::ArrayRef<llvm::StringRef> args) {
  bool brief = false;
  for (llvm::StringRef arg : args) {
    if (arg == "--short") {
      brief = true;
    } else {
      llvm::errs() << "kiln --version: unexpected argument '" << arg << "' (--short)\n";
      return 2;
    }
  }
  llvm::outs() << "kiln " << kKilnVersion << " (commit " << kKilnCommit << ")\n";
  if (brief)
    return 0;
  llvm::outs() << "built with MLIR/LLVM " << LLVM_VERSION_STRING << "\n"
               << "libraries on this host:\n"
               << "  oneDNN: " << onednnVersion() << "\n"
               << cudaLibraries();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::string enabled;
  for (llvm::StringRef name :
       {"sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512vnni",
        "avx512bf16", "avx512fp16", "amx-tile", "amx-bf16", "amx-int8", "avxvnni"})
    if (features.lookup(name))
      enabled += (enabled.empty() ? "" : ",") + name.str();
  llvm::outs() << "host CPU: " << llvm::sys::getHostCPUName() << " ("
               << llvm::sys::getProcessTriple() << "), features: "
               << (enabled.empty() ? std::string("none of note") : enabled) << "\n";
  return 0;
}

} // namespace kiln::cli
