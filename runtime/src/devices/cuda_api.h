/*===- cuda_api.h - the CUDA driver entry points Kiln uses -----------------===*
 *
 * Declared here (not from cuda.h) because the driver is loaded with dlopen
 * on first use: a CPU-only host never needs it, and the runtime builds
 * without the toolkit. Names are the driver's exported symbols (the _v2
 * forms cuda.h maps its names to). A stand-in library implementing the
 * same symbols (test/e2e/cuda_stand_in.c) tests the device layer on hosts
 * without a GPU (KILN_CUDA_DRIVER names it).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_CUDA_API_H
#define KILN_RUNTIME_DEVICES_CUDA_API_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

#define KILN_CUDA_SUCCESS 0
#define KILN_CU_ATTRIBUTE_CC_MAJOR 75
#define KILN_CU_ATTRIBUTE_CC_MINOR 76
#define KILN_CU_STREAM_NON_BLOCKING 1
#define KILN_CU_CAPTURE_THREAD_LOCAL 1

/* X(return, name, symbol, parameters) for each entry point. */
#define KILN_CUDA_ENTRY_POINTS(X)                                                               \
  X(cuInit, "cuInit", (unsigned flags))                                                        \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int *version))                                  \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int *count))                                        \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                              \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *value, int attribute, CUdevice device)) \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * context, CUdevice device)) \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", (CUcontext context))                              \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", (CUcontext * context))                              \
  X(cuGetErrorName, "cuGetErrorName", (CUresult error, const char **name))                     \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * pointer, size_t bytes))                        \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr pointer))                                          \
  X(cuMemAllocHost, "cuMemAllocHost_v2", (void **pointer, size_t bytes))                       \
  X(cuMemFreeHost, "cuMemFreeHost", (void *pointer))                                           \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                                 \
    (CUdeviceptr to, const void *from, size_t bytes, CUstream stream))                         \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                                 \
    (void *to, CUdeviceptr from, size_t bytes, CUstream stream))                               \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                                 \
    (CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream stream))                         \
  X(cuMemsetD8Async, "cuMemsetD8Async",                                                        \
    (CUdeviceptr to, unsigned char value, size_t bytes, CUstream stream))                      \
  X(cuStreamCreate, "cuStreamCreate", (CUstream * stream, unsigned flags))                     \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream stream))                                  \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream stream))                             \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream stream, int mode))              \
  X(cuStreamEndCapture, "cuStreamEndCapture", (CUstream stream, CUgraph * graph))              \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",                                \
    (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                             \
  X(cuGraphLaunch, "cuGraphLaunch", (CUgraphExec exec, CUstream stream))                       \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec exec))                              \
  X(cuGraphDestroy, "cuGraphDestroy", (CUgraph graph))                                         \
  X(cuModuleLoadData, "cuModuleLoadData", (CUmodule * module, const void *image))              \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule module))                                       \
  X(cuModuleGetFunction, "cuModuleGetFunction",                                                \
    (CUfunction * function, CUmodule module, const char *name))                                \
  X(cuLaunchKernel, "cuLaunchKernel",                                                          \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,            \
     unsigned bz, unsigned shared_bytes, CUstream stream, void **params, void **extra))

typedef struct kiln_cuda_api {
#define KILN_CUDA_FIELD(name, symbol, parameters) CUresult(*name) parameters;
  KILN_CUDA_ENTRY_POINTS(KILN_CUDA_FIELD)
#undef KILN_CUDA_FIELD
} kiln_cuda_api;

#endif
