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
 * unpadded.
 *
 * Between runs, graphs share the pool's memory (one session runs one graph
 * at a time, and each run's outputs are copied to the host before the next
 * starts), as torch's CUDA Graph trees share one private pool.
 *
 *===----------------------------------------------------------------------===*/

#include "cublaslt.h"
#include "cudnn.h"
#include "cuda_api.h"
#include "device.h"
#include "vendor_load.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- The driver, once a process -------------------------------------- */

static struct {
  pthread_once_t once;
  int ready;
  char error[512];
  kiln_cuda_api api;
  CUdevice device;
  CUcontext context;
  int major, minor;
  /* Device allocations of the whole process (the pool's blocks, staging
   * buffers, constants). */
  uint64_t allocations;
} driver = {PTHREAD_ONCE_INIT};

/* This thread's capture (sessions on other threads run on: captures are
 * thread-local) and the allocations this thread made. */
static __thread int capturing;
static __thread uint64_t thread_allocations;

static const char *result_name(CUresult r) {
  const char *name = NULL;
  if (driver.api.cuGetErrorName && driver.api.cuGetErrorName(r, &name) == KILN_CUDA_SUCCESS &&
      name)
    return name;
  return "unknown CUDA error";
}

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
                                  driver.error, sizeof driver.error);
  if (!handle || kiln_vendor_resolve(handle, "the CUDA driver", file, symbols, &driver.api,
                                     sizeof symbols / sizeof *symbols, driver.error,
                                     sizeof driver.error) != 0)
    return;
  CUresult r = driver.api.cuInit(0);
  if (r != KILN_CUDA_SUCCESS) {
    snprintf(driver.error, sizeof driver.error, "cuInit failed (%s): no usable NVIDIA GPU",
             result_name(r));
    return;
  }
  int ordinal = 0, count = 0;
  const char *chosen = getenv("KILN_CUDA_DEVICE");
  if (chosen && *chosen)
    ordinal = atoi(chosen);
  if (driver.api.cuDeviceGetCount(&count) != KILN_CUDA_SUCCESS || ordinal < 0 ||
      ordinal >= count) {
    snprintf(driver.error, sizeof driver.error,
             "no CUDA GPU %d (this host has %d; KILN_CUDA_DEVICE picks one)", ordinal, count);
    return;
  }
  if ((r = driver.api.cuDeviceGet(&driver.device, ordinal)) != KILN_CUDA_SUCCESS ||
      (r = driver.api.cuDeviceGetAttribute(&driver.major, KILN_CU_ATTRIBUTE_CC_MAJOR,
                                           driver.device)) != KILN_CUDA_SUCCESS ||
      (r = driver.api.cuDeviceGetAttribute(&driver.minor, KILN_CU_ATTRIBUTE_CC_MINOR,
                                           driver.device)) != KILN_CUDA_SUCCESS ||
      (r = driver.api.cuDevicePrimaryCtxRetain(&driver.context, driver.device)) !=
          KILN_CUDA_SUCCESS) {
    snprintf(driver.error, sizeof driver.error, "CUDA GPU %d cannot be used (%s)", ordinal,
             result_name(r));
    return;
  }
  driver.ready = 1;
}

static kiln_status driver_ready(void) {
  pthread_once(&driver.once, load_driver);
  if (!driver.ready)
    return kiln_fail(KILN_ERROR_LOAD, "%s", driver.error);
  return KILN_OK;
}

/* The binary of `gpu` this GPU runs: a cubin of its major version and a
 * minor at most its own (the newest such), else PTX for an older GPU. */
static const kiln_gpu_binary *pick_binary(const kiln_gpu_code *gpu) {
  uint32_t arch = (uint32_t)(driver.major * 10 + driver.minor);
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
  for (uint32_t i = 0; i < gpu->num_binaries; ++i)
    if (!gpu->binaries[i].data || !gpu->binaries[i].size ||
        (gpu->binaries[i].format != KILN_GPU_CUBIN && gpu->binaries[i].format != KILN_GPU_PTX))
      return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "%s: malformed GPU binary %u", what, i);
  if (gpu->num_kernels && !gpu->kernels)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "%s: no kernel names", what);
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
                     what, list, driver.major, driver.minor, driver.major, driver.minor);
  }
  return KILN_OK;
}

/* ---- Memory ------------------------------------------------------------ */

