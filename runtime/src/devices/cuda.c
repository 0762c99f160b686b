/*===- cuda.c - the CUDA device: driver API, device pool, CUDA Graphs -------===*
 *
 * A CUDA artifact's host code allocates from the session's pool (device
 * memory here: the pool keeps its headers on the host) and launches its
 * kernels through kiln_runtime_services.launch_kernel on the session's one
 * stream; its matmul calls run in cuBLASLt (cublaslt.c), its convolutions
 * in cuDNN (cudnn.c), on that stream. Loading an artifact needs no GPU
 * (kiln inspect); creating a session checks the driver, the GPU and the
 * libraries. The driver (libcuda.so.1, or $KILN_CUDA_DRIVER) is loaded with
 * dlopen the first time a CUDA session is created; the process uses the
 * primary context of GPU $KILN_CUDA_DEVICE (default 0).
 *
 * CUDA Graphs: a run's inputs are staged into device buffers that belong
 * to its batch bucket (the smallest of the artifact's --batch-buckets that
 * holds the batch, or the batch itself; a static model has one bucket).
 * The first run of a bucket runs on the stream (constants reach the device,
 * the pool fills with the blocks the run needs); the second is captured
 * into a graph, which every later run of the bucket replays: a replay
 * allocates nothing and the host code does not run. The graph copies the
 * inputs from pinned host memory the bucket owns (the host fills it, or
 * the caller did: kiln_session_input_buffer) and the outputs into pinned
 * memory it owns, so a replay is one launch and one wait. A batch below
 * its bucket runs padded (the extra rows zero) and its outputs' dim 0 is
 * cut back. Nothing inside a capture
 * allocates or synchronises (the pool serves what the first run took); if
 * a capture fails anyway the bucket stays on the stream and
 * kiln_session_device_stats says why. $KILN_CUDA_GRAPHS=0 turns graphs off.
 *
 * A training step's parameters and optimiser state (state.c) stay in
 * device memory between runs (kiln_resident): the run reads them where
 * they are, and their updates are copied into them on the device, inside
 * the captured graph; only what the caller reads or writes by name
 * crosses to the host (state.c). A step is captured and replayed like any
 * run.
 *
 * A model whose host code reads values back from the GPU (read_device:
 * NonZero's count, a shape given as an input; a string operation, which
 * the host runs on copies and writes back with write_device) synchronises
 * inside a run: it is never captured, and a batch runs at its own size,
 * unpadded. A read waits for the stream; a write does not: it is staged
 * in pinned memory the session owns and copied on the stream, in order
 * (a run's first writes, before that memory is sized, wait).
 *
 * Between runs, graphs share the pool's memory (one session runs one graph
 * at a time, and each run's outputs are copied to the host before the next
 * starts), as torch's CUDA Graph trees share one private pool.
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_session.h"
#include "vendor_load.h"
#include "../host_env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The driver, once a process -------------------------------------- */

kiln_cuda_driver kiln_cuda = {PTHREAD_ONCE_INIT};
__thread int kiln_cuda_capturing;
__thread uint64_t kiln_cuda_thread_allocations;

