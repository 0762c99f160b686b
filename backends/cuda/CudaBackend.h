//===- CudaBackend.h - the CUDA target --------------------------*- C++ -*-===//

#ifndef KILN_BACKENDS_CUDA_CUDABACKEND_H
#define KILN_BACKENDS_CUDA_CUDABACKEND_H

namespace kiln::cuda {

/// Registers the `cuda` backend with the driver's registry.
void registerCudaBackend();

} // namespace kiln::cuda

#endif // KILN_BACKENDS_CUDA_CUDABACKEND_H