static void *cuda_allocate(const kiln_allocator *allocator, size_t bytes, size_t alignment) {
  (void)allocator; /* a caller's allocator serves host memory: not used here */
  (void)alignment; /* the driver's allocations are 256-byte aligned */
  if (!driver.ready)
    return NULL;
  CUdeviceptr p = 0;
  if (driver.api.cuMemAlloc(&p, bytes ? bytes : 1) != KILN_CUDA_SUCCESS)
    return NULL;
  __atomic_add_fetch(&driver.allocations, 1, __ATOMIC_RELAXED);
  thread_allocations += 1;
  return (void *)(uintptr_t)p;
}

static void cuda_release(const kiln_allocator *allocator, void *ptr) {
  (void)allocator;
  if (ptr && driver.ready)
    driver.api.cuMemFree((CUdeviceptr)(uintptr_t)ptr);
}

/* ---- A session ----------------------------------------------------------- */

/* Graphs: one for each bucket, up to the artifact's buckets plus one. */
#define KILN_CUDA_MAX_GRAPHS (KILN_MAX_BATCH_BUCKETS + 1)

typedef struct bucket {
  int used;
  int64_t batch;       /* dim 0 of the batched inputs; -1: static model */
  uint64_t runs;       /* runs of this bucket so far */
  int failed;          /* its capture failed: stream from now on */
  void **inputs;       /* device buffers, per input, sized for the bucket */
  /* Per batched input: pinned host memory its copy to the device reads
   * (the graph's memcpy node reads it at every replay); per output: pinned
   * host memory the graph copies it into. */
  void **host_in;
  size_t *host_in_bytes;
  void **host_out;
  size_t *host_out_bytes;
  size_t graph_in_bytes, graph_out_bytes; /* what a replay copies each way */
  CUgraph graph;
  CUgraphExec exec;
  /* What the captured run produced (the last run's before a capture):
   * device pointers and dims. */
  void **outputs;
  int64_t (*out_dims)[KILN_MAX_RANK];
} bucket;

typedef struct cuda_session {
  const kiln_model_v1 *abi;
  CUstream stream;
  CUmodule module;
  CUfunction *functions;
  void **constants; /* device copies, by index, made on first use */
  /* Per output: pinned host memory the outputs are copied into; per input:
   * pinned staging the inputs are copied through. */
  void **host_outputs;
  size_t *host_bytes;
  void **host_inputs;
  size_t *host_in_bytes;
  /* Per input: pinned memory of the session's own that its copy to the
   * device reads, where no bucket has one for it (an input without a
   * batch dim in a run of a bucket, or kiln_session_input_buffer's
   * buffer outside buckets): fixed addresses. */
  void **fixed_inputs;
  size_t *fixed_in_bytes;
  bucket buckets[KILN_CUDA_MAX_GRAPHS];
  int graphs_enabled;
  /* KILN_GPU_READS_DEVICE: the host code waits for values the GPU computes
   * (read_device; write_device after a string operation), so no run is
   * captured and none is padded to a bucket. */
  int reads_device;
  kiln_device_stats stats;
  /* The matmul calls (cublaslt.c), the convolutions (cudnn.c) and the
   * workspace they share (one stream: one call at a time). */
  kiln_cublaslt *blas;
  kiln_cudnn *dnn;
  void *workspace;
} cuda_session;

/* The libraries' workspace a session: what their heuristics may ask for. */
#define KILN_CUDA_WORKSPACE_BYTES ((size_t)32 << 20)

static int set_error(cuda_session *s, const char *what, CUresult r) {
  kiln_fail(KILN_ERROR_RUN, "%s failed (%s)", what, result_name(r));
  (void)s;
  return -1;
}

static void free_bucket(bucket *b, uint32_t num_inputs, uint32_t num_outputs) {
  if (b->exec)
    driver.api.cuGraphExecDestroy(b->exec);
  if (b->graph)
    driver.api.cuGraphDestroy(b->graph);
  for (uint32_t i = 0; b->inputs && i < num_inputs; ++i)
    cuda_release(NULL, b->inputs[i]);
  for (uint32_t i = 0; b->host_in && i < num_inputs; ++i)
    if (b->host_in[i])
      driver.api.cuMemFreeHost(b->host_in[i]);
  for (uint32_t i = 0; b->host_out && i < num_outputs; ++i)
    if (b->host_out[i])
      driver.api.cuMemFreeHost(b->host_out[i]);
  free(b->inputs);
  free(b->host_in);
  free(b->host_in_bytes);
  free(b->host_out);
  free(b->host_out_bytes);
  free(b->outputs);
  free(b->out_dims);
  memset(b, 0, sizeof *b);
}