static void load_driver(void) {
  static const char *const names[] = {"libcuda.so.1"};
  static const char *const symbols[] = {
#define KILN_CUDA_NAME(name, symbol, parameters) symbol,
      KILN_CUDA_ENTRY_POINTS(KILN_CUDA_NAME)
#undef KILN_CUDA_NAME
  };
  const char *file = NULL;
  void *handle = kiln_vendor_open("the CUDA driver", "KILN_CUDA_DRIVER", names, 1,
                                  "a CUDA artifact needs an NVIDIA GPU and its driver", &file,
                                  kiln_cuda.error, sizeof kiln_cuda.error);
  if (!handle || kiln_vendor_resolve(handle, "the CUDA driver", file, symbols, &kiln_cuda.api,
                                     sizeof symbols / sizeof *symbols, kiln_cuda.error,
                                     sizeof kiln_cuda.error) != 0)
    return;
  CUresult r = kiln_cuda.api.cuInit(0);
  if (r != KILN_CUDA_SUCCESS) {
    snprintf(kiln_cuda.error, sizeof kiln_cuda.error, "cuInit failed (%s): no usable NVIDIA GPU",
             result_name(r));
    return;
  }
  int ordinal = 0, count = 0;
  const char *chosen = getenv("KILN_CUDA_DEVICE");
  if (chosen && *chosen)
    ordinal = atoi(chosen);
  if (kiln_cuda.api.cuDeviceGetCount(&count) != KILN_CUDA_SUCCESS || ordinal < 0 ||
      ordinal >= count) {
    snprintf(kiln_cuda.error, sizeof kiln_cuda.error,
             "no CUDA GPU %d (this host has %d; KILN_CUDA_DEVICE picks one)", ordinal, count);
    return;
  }
  if ((r = kiln_cuda.api.cuDeviceGet(&kiln_cuda.device, ordinal)) != KILN_CUDA_SUCCESS ||
      (r = kiln_cuda.api.cuDeviceGetAttribute(&kiln_cuda.major, KILN_CU_ATTRIBUTE_CC_MAJOR,
                                           kiln_cuda.device)) != KILN_CUDA_SUCCESS ||
      (r = kiln_cuda.api.cuDeviceGetAttribute(&kiln_cuda.minor, KILN_CU_ATTRIBUTE_CC_MINOR,
                                           kiln_cuda.device)) != KILN_CUDA_SUCCESS ||
      (r = kiln_cuda.api.cuDevicePrimaryCtxRetain(&kiln_cuda.context, kiln_cuda.device)) !=
          KILN_CUDA_SUCCESS) {
    snprintf(kiln_cuda.error, sizeof kiln_cuda.error, "CUDA GPU %d cannot be used (%s)", ordinal,
             result_name(r));
    return;
  }
  kiln_cuda.ready = 1;
}

static kiln_status driver_ready(void) {
  pthread_once(&kiln_cuda.once, load_driver);
  if (!kiln_cuda.ready)
    return kiln_fail(KILN_ERROR_LOAD, "%s", kiln_cuda.error);
  return KILN_OK;
}

/* The binary of `gpu` this GPU runs: a cubin of its major version and a
 * minor at most its own (the newest such), else PTX for an older GPU. */
static const kiln_gpu_binary *pick_binary(const kiln_gpu_code *gpu) {
  uint32_t arch = (uint32_t)(kiln_cuda.major * 10 + kiln_cuda.minor);
  const kiln_gpu_binary *best = NULL;
  for (uint32_t i = 0; i < gpu->num_binaries; ++i) {
    const kiln_gpu_binary *b = &gpu->binaries[i];
    if (b->format == KILN_GPU_CUBIN && b->arch / 10 == arch / 10 && b->arch <= arch &&
        (!best || best->format != KILN_GPU_CUBIN || b->arch > best->arch))
      best = b;
  }
  if (best)
    return best;
  for (uint32_t i = 0; i < gpu->num_binaries; ++i) {
    const kiln_gpu_binary *b = &gpu->binaries[i];
    if (b->format == KILN_GPU_PTX && b->arch <= arch && (!best || b->arch > best->arch))
      best = b;
  }
  return best;
}

static kiln_status cuda_check_model(const kiln_model_v1 *abi, const char *what,
                                    unsigned elf_machine) {
  (void)elf_machine; /* the host code is x86-64, as the runtime checked */
  const kiln_gpu_code *gpu = abi->gpu;
  if (!gpu || (gpu->num_kernels && (!gpu->num_binaries || !gpu->binaries)))
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "%s: a CUDA artifact without device code",
                     what);
  for (uint32_t i = 0; i < gpu->num_binaries; ++i) {
    const kiln_gpu_binary *b = &gpu->binaries[i];
    if (!b->data || !b->size || (b->format != KILN_GPU_CUBIN && b->format != KILN_GPU_PTX))
      return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "%s: malformed GPU binary %u", what, i);
    /* The driver reads PTX up to its NUL, which `size` counts. */
    if (b->format == KILN_GPU_PTX && ((const char *)b->data)[b->size - 1] != '\0')
      return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                       "%s: malformed GPU binary %u (PTX without its terminating NUL)", what, i);
  }
  if (gpu->num_kernels && !gpu->kernels)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "%s: no kernel names", what);
  for (uint32_t i = 0; i < gpu->num_kernels; ++i)
    if (!gpu->kernels[i] || !gpu->kernels[i][0])
      return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "%s: GPU kernel %u has no name", what, i);
  if (gpu->flags & ~(uint32_t)(KILN_GPU_ALLOW_NONDETERMINISTIC | KILN_GPU_READS_DEVICE))
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "%s: unknown GPU flags 0x%x", what,
                     gpu->flags);
  for (uint32_t i = 0; i < abi->num_library_calls; ++i)
    if (abi->library_calls[i].kind != KILN_LIBRARY_MATMUL &&
        abi->library_calls[i].kind != KILN_LIBRARY_CONV)
      return kiln_fail(KILN_ERROR_LOAD,
                       "%s: library call %u is of a kind this runtime's CUDA device lacks", what,
                       i);
  /* The GPU, its driver and the libraries are the session's to check: an
   * artifact loads (kiln inspect) on a host without them. */
  return KILN_OK;
}

