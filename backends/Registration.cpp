//===- Registration.cpp - every backend Kiln is built with ----------------===//
//
// A new backend adds its register function here (and its folder to
// backends/CMakeLists.txt); nothing in compiler/ changes.
//
//===----------------------------------------------------------------------===//

#include "backends/Registration.h"
#include "backends/common/Passes.h"
#include "backends/cpu/CpuBackend.h"
#include "backends/cpu/Pipeline.h"
#include "backends/cuda/CudaBackend.h"
#include "backends/cuda/Pipeline.h"

namespace kiln {

void registerAllBackends() {
  static bool registered = [] {
    host::registerKilnHostPasses();
    cpu::registerCpuBackend();
    cpu::registerCpuPipelines();
    cuda::registerCudaBackend();
    cuda::registerCudaPipelines();
    return true;
  }();
  (void)registered;
}

} // namespace kiln