static void cuda_library_free(void *state) {
  cuda_session *s = state;
  if (!s)
    return;
  driver.api.cuCtxPushCurrent(driver.context);
  if (s->stream)
    driver.api.cuStreamSynchronize(s->stream);
  for (int k = 0; k < KILN_CUDA_MAX_GRAPHS; ++k)
    free_bucket(&s->buckets[k], s->abi->num_inputs, s->abi->num_outputs);
  for (uint32_t i = 0; s->constants && i < s->abi->gpu->num_constants; ++i)
    cuda_release(NULL, s->constants[i]);
  for (uint32_t i = 0; s->host_outputs && i < s->abi->num_outputs; ++i)
    if (s->host_outputs[i])
      driver.api.cuMemFreeHost(s->host_outputs[i]);
  for (uint32_t i = 0; s->host_inputs && i < s->abi->num_inputs; ++i)
    if (s->host_inputs[i])
      driver.api.cuMemFreeHost(s->host_inputs[i]);
  for (uint32_t i = 0; s->fixed_inputs && i < s->abi->num_inputs; ++i)
    if (s->fixed_inputs[i])
      driver.api.cuMemFreeHost(s->fixed_inputs[i]);
  kiln_cublaslt_free(s->blas);
  kiln_cudnn_free(s->dnn);
  cuda_release(NULL, s->workspace);
  if (s->module)
    driver.api.cuModuleUnload(s->module);
  if (s->stream)
    driver.api.cuStreamDestroy(s->stream);
  CUcontext popped;
  driver.api.cuCtxPopCurrent(&popped);
  free(s->functions);
  free(s->constants);
  free(s->host_outputs);
  free(s->host_bytes);
  free(s->host_inputs);
  free(s->host_in_bytes);
  free(s->fixed_inputs);
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
  const char *graphs = getenv("KILN_CUDA_GRAPHS");
  s->graphs_enabled = !(graphs && strcmp(graphs, "0") == 0);
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
  driver.api.cuCtxPushCurrent(driver.context);
  CUresult r = driver.api.cuStreamCreate(&s->stream, KILN_CU_STREAM_NON_BLOCKING);
  /* A model without kernels (only views of its inputs) loads no module. */
  const kiln_gpu_binary *binary = gpu->num_kernels ? pick_binary(gpu) : NULL;
  if (r == KILN_CUDA_SUCCESS && binary)
    r = driver.api.cuModuleLoadData(&s->module, binary->data);
  CUcontext popped;
  if (r != KILN_CUDA_SUCCESS) {
    driver.api.cuCtxPopCurrent(&popped);
    cuda_library_free(s);
    return kiln_fail(KILN_ERROR_LOAD, "cannot load the model's %s for sm_%u (%s)",
                     binary->format == KILN_GPU_PTX ? "PTX" : "cubin", binary->arch,
                     result_name(r));
  }
  for (uint32_t k = 0; k < gpu->num_kernels; ++k) {
    r = driver.api.cuModuleGetFunction(&s->functions[k], s->module, gpu->kernels[k]);
    if (r != KILN_CUDA_SUCCESS) {
      driver.api.cuCtxPopCurrent(&popped);
      cuda_library_free(s);
      return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "the model's GPU code has no kernel '%s' (%s)",
                       gpu->kernels[k], result_name(r));
    }
  }
  /* Library calls: cuBLASLt, cuDNN and their workspace, before any
   * capture. */
  if (abi->num_library_calls) {
    s->workspace = cuda_allocate(NULL, KILN_CUDA_WORKSPACE_BYTES, 256);
    kiln_status created =
        !s->workspace
            ? kiln_fail(KILN_ERROR_OUT_OF_MEMORY,
                        "cannot allocate the libraries' workspace on the GPU")
            : kiln_cublaslt_create(abi, s->workspace, KILN_CUDA_WORKSPACE_BYTES, &s->blas);
    if (created == KILN_OK)
      created = kiln_cudnn_create(abi, s->stream, s->workspace, KILN_CUDA_WORKSPACE_BYTES, &s->dnn);
    if (created != KILN_OK) {
      driver.api.cuCtxPopCurrent(&popped);
      cuda_library_free(s);
      return created;
    }
  }
  driver.api.cuCtxPopCurrent(&popped);
  *state = s;
  return KILN_OK;
}

static int cuda_library_execute(void *state, uint32_t id, void *const *operands,
                                const int64_t *const *dims) {
  cuda_session *s = state;
  int rc = s->abi->library_calls[id].kind == KILN_LIBRARY_CONV
               ? kiln_cudnn_execute(s->dnn, id, operands, dims)
               : kiln_cublaslt_execute(s->blas, id, operands, dims, s->stream);
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
  if (!driver.ready)
    return 0;
  driver.api.cuCtxPushCurrent(driver.context);
  return 1;
}