/* Whether this host can run `abi`: the driver, a binary for its GPU, the
 * libraries its calls need. */
static kiln_status check_host(const kiln_model_v1 *abi) {
  const kiln_gpu_code *gpu = abi->gpu;
  const char *what = "the model";
  kiln_status status = driver_ready();
  if (status != KILN_OK)
    return status;
  if ((status = kiln_cublaslt_check(abi, what)) != KILN_OK ||
      (status = kiln_cudnn_check(abi, what)) != KILN_OK)
    return status;
  if (gpu->num_kernels && !pick_binary(gpu)) {
    char list[128] = "";
    for (uint32_t i = 0; i < gpu->num_binaries; ++i) {
      size_t used = strlen(list);
      snprintf(list + used, sizeof list - used, "%ssm_%u%s", used ? ", " : "",
               gpu->binaries[i].arch, gpu->binaries[i].format == KILN_GPU_PTX ? " (PTX)" : "");
    }
    return kiln_fail(KILN_ERROR_LOAD,
                     "%s: compiled for %s; this GPU is sm_%d%d (kiln compile --target=cuda "
                     "--gpu=sm_%d%d)",
                     what, list, kiln_cuda.major, kiln_cuda.minor, kiln_cuda.major, kiln_cuda.minor);
  }
  return KILN_OK;
}

/* ---- Memory ------------------------------------------------------------ */

void *kiln_cuda_allocate(const kiln_allocator *allocator, size_t bytes, size_t alignment) {
  (void)allocator; /* a caller's allocator serves host memory: not used here */
  (void)alignment; /* the driver's allocations are 256-byte aligned */
  if (!kiln_cuda.ready)
    return NULL;
  CUdeviceptr p = 0;
  if (kiln_cuda.api.cuMemAlloc(&p, bytes ? bytes : 1) != KILN_CUDA_SUCCESS)
    return NULL;
  __atomic_add_fetch(&kiln_cuda.allocations, 1, __ATOMIC_RELAXED);
  kiln_cuda_thread_allocations += 1;
  return (void *)(uintptr_t)p;
}

void kiln_cuda_release(const kiln_allocator *allocator, void *ptr) {
  (void)allocator;
  if (ptr && kiln_cuda.ready)
    kiln_cuda.api.cuMemFree((CUdeviceptr)(uintptr_t)ptr);
}

/* ---- A session ----------------------------------------------------------- */

static void cuda_library_free(void *state) {
  cuda_session *s = state;
  if (!s)
    return;
  kiln_cuda.api.cuCtxPushCurrent(kiln_cuda.context);
  if (s->stream)
    kiln_cuda.api.cuStreamSynchronize(s->stream);
  for (int k = 0; k < KILN_CUDA_MAX_GRAPHS; ++k)
    kiln_cuda_free_bucket(&s->buckets[k], s->abi->num_inputs, s->abi->num_outputs);
  for (uint32_t i = 0; s->constants && i < s->abi->gpu->num_constants; ++i)
    kiln_cuda_release(NULL, s->constants[i]);
  free_pinned(s->host_outputs, s->abi->num_outputs);
  free_pinned(s->host_inputs, s->abi->num_inputs);
  free_pinned(s->fixed_inputs, s->abi->num_inputs);
  if (s->write_staging)
    kiln_cuda.api.cuMemFreeHost(s->write_staging);
  kiln_cublaslt_free(s->blas);
  kiln_cudnn_free(s->dnn);
  kiln_cuda_release(NULL, s->workspace);
  if (s->module)
    kiln_cuda.api.cuModuleUnload(s->module);
  if (s->stream)
    kiln_cuda.api.cuStreamDestroy(s->stream);
  CUcontext popped;
  kiln_cuda.api.cuCtxPopCurrent(&popped);
  free(s->functions);
  free(s->constants);
  free(s->host_bytes);
  free(s->host_in_bytes);
  free(s->fixed_in_bytes);
  free(s);
}

