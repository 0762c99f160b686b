//===- Pipeline.h - pass order of the CUDA backend --------------*- C++ -*-===//

#ifndef KILN_BACKENDS_CUDA_PIPELINE_H
#define KILN_BACKENDS_CUDA_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cuda {

struct CudaCodegenOptions {
  /// The GPUs to compile for ("sm_80", "sm_90"): one PTX each.
  std::vector<std::string> chips = {"sm_80", "sm_90"};
  /// Threads a block of the generated kernels.
  int64_t blockSize = 256;
  /// The CUDA toolkit (libdevice for math functions).
  std::string toolkitPath;
  /// Stop after the mapping onto blocks and threads and compile those
  /// loop nests for the CPU (sequentially): an artifact the CPU runtime
  /// runs, to check the mapping numerically (`--emulate-gpu`).
  bool emulate = false;
  /// The runtime may pick nondeterministic library algorithms
  /// (`--allow-nondeterministic`: KILN_GPU_ALLOW_NONDETERMINISTIC).
  bool allowNondeterministic = false;
};

/// After `plan`: loop nests onto GPU threads, kernels outlined into one GPU
/// module lowered to NVVM and PTX, launches as runtime calls, then the
/// host code down to the LLVM dialect.
void buildCudaCodegenPipeline(mlir::OpPassManager &pm, const CudaCodegenOptions &options);

/// Registers the CUDA passes and `kiln-lower-to-llvm-gpu-mapped` (the GPU
/// mapping run on the CPU, for lit tests).
void registerCudaPipelines();

} // namespace kiln::cuda

#endif // KILN_BACKENDS_CUDA_PIPELINE_H