static void cuda_leave(int32_t num_threads, int pushed) {
  (void)num_threads;
  CUcontext popped;
  if (pushed)
    driver.api.cuCtxPopCurrent(&popped);
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
  CUresult r = driver.api.cuLaunchKernel(s->functions[kernel], grid[0], grid[1], grid[2],
                                         block[0], block[1], block[2], 0, s->stream, params, NULL);
  if (r != KILN_CUDA_SUCCESS)
    return set_error(s, s->abi->gpu->kernels[kernel], r);
  s->stats.kernel_launches += 1;
  return 0;
}

static int cuda_read(void *state, void *host, const void *device, size_t bytes) {
  cuda_session *s = state;
  if (capturing) {
    kiln_fail(KILN_ERROR_RUN, "the model read device memory inside a CUDA Graph capture");
    return -1;
  }
  CUresult r = driver.api.cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)device, bytes,
                                            s->stream);
  if (r == KILN_CUDA_SUCCESS)
    r = driver.api.cuStreamSynchronize(s->stream);
  s->stats.bytes_to_host += bytes;
  return r == KILN_CUDA_SUCCESS ? 0 : set_error(s, "reading a value from the GPU", r);
}

static int cuda_write(void *state, void *device, const void *host, size_t bytes) {
  cuda_session *s = state;
  if (capturing) {
    kiln_fail(KILN_ERROR_RUN, "the model wrote device memory from the host inside a CUDA Graph "
                              "capture");
    return -1;
  }
  /* On the stream, after its work; the host buffer may go once it returns. */
  CUresult r = driver.api.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)device, host, bytes,
                                            s->stream);
  if (r == KILN_CUDA_SUCCESS)
    r = driver.api.cuStreamSynchronize(s->stream);
  s->stats.bytes_to_device += bytes;
  return r == KILN_CUDA_SUCCESS ? 0 : set_error(s, "writing values to the GPU", r);
}