static kiln_status cuda_library_create(const kiln_model_v1 *abi, void **state) {
  *state = NULL;
  kiln_status host = check_host(abi);
  if (host != KILN_OK)
    return host;
  cuda_session *s = calloc(1, sizeof *s);
  if (!s)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  s->abi = abi;
  s->graphs_enabled = !kiln_env_is("KILN_CUDA_GRAPHS", "0");
  const kiln_gpu_code *gpu = abi->gpu;
  s->reads_device = (gpu->flags & KILN_GPU_READS_DEVICE) != 0;
  if (!s->graphs_enabled)
    snprintf(s->stats.fallback, sizeof s->stats.fallback, "CUDA Graphs off (KILN_CUDA_GRAPHS=0)");
  else if (s->reads_device)
    snprintf(s->stats.fallback, sizeof s->stats.fallback,
             "the host reads values the model computes on the GPU (sizes: NonZero, Unique, "
             "...; string operations, run on the host): every run on the stream, at its own "
             "batch");
  s->functions = calloc(gpu->num_kernels + 1, sizeof(CUfunction));
  s->constants = calloc(gpu->num_constants + 1, sizeof(void *));
  s->host_outputs = calloc(abi->num_outputs + 1, sizeof(void *));
  s->host_bytes = calloc(abi->num_outputs + 1, sizeof(size_t));
  s->host_inputs = calloc(abi->num_inputs + 1, sizeof(void *));
  s->host_in_bytes = calloc(abi->num_inputs + 1, sizeof(size_t));
  s->fixed_inputs = calloc(abi->num_inputs + 1, sizeof(void *));
  s->fixed_in_bytes = calloc(abi->num_inputs + 1, sizeof(size_t));
  if (!s->functions || !s->constants || !s->host_outputs || !s->host_bytes ||
      !s->host_inputs || !s->host_in_bytes || !s->fixed_inputs || !s->fixed_in_bytes) {
    cuda_library_free(s);
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  kiln_cuda.api.cuCtxPushCurrent(kiln_cuda.context);
  CUresult r = kiln_cuda.api.cuStreamCreate(&s->stream, KILN_CU_STREAM_NON_BLOCKING);
  /* A model without kernels (only views of its inputs) loads no module. */
  const kiln_gpu_binary *binary = gpu->num_kernels ? pick_binary(gpu) : NULL;
  if (r == KILN_CUDA_SUCCESS && binary)
    r = kiln_cuda.api.cuModuleLoadData(&s->module, binary->data);
  CUcontext popped;
  if (r != KILN_CUDA_SUCCESS) {
    kiln_cuda.api.cuCtxPopCurrent(&popped);
    cuda_library_free(s);
    return kiln_fail(KILN_ERROR_LOAD, "cannot load the model's %s for sm_%u (%s)",
                     binary->format == KILN_GPU_PTX ? "PTX" : "cubin", binary->arch,
                     result_name(r));
  }
  for (uint32_t k = 0; k < gpu->num_kernels; ++k) {
    r = kiln_cuda.api.cuModuleGetFunction(&s->functions[k], s->module, gpu->kernels[k]);
    if (r != KILN_CUDA_SUCCESS) {
      kiln_cuda.api.cuCtxPopCurrent(&popped);
      cuda_library_free(s);
      return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "the model's GPU code has no kernel '%s' (%s)",
                       gpu->kernels[k], result_name(r));
    }
  }
  /* Library calls: cuBLASLt, cuDNN and their workspace, before any
   * capture. */
  if (abi->num_library_calls) {
    s->workspace = kiln_cuda_allocate(NULL, KILN_CUDA_WORKSPACE_BYTES, 256);
    kiln_status created =
        !s->workspace
            ? kiln_fail(KILN_ERROR_OUT_OF_MEMORY,
                        "cannot allocate the libraries' workspace on the GPU")
            : kiln_cublaslt_create(abi, s->workspace, KILN_CUDA_WORKSPACE_BYTES, &s->blas);
    if (created == KILN_OK)
      created = kiln_cudnn_create(abi, s->stream, s->workspace, KILN_CUDA_WORKSPACE_BYTES, &s->dnn);
    if (created != KILN_OK) {
      kiln_cuda.api.cuCtxPopCurrent(&popped);
      cuda_library_free(s);
      return created;
    }
  }
  kiln_cuda.api.cuCtxPopCurrent(&popped);
  *state = s;
  return KILN_OK;
}

