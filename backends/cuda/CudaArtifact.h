//===- CudaArtifact.h - a CUDA artifact's device code and entry -*- C++ -*-===//
//
// A CUDA artifact is a host object (the entry function: allocation, kernel
// launches) plus the kernels' PTX assembled by ptxas into a cubin for each
// named GPU, with the PTX of the newest one for GPUs after it; the C entry
// point forwards each launch to the runtime's CUDA device
// (kiln_runtime_services.launch_kernel) and describes the binaries
// (kiln_gpu_code).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_CUDAARTIFACT_H
#define KILN_BACKENDS_CUDA_CUDAARTIFACT_H

#include "backends/common/Descriptor.h"
#include "compiler/Target/Backend.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <set>
#include <string>
#include <vector>

namespace kiln::cuda {

/// The device code the module's attributes describe (kiln-cuda-lower-
/// launches): the cubins and PTX as `blobs` (bytes in `storage`), and the
/// C source of the launch, constant and device-read forwarders and the
/// kiln_gpu_code `gpu_code` with `flags` (kiln_gpu_flags; with
/// KILN_GPU_READS_DEVICE when the host reads device memory). Runs
/// `ptxas` (found as `ptxasPath`).
struct DeviceCode {
  std::vector<std::string> storage;
  std::vector<artifact::ConstantBlob> blobs;
  std::string forwarders;
  std::set<int64_t> ranks;
  size_t kernels = 0, launches = 0, deviceReads = 0, hostCalls = 0;
};
llvm::Expected<DeviceCode> buildDeviceCode(mlir::ModuleOp module, llvm::StringRef ptxasPath,
                                           uint32_t flags);

/// Adds to `code` the forwarders of the values the host reads from device
/// memory (kiln-gpu-map-loops' kDeviceReadsAttr): each the element at its
/// indices, through kiln_runtime_services.read_device; and of the host
/// functions called on device buffers (kHostCallsAttr): operands copied
/// to the host, the function called, its result copied back
/// (write_device). An emulated artifact has these forwarders alone.
llvm::Error addDeviceReads(mlir::ModuleOp module, DeviceCode &code);

/// ptxas: $KILN_PTXAS, the toolkit's bin/, or the PATH; an error naming
/// what was tried.
llvm::Expected<std::string> findPtxas(llvm::StringRef toolkitPath);

/// The CUDA toolkit: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda ("" if none).
std::string findToolkit();

} // namespace kiln::cuda

#endif // KILN_BACKENDS_CUDA_CUDAARTIFACT_H