static void *cuda_device_constant(void *state, uint32_t index, const void *host, size_t bytes) {
  cuda_session *s = state;
  if (index >= s->abi->gpu->num_constants)
    return NULL;
  if (s->constants[index])
    return s->constants[index];
  if (capturing)
    return NULL; /* the first run of every bucket uploads them, outside capture */
  void *p = cuda_allocate(NULL, bytes, 256);
  if (!p)
    return NULL;
  s->stats.bytes_to_device += bytes;
  if (driver.api.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)p, host, bytes, s->stream) !=
          KILN_CUDA_SUCCESS ||
      driver.api.cuStreamSynchronize(s->stream) != KILN_CUDA_SUCCESS) {
    cuda_release(NULL, p);
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
  stats->device_allocations = __atomic_load_n(&driver.allocations, __ATOMIC_RELAXED);
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

/* The batch of this run when its only dynamic dims are dim 0 of inputs
 * (all the same), else 0 (-1: a static model). */
static int64_t batch_of(const kiln_model_v1 *abi, const int64_t *const *in_dims) {
  int64_t batch = -1;
  for (uint32_t i = 0; i < abi->num_inputs; ++i) {
    const kiln_model_tensor *t = &abi->inputs[i];
    for (int32_t d = 0; d < t->rank; ++d) {
      if (t->dims[d] >= 0)
        continue;
      if (d != 0)
        return 0;
      if (batch >= 0 && batch != in_dims[i][0])
        return 0;
      batch = in_dims[i][0];
    }
  }
  return batch;
}

/* The bucket's batch for `batch`: the smallest declared bucket that holds
 * it, else the batch itself. */
static int64_t bucket_batch(const kiln_model_v1 *abi, int64_t batch) {
  int64_t best = -1;
  for (uint32_t k = 0; k < abi->num_batch_buckets; ++k) {
    int64_t b = (int64_t)abi->batch_buckets[k];
    if (b >= batch && (best < 0 || b < best))
      best = b;
  }
  return best > 0 ? best : batch;
}

static bucket *find_bucket(cuda_session *s, int64_t batch) {
  for (int k = 0; k < KILN_CUDA_MAX_GRAPHS; ++k)
    if (s->buckets[k].used && s->buckets[k].batch == batch)
      return &s->buckets[k];
  for (int k = 0; k < KILN_CUDA_MAX_GRAPHS; ++k)
    if (!s->buckets[k].used) {
      bucket *b = &s->buckets[k];
      uint32_t n_in = s->abi->num_inputs, n_out = s->abi->num_outputs;
      b->inputs = calloc(n_in + 1, sizeof(void *));
      b->host_in = calloc(n_in + 1, sizeof(void *));
      b->host_in_bytes = calloc(n_in + 1, sizeof(size_t));
      b->host_out = calloc(n_out + 1, sizeof(void *));
      b->host_out_bytes = calloc(n_out + 1, sizeof(size_t));
      b->outputs = calloc(n_out + 1, sizeof(void *));
      b->out_dims = calloc(n_out + 1, sizeof *b->out_dims);
      if (!b->inputs || !b->host_in || !b->host_in_bytes || !b->host_out ||
          !b->host_out_bytes || !b->outputs || !b->out_dims) {
        free_bucket(b, n_in, n_out);
        return NULL;
      }
      b->used = 1;
      b->batch = batch;
      return b;
    }
  return NULL; /* more shapes than graphs: the stream */
}

static size_t tensor_bytes(const kiln_model_tensor *t, const int64_t *dims) {
  size_t n = 1;
  for (int32_t d = 0; d < t->rank; ++d)
    n *= (size_t)dims[d];
  return n * kiln_dtype_size(t->dtype);
}

/* Makes `*buffer` (pinned host memory of `*capacity` bytes) hold `bytes`. */
static int ensure_pinned(cuda_session *s, void **buffer, size_t *capacity, size_t bytes) {
  if (bytes <= *capacity)
    return 0;
  if (*buffer)
    driver.api.cuMemFreeHost(*buffer);
  *buffer = NULL;
  *capacity = 0;
  CUresult r = driver.api.cuMemAllocHost(buffer, bytes);
  if (r != KILN_CUDA_SUCCESS)
    return set_error(s, "cuMemAllocHost", r);
  *capacity = bytes;
  return 0;
}

/* Copies output i (device `from`, dims `dims`) into the session's pinned
 * host memory, enqueued on the stream. */
static int fetch_output(cuda_session *s, uint32_t i, const void *from, const int64_t *dims,
                        void **to) {
  size_t bytes = tensor_bytes(&s->abi->outputs[i], dims);
  /* An output without elements (a NonZero that found none) still has a
   * place: the session's output is NULL only before a run. */
  if (ensure_pinned(s, &s->host_outputs[i], &s->host_bytes[i], bytes ? bytes : 1) != 0)
    return -1;
  *to = s->host_outputs[i];
  if (bytes == 0)
    return 0;
  CUresult r = driver.api.cuMemcpyDtoHAsync(*to, (CUdeviceptr)(uintptr_t)from, bytes, s->stream);
  s->stats.bytes_to_host += bytes;
  return r == KILN_CUDA_SUCCESS ? 0 : set_error(s, "copying an output to the host", r);
}

/* Enqueues the copies of the run's outputs that stay on the device into
 * their buffers (inside a capture: memcpy nodes of the graph). */
static int copy_resident_outputs(cuda_session *s, const kiln_resident *resident,
                                 void *const *device_out, int64_t *const *out_dims) {
  if (!resident || !resident->outputs)
    return 0;
  for (uint32_t i = 0; i < s->abi->num_outputs; ++i) {
    void *to = resident->outputs[i];
    size_t bytes = to ? tensor_bytes(&s->abi->outputs[i], out_dims[i]) : 0;
    if (!bytes || to == device_out[i]) /* the run returned the buffer itself */
      continue;
    CUresult r = driver.api.cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)to,
                                              (CUdeviceptr)(uintptr_t)device_out[i], bytes,
                                              s->stream);
    if (r != KILN_CUDA_SUCCESS)
      return set_error(s, "copying a parameter's update on the GPU", r);
  }
  return 0;
}

/* Whether input or output `t` has the batch a bucket pads as its dim 0. */
static int batched(const kiln_model_tensor *t) { return t->rank > 0 && t->dims[0] < 0; }

/* If `data` is one of the session's pinned buffers for input i
 * (kiln_session_input_buffer), its bytes; else 0. */
static size_t session_buffer_bytes(const cuda_session *s, uint32_t i, const void *data) {
  if (!data)
    return 0;
  if (data == s->fixed_inputs[i])
    return s->fixed_in_bytes[i];
  for (int k = 0; k < KILN_CUDA_MAX_GRAPHS; ++k)
    if (s->buckets[k].used && data == s->buckets[k].host_in[i])
      return s->buckets[k].host_in_bytes[i];
  return 0;
}

/* kiln_session_input_buffer: the pinned memory a run of a batch of `dims`
 * copies input `input` to the device from: its bucket's buffer for a
 * batched input, else the session's own. */