static int cuda_library_execute(void *state, uint32_t id, void *const *operands,
                                const int64_t *const *dims) {
  cuda_session *s = state;
  int rc = s->abi->library_calls[id].kind == KILN_LIBRARY_CONV
               ? kiln_cudnn_execute(s->dnn, id, operands, dims)
               : kiln_cublaslt_execute(s->blas, id, operands, dims, s->stream,
                                       kiln_cuda_capturing);
  if (rc != 0)
    return -1;
  s->stats.library_calls += 1;
  return 0;
}

static void cuda_parallel_for(int32_t num_threads, void (*chunk)(void *, int64_t, int64_t),
                              void *context, int64_t begin, int64_t end) {
  (void)num_threads;
  if (begin < end)
    chunk(context, begin, end); /* host code of a CUDA artifact has none */
}

/* Around the runtime's work: the process's context current on this
 * thread (nothing before the driver is ready: session creation checks
 * it). */
static int cuda_enter(int32_t num_threads) {
  (void)num_threads;
  if (!kiln_cuda.ready)
    return 0;
  kiln_cuda.api.cuCtxPushCurrent(kiln_cuda.context);
  return 1;
}

static void cuda_leave(int32_t num_threads, int pushed) {
  (void)num_threads;
  CUcontext popped;
  if (pushed)
    kiln_cuda.api.cuCtxPopCurrent(&popped);
}

static int cuda_synchronize(void *state) {
  (void)state; /* run synchronised already, after copying the outputs */
  return 0;
}

static int cuda_launch_kernel(void *state, uint32_t kernel, const uint32_t grid[3],
                              const uint32_t block[3], void **params) {
  cuda_session *s = state;
  if (kernel >= s->abi->gpu->num_kernels)
    return -1;
  CUresult r = kiln_cuda.api.cuLaunchKernel(s->functions[kernel], grid[0], grid[1], grid[2],
                                         block[0], block[1], block[2], 0, s->stream, params, NULL);
  if (r != KILN_CUDA_SUCCESS)
    return set_error(s, s->abi->gpu->kernels[kernel], r);
  s->stats.kernel_launches += 1;
  return 0;
}

static int cuda_read(void *state, void *host, const void *device, size_t bytes) {
  cuda_session *s = state;
  if (kiln_cuda_capturing) {
    kiln_fail(KILN_ERROR_RUN, "the model read device memory inside a CUDA Graph capture");
    return -1;
  }
  CUresult r = kiln_cuda.api.cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)device, bytes,
                                            s->stream);
  if (r == KILN_CUDA_SUCCESS)
    r = kiln_cuda.api.cuStreamSynchronize(s->stream);
  if (r == KILN_CUDA_SUCCESS)
    s->write_used = 0; /* the staged writes before it are done */
  s->stats.bytes_to_host += bytes;
  return r == KILN_CUDA_SUCCESS ? 0 : set_error(s, "reading a value from the GPU", r);
}

/* The most pinned memory a session keeps for writes within a run. */
#define KILN_CUDA_WRITE_STAGING_MAX ((size_t)64 << 20)

int kiln_cuda_begin_writes(cuda_session *s) {
  if (s->write_used) { /* the last run stopped early: its copies may be pending */
    CUresult r = kiln_cuda.api.cuStreamSynchronize(s->stream);
    if (r != KILN_CUDA_SUCCESS)
      return set_error(s, "waiting for the last run's copies", r);
    s->write_used = 0;
  }
  if (ensure_pinned(s, &s->write_staging, &s->write_capacity, s->write_wanted) != 0)
    return -1;
  s->in_run = 1;
  return 0;
}

