/*===- cuda_session.h - the CUDA device's driver and sessions, inside -----===*
 *
 * What cuda.c (the driver, sessions, the device table) and cuda_graphs.c
 * (batch buckets, the copies between host and device, capture and replay
 * of a run) share. Not installed.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_CUDA_SESSION_H
#define KILN_RUNTIME_DEVICES_CUDA_SESSION_H

#include "cublaslt.h"
#include "cuda_api.h"
#include "cudnn.h"
#include "device.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/* The libraries' workspace a session (cuBLASLt and cuDNN share it): what
 * their heuristics may ask for. */
#define KILN_CUDA_WORKSPACE_BYTES ((size_t)32 << 20)

/* The driver, once a process (cuda.c loads it). */
typedef struct kiln_cuda_driver {
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
} kiln_cuda_driver;
extern kiln_cuda_driver kiln_cuda;

/* This thread's capture (sessions on other threads run on: captures are
 * thread-local) and the allocations this thread made. */
extern __thread int kiln_cuda_capturing;
extern __thread uint64_t kiln_cuda_thread_allocations;

static inline const char *result_name(CUresult r) {
  const char *name = NULL;
  if (kiln_cuda.api.cuGetErrorName && kiln_cuda.api.cuGetErrorName(r, &name) == KILN_CUDA_SUCCESS &&
      name)
    return name;
  return "unknown CUDA error";
}

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
  /* Pinned memory the run's host code writes to the device through
   * (write_device: a string operation's result), so that such a write is
   * enqueued without waiting: `write_used` bytes taken by copies enqueued
   * since the stream was last synchronised, `write_wanted` the most such
   * copies asked for (the next run grows it to that); `in_run` while
   * kiln_cuda_run runs. */
  void *write_staging;
  size_t write_capacity, write_used, write_wanted;
  int in_run;
  kiln_device_stats stats;
  /* The matmul calls (cublaslt.c), the convolutions (cudnn.c) and the
   * workspace they share (one stream: one call at a time). */
  kiln_cublaslt *blas;
  kiln_cudnn *dnn;
  void *workspace;
} cuda_session;

static inline int set_error(cuda_session *s, const char *what, CUresult r) {
  kiln_fail(KILN_ERROR_RUN, "%s failed (%s)", what, result_name(r));
  (void)s;
  return -1;
}

/* Makes `*buffer` (pinned host memory of `*capacity` bytes) hold `bytes`. */
static inline int ensure_pinned(cuda_session *s, void **buffer, size_t *capacity, size_t bytes) {
  if (bytes <= *capacity)
    return 0;
  if (*buffer)
    kiln_cuda.api.cuMemFreeHost(*buffer);
  *buffer = NULL;
  *capacity = 0;
  CUresult r = kiln_cuda.api.cuMemAllocHost(buffer, bytes);
  if (r != KILN_CUDA_SUCCESS)
    return set_error(s, "cuMemAllocHost", r);
  *capacity = bytes;
  return 0;
}

/* Frees the pinned host buffers of `buffers` (n of them, NULL ones
 * skipped) and the array itself. */
static inline void free_pinned(void **buffers, uint32_t n) {
  for (uint32_t i = 0; buffers && i < n; ++i)
    if (buffers[i])
      kiln_cuda.api.cuMemFreeHost(buffers[i]);
  free(buffers);
}

/* Device memory (cuda.c): the driver's allocations, counted. */
void *kiln_cuda_allocate(const kiln_allocator *allocator, size_t bytes, size_t alignment);
void kiln_cuda_release(const kiln_allocator *allocator, void *ptr);

/* cuda_graphs.c: a bucket's buffers and graph freed; a run (the device
 * table's `run`); kiln_session_input_buffer's memory (`input_buffer`). */
void kiln_cuda_free_bucket(bucket *b, uint32_t num_inputs, uint32_t num_outputs);
int kiln_cuda_run(void *state, const kiln_model_v1 *abi, const kiln_runtime_services *services,
                  void *session, void *const *in_data, const int64_t *const *in_dims,
                  const kiln_resident *resident, void **out_alloc, void **out_data,
                  int64_t *const *out_dims);
void *kiln_cuda_input_buffer(void *state, uint32_t input, const int64_t *dims, size_t bytes);

/* cuda.c: before a run, the write staging made ready (the copies of a
 * run that stopped early waited for, grown to what the last run wanted);
 * after it, released (`finished`: the stream was synchronised). */
int kiln_cuda_begin_writes(cuda_session *s);
void kiln_cuda_end_writes(cuda_session *s, int finished);

#endif