static void *cuda_input_buffer(void *state, uint32_t input, const int64_t *dims, size_t bytes) {
  cuda_session *s = state;
  const kiln_model_tensor *t = &s->abi->inputs[input];
  if (batched(t) && !s->reads_device) {
    int64_t padded = bucket_batch(s->abi, dims[0]);
    bucket *b = find_bucket(s, padded);
    int64_t full[KILN_MAX_RANK];
    memcpy(full, dims, (size_t)t->rank * sizeof(int64_t));
    full[0] = padded;
    if (b)
      return ensure_pinned(s, &b->host_in[input], &b->host_in_bytes[input],
                           tensor_bytes(t, full)) == 0
                 ? b->host_in[input]
                 : NULL;
  }
  return ensure_pinned(s, &s->fixed_inputs[input], &s->fixed_in_bytes[input], bytes) == 0
             ? s->fixed_inputs[input]
             : NULL;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Enqueues the inputs' copies to the device (inside a capture: memcpy
 * nodes of the graph, reading the same pinned memory at every replay). */
static int copy_inputs(cuda_session *s, void *const *device_in, void *const *sources,
                       const size_t *bytes) {
  for (uint32_t i = 0; i < s->abi->num_inputs; ++i) {
    if (!sources[i] || !bytes[i])
      continue; /* resident, or no elements */
    CUresult r = driver.api.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)device_in[i], sources[i],
                                              bytes[i], s->stream);
    if (r != KILN_CUDA_SUCCESS)
      return set_error(s, "copying an input to the device", r);
  }
  return 0;
}

/* Copies the outputs of a captured run into the bucket's pinned memory,
 * inside the capture; -1 if one is larger than at the bucket's first run
 * (its buffer was sized then). */
static int capture_outputs(cuda_session *s, bucket *b, const kiln_resident *resident,
                           void *const *device_out, int64_t *const *out_dims) {
  b->graph_out_bytes = 0;
  for (uint32_t i = 0; i < s->abi->num_outputs; ++i) {
    if (resident && resident->outputs && resident->outputs[i])
      continue;
    size_t bytes = tensor_bytes(&s->abi->outputs[i], out_dims[i]);
    if (bytes > b->host_out_bytes[i])
      return -1;
    if (bytes && driver.api.cuMemcpyDtoHAsync(b->host_out[i],
                                              (CUdeviceptr)(uintptr_t)device_out[i], bytes,
                                              s->stream) != KILN_CUDA_SUCCESS)
      return -1;
    b->graph_out_bytes += bytes;
  }
  return 0;
}