void kiln_cuda_end_writes(cuda_session *s, int finished) {
  s->in_run = 0;
  if (finished)
    s->write_used = 0;
}

static int cuda_write(void *state, void *device, const void *host, size_t bytes) {
  cuda_session *s = state;
  if (kiln_cuda_capturing) {
    kiln_fail(KILN_ERROR_RUN, "the model wrote device memory from the host inside a CUDA Graph "
                              "capture");
    return -1;
  }
  CUresult r;
  if (s->in_run) {
    /* Staged in the session's pinned memory, which no later copy reuses
     * before the stream is next synchronised (a read, a write that waits,
     * the run's end): enqueued after the stream's work, not waited for. */
    size_t at = (s->write_used + 255) & ~(size_t)255;
    if (at + bytes <= s->write_capacity) {
      memcpy((char *)s->write_staging + at, host, bytes);
      r = kiln_cuda.api.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)device,
                                          (char *)s->write_staging + at, bytes, s->stream);
      s->write_used = at + bytes;
      s->stats.bytes_to_device += bytes;
      return r == KILN_CUDA_SUCCESS ? 0 : set_error(s, "writing values to the GPU", r);
    }
    if (at + bytes > s->write_wanted && at + bytes <= KILN_CUDA_WRITE_STAGING_MAX)
      s->write_wanted = at + bytes; /* the next run has room */
  }
  /* On the stream, after its work; the host buffer may go once it returns. */
  r = kiln_cuda.api.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)device, host, bytes, s->stream);
  if (r == KILN_CUDA_SUCCESS)
    r = kiln_cuda.api.cuStreamSynchronize(s->stream);
  if (r == KILN_CUDA_SUCCESS)
    s->write_used = 0;
  s->stats.bytes_to_device += bytes;
  return r == KILN_CUDA_SUCCESS ? 0 : set_error(s, "writing values to the GPU", r);
}

static void *cuda_device_constant(void *state, uint32_t index, const void *host, size_t bytes) {
  cuda_session *s = state;
  if (index >= s->abi->gpu->num_constants)
    return NULL;
  if (s->constants[index])
    return s->constants[index];
  if (kiln_cuda_capturing)
    return NULL; /* the first run of every bucket uploads them, outside capture */
  void *p = kiln_cuda_allocate(NULL, bytes, 256);
  if (!p)
    return NULL;
  s->stats.bytes_to_device += bytes;
  if (kiln_cuda.api.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)p, host, bytes, s->stream) !=
          KILN_CUDA_SUCCESS ||
      kiln_cuda.api.cuStreamSynchronize(s->stream) != KILN_CUDA_SUCCESS) {
    kiln_cuda_release(NULL, p);
    return NULL;
  }
  s->constants[index] = p;
  return p;
}

static void cuda_stats(void *state, kiln_device_stats *stats) {
  cuda_session *s = state;
  if (!s)
    return;
  *stats = s->stats;
  stats->device_allocations = __atomic_load_n(&kiln_cuda.allocations, __ATOMIC_RELAXED);
}

static void cuda_plan_stats(void *state, kiln_library_plan_stats *stats) {
  cuda_session *s = state;
  if (!s)
    return;
  uint32_t graph_plans, api_plans;
  const char *why;
  kiln_cudnn_plans(s->dnn, &graph_plans, &api_plans, &why);
  stats->cudnn_graph_plans = graph_plans;
  stats->cudnn_api_plans = api_plans;
  snprintf(stats->cudnn_fallback, sizeof stats->cudnn_fallback, "%s", why ? why : "");
}

static const kiln_device cuda_device = {
    "cuda",           KILN_DEVICE_CUDA,     cuda_check_model,     kiln_cuda_allocate,
    kiln_cuda_release,     cuda_library_create,  cuda_library_free,    cuda_library_execute,
    cuda_parallel_for, cuda_enter,          cuda_leave,           cuda_synchronize,
    /* memory_is_host */ 0, kiln_cuda_run,       cuda_launch_kernel,   cuda_device_constant,
    cuda_stats,       cuda_plan_stats,      cuda_read,            cuda_write,
    kiln_cuda_input_buffer};

const kiln_device *kiln_cuda_device(void) { return &cuda_device; }