static int cuda_run(void *state, const kiln_model_v1 *abi, const kiln_runtime_services *services,
                    void *session, void *const *in_data, const int64_t *const *in_dims,
                    const kiln_resident *resident, void **out_alloc, void **out_data,
                    int64_t *const *out_dims) {
  cuda_session *s = state;
  uint64_t started = now_ns(), staging_ns = 0;
  uint32_t n_in = abi->num_inputs, n_out = abi->num_outputs;
  int64_t batch = batch_of(abi, in_dims);
  int64_t padded = batch > 0 ? bucket_batch(abi, batch) : batch;
  bucket *b = batch != 0 && !s->reads_device ? find_bucket(s, padded) : NULL;
  void *device_in[64], *sources[64];
  size_t in_bytes[64];
  int64_t dims_storage[64][KILN_MAX_RANK];
  const int64_t *dims_in[64];
  void *device_out[64];
  if (n_in > 64 || n_out > 64) {
    kiln_fail(KILN_ERROR_LOAD, "the CUDA device takes at most 64 inputs and outputs");
    return -1;
  }
  /* Inputs: device memory (the bucket's buffers, stable addresses for its
   * graph, or pool blocks for a shape that has no bucket) and the pinned
   * host memory their copies read (a real asynchronous DMA; a previous
   * run's copy from it has finished: every run ends synchronised). In a
   * bucket that memory is the bucket's or the session's, at fixed
   * addresses, so that the graph copies the inputs itself; a batch below
   * the bucket's has its extra rows zeroed there. */
  size_t total_in = 0;
  for (uint32_t i = 0; i < n_in; ++i) {
    const kiln_model_tensor *t = &abi->inputs[i];
    memcpy(dims_storage[i], in_dims[i], (size_t)t->rank * sizeof(int64_t));
    if (b && batched(t))
      dims_storage[i][0] = padded;
    dims_in[i] = dims_storage[i];
    sources[i] = NULL;
    in_bytes[i] = 0;
    if (resident && resident->inputs && resident->inputs[i]) {
      device_in[i] = resident->inputs[i]; /* in device memory already (static dims) */
      continue;
    }
    size_t given = tensor_bytes(t, in_dims[i]), bytes = tensor_bytes(t, dims_storage[i]);
    if (b) {
      if (!b->inputs[i] && !(b->inputs[i] = cuda_allocate(NULL, bytes, 256)))
        return KILN_RUN_OUT_OF_MEMORY;
      device_in[i] = b->inputs[i];
    } else {
      device_in[i] = services->allocate(session, bytes, 64);
      if (!device_in[i])
        return KILN_RUN_OUT_OF_MEMORY;
    }
    size_t own = session_buffer_bytes(s, i, in_data[i]);
    if (own && given > own) {
      kiln_fail(KILN_ERROR_SHAPE,
                "input '%s' (%zu bytes) is larger than the buffer kiln_session_input_buffer "
                "gave for it (%zu)",
                t->name, given, own);
      return -1;
    }
    void **buffer = b && batched(t) ? &b->host_in[i] : b ? &s->fixed_inputs[i] : NULL;
    size_t *capacity = b && batched(t) ? &b->host_in_bytes[i] : b ? &s->fixed_in_bytes[i] : NULL;
    if (!b && own) {
      sources[i] = in_data[i]; /* the caller wrote it into the session's memory */
    } else {
      if (!buffer) {
        buffer = &s->host_inputs[i];
        capacity = &s->host_in_bytes[i];
      }
      if (in_data[i] != *buffer && ensure_pinned(s, buffer, capacity, bytes) != 0)
        return -1;
      sources[i] = *buffer;
    }
    if (given && sources[i] != in_data[i]) {
      uint64_t copy_started = now_ns();
      memcpy(sources[i], in_data[i], given);
      staging_ns += now_ns() - copy_started;
    }
    if (bytes > given)
      memset((char *)sources[i] + given, 0, bytes - given);
    in_bytes[i] = bytes;
    total_in += bytes;
  }

  int rc = 0;
  int replayed = 0, graph_outputs = 0;
  if (b && b->exec) {
    CUresult r = driver.api.cuGraphLaunch(b->exec, s->stream);
    if (r != KILN_CUDA_SUCCESS)
      return set_error(s, "cuGraphLaunch", r);
    for (uint32_t i = 0; i < n_out; ++i) {
      device_out[i] = b->outputs[i];
      memcpy(out_dims[i], b->out_dims[i], (size_t)abi->outputs[i].rank * sizeof(int64_t));
      out_alloc[i] = NULL; /* the graph's: nothing for the pool to take back */
    }
    s->stats.graph_replays += 1;
    replayed = graph_outputs = 1;
  } else if (b && s->graphs_enabled && !b->failed && b->runs >= 1) {
    /* The second run of the bucket: captured, its inputs' and outputs'
     * copies with it (the outputs' pinned memory sized by the first run,
     * a byte more: an output without elements still has a place), then
     * launched. */
    const char *why = NULL;
    for (uint32_t i = 0; i < n_out && !why; ++i)
      if (!(resident && resident->outputs && resident->outputs[i]) &&
          ensure_pinned(s, &b->host_out[i], &b->host_out_bytes[i],
                        tensor_bytes(&abi->outputs[i], b->out_dims[i]) + 1) != 0)
        why = "no pinned memory for the outputs";
    uint64_t allocations = thread_allocations;
    CUresult r = why ? KILN_CUDA_SUCCESS
                     : driver.api.cuStreamBeginCapture(s->stream, KILN_CU_CAPTURE_THREAD_LOCAL);
    if (why) {
    } else if (r == KILN_CUDA_SUCCESS) {
      capturing = 1;
      rc = copy_inputs(s, device_in, sources, in_bytes);
      if (rc == 0)
        rc = abi->run(services, session, device_in, dims_in, out_alloc, device_out, out_dims);
      if (rc == 0)
        rc = copy_resident_outputs(s, resident, device_out, out_dims);
      int outputs_fit = rc == 0 && capture_outputs(s, b, resident, device_out, out_dims) == 0;
      capturing = 0;
      CUgraph graph = NULL;
      CUresult ended = driver.api.cuStreamEndCapture(s->stream, &graph);
      if (rc != 0)
        why = "the captured run failed";
      else if (thread_allocations != allocations)
        why = "the captured run allocated device memory";
      else if (!outputs_fit)
        why = "an output grew after the bucket's first run";
      else if (ended != KILN_CUDA_SUCCESS)
        why = result_name(ended);
      else if ((r = driver.api.cuGraphInstantiateWithFlags(&b->exec, graph, 0)) !=
               KILN_CUDA_SUCCESS)
        why = result_name(r);
      if (why) {
        if (graph)
          driver.api.cuGraphDestroy(graph);
        b->exec = NULL;
      } else {
        b->graph = graph;
      }
    } else {
      why = result_name(r);
    }
    if (why) {
      b->failed = 1;
      snprintf(s->stats.fallback, sizeof s->stats.fallback,
               "capture of batch %lld failed (%s): that bucket runs on the stream",
               (long long)b->batch, why);
      /* What the captured run allocated goes back; the run again, live. */
      for (uint32_t i = 0; i < n_out; ++i) {
        if (rc == 0)
          services->release(session, out_alloc[i]);
        out_alloc[i] = NULL;
      }
      rc = copy_inputs(s, device_in, sources, in_bytes);
      if (rc == 0)
        rc = abi->run(services, session, device_in, dims_in, out_alloc, device_out, out_dims);
      if (rc == 0)
        rc = copy_resident_outputs(s, resident, device_out, out_dims);
      s->stats.stream_runs += 1;
    } else {
      for (uint32_t i = 0; i < n_out; ++i) {
        b->outputs[i] = device_out[i];
        memcpy(b->out_dims[i], out_dims[i], (size_t)abi->outputs[i].rank * sizeof(int64_t));
      }
      b->graph_in_bytes = total_in;
      s->stats.graph_captures += 1;
      r = driver.api.cuGraphLaunch(b->exec, s->stream);
      if (r != KILN_CUDA_SUCCESS)
        rc = set_error(s, "cuGraphLaunch", r);
      graph_outputs = 1;
    }
  } else {
    rc = copy_inputs(s, device_in, sources, in_bytes);
    if (rc == 0)
      rc = abi->run(services, session, device_in, dims_in, out_alloc, device_out, out_dims);
    if (rc == 0)
      rc = copy_resident_outputs(s, resident, device_out, out_dims);
    s->stats.stream_runs += 1;
    /* The bucket's output dims, for sizing its graph's output memory. */
    for (uint32_t i = 0; b && rc == 0 && i < n_out; ++i)
      memcpy(b->out_dims[i], out_dims[i], (size_t)abi->outputs[i].rank * sizeof(int64_t));
  }
  if (b && rc == 0)
    b->runs += 1; /* a capture needs a run that sized the bucket's outputs */
  if (graph_outputs) {
    /* The graph copied the inputs and outputs. */
    s->stats.bytes_to_device += b->graph_in_bytes;
    s->stats.bytes_to_host += b->graph_out_bytes;
  } else {
    s->stats.bytes_to_device += total_in;
  }
  /* Outputs on the host (the graph's copies, or copies enqueued now); a
   * padded batch's cut back to the rows asked for. */
  for (uint32_t i = 0; rc == 0 && i < n_out; ++i) {
    if (b && batch > 0 && batched(&abi->outputs[i]) && out_dims[i][0] == padded)
      out_dims[i][0] = batch;
    if (resident && resident->outputs && resident->outputs[i])
      out_data[i] = NULL; /* copied on the device above */
    else if (graph_outputs)
      out_data[i] = b->host_out[i];
    else
      rc = fetch_output(s, i, device_out[i], out_dims[i], &out_data[i]);
  }
  uint64_t enqueued = now_ns();
  CUresult r = driver.api.cuStreamSynchronize(s->stream);
  if (rc == 0 && r != KILN_CUDA_SUCCESS)
    rc = set_error(s, "running the model on the GPU", r);
  if (replayed) {
    s->stats.replay_host_ns += enqueued - started;
    s->stats.replay_staging_ns += staging_ns;
  }
  if (!b)
    for (uint32_t i = 0; i < n_in; ++i)
      if (!resident || !resident->inputs || !resident->inputs[i])
        services->release(session, device_in[i]);
  return rc;
}

static const kiln_device cuda_device = {
    "cuda",           KILN_DEVICE_CUDA,     cuda_check_model,     cuda_allocate,
    cuda_release,     cuda_library_create,  cuda_library_free,    cuda_library_execute,
    cuda_parallel_for, cuda_enter,          cuda_leave,           cuda_synchronize,
    /* memory_is_host */ 0, cuda_run,       cuda_launch_kernel,   cuda_device_constant,
    cuda_stats,       cuda_plan_stats,      cuda_read,            cuda_write,
    cuda_input_buffer};

const kiln_device *kiln_cuda_device(void) { return &cuda_device; }
