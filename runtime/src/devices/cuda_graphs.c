/*===- cuda_graphs.c - the CUDA device's runs: buckets, copies, CUDA Graphs ===*
 *
 * A run of a CUDA session (cuda.c has the driver and the sessions): its
 * inputs copied to device buffers of its batch bucket through pinned host
 * memory, the compiled host code run on the stream (first run of a
 * bucket), captured into a CUDA Graph with the copies (second) or the
 * graph replayed (later runs), the outputs copied back into pinned memory;
 * a training step's resident tensors read and updated in device memory.
 * The design is in cuda.c's header and docs/Gpu.md.
 *
 *===----------------------------------------------------------------------===*/
#include "cuda_session.h"
#include "../host_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void kiln_cuda_free_bucket(bucket *b, uint32_t num_inputs, uint32_t num_outputs) {
  if (b->exec)
    kiln_cuda.api.cuGraphExecDestroy(b->exec);
  if (b->graph)
    kiln_cuda.api.cuGraphDestroy(b->graph);
  for (uint32_t i = 0; b->inputs && i < num_inputs; ++i)
    kiln_cuda_release(NULL, b->inputs[i]);
  free_pinned(b->host_in, num_inputs);
  free_pinned(b->host_out, num_outputs);
  free(b->inputs);
  free(b->host_in_bytes);
  free(b->host_out_bytes);
  free(b->outputs);
  free(b->out_dims);
  memset(b, 0, sizeof *b);
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
        kiln_cuda_free_bucket(b, n_in, n_out);
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
  CUresult r = kiln_cuda.api.cuMemcpyDtoHAsync(*to, (CUdeviceptr)(uintptr_t)from, bytes, s->stream);
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
    CUresult r = kiln_cuda.api.cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)to,
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
void *kiln_cuda_input_buffer(void *state, uint32_t input, const int64_t *dims, size_t bytes) {
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

/* Enqueues the inputs' copies to the device (inside a capture: memcpy
 * nodes of the graph, reading the same pinned memory at every replay). */
static int copy_inputs(cuda_session *s, void *const *device_in, void *const *sources,
                       const size_t *bytes) {
  for (uint32_t i = 0; i < s->abi->num_inputs; ++i) {
    if (!sources[i] || !bytes[i])
      continue; /* resident, or no elements */
    CUresult r = kiln_cuda.api.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)device_in[i], sources[i],
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
    if (bytes && kiln_cuda.api.cuMemcpyDtoHAsync(b->host_out[i],
                                              (CUdeviceptr)(uintptr_t)device_out[i], bytes,
                                              s->stream) != KILN_CUDA_SUCCESS)
      return -1;
    b->graph_out_bytes += bytes;
  }
  return 0;
}

/* A run's arrays, as cuda_run's caller gives them and as it fills them. */
typedef struct run_io {
  const kiln_runtime_services *services;
  void *session;
  const kiln_resident *resident;
  void **device_in, **sources;
  const int64_t **dims_in;
  size_t *in_bytes;
  void **out_alloc, **device_out;
  int64_t *const *out_dims;
} run_io;

/* Enqueues a run on the stream (or into the capture under way): the
 * inputs' copies, the compiled host code, the resident outputs' copies. */
static int enqueue_run(cuda_session *s, const run_io *io) {
  int rc = copy_inputs(s, io->device_in, io->sources, io->in_bytes);
  if (rc == 0)
    rc = s->abi->run(io->services, io->session, io->device_in, io->dims_in, io->out_alloc,
                     io->device_out, io->out_dims);
  if (rc == 0)
    rc = copy_resident_outputs(s, io->resident, io->device_out, io->out_dims);
  return rc;
}

/* A run: kiln_cuda_run less the write staging's bookkeeping. `*finished`
 * is set once the stream is synchronised at its end. */
static int run_on_stream(cuda_session *s, const kiln_model_v1 *abi,
                         const kiln_runtime_services *services, void *session,
                         void *const *in_data, const int64_t *const *in_dims,
                         const kiln_resident *resident, void **out_alloc, void **out_data,
                         int64_t *const *out_dims, int *finished) {
  uint64_t started = kiln_now_ns(), staging_ns = 0;
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
      if (!b->inputs[i] && !(b->inputs[i] = kiln_cuda_allocate(NULL, bytes, 256)))
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
      uint64_t copy_started = kiln_now_ns();
      memcpy(sources[i], in_data[i], given);
      staging_ns += kiln_now_ns() - copy_started;
    }
    if (bytes > given)
      memset((char *)sources[i] + given, 0, bytes - given);
    in_bytes[i] = bytes;
    total_in += bytes;
  }

  run_io io = {services, session,  resident, device_in, sources,
               dims_in,  in_bytes, out_alloc, device_out, out_dims};
  int rc = 0;
  int replayed = 0, graph_outputs = 0;
  if (b && b->exec) {
    CUresult r = kiln_cuda.api.cuGraphLaunch(b->exec, s->stream);
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
    uint64_t allocations = kiln_cuda_thread_allocations;
    CUresult r = why ? KILN_CUDA_SUCCESS
                     : kiln_cuda.api.cuStreamBeginCapture(s->stream, KILN_CU_CAPTURE_THREAD_LOCAL);
    if (why) {
    } else if (r == KILN_CUDA_SUCCESS) {
      kiln_cuda_capturing = 1;
      rc = enqueue_run(s, &io);
      int outputs_fit = rc == 0 && capture_outputs(s, b, resident, device_out, out_dims) == 0;
      kiln_cuda_capturing = 0;
      CUgraph graph = NULL;
      CUresult ended = kiln_cuda.api.cuStreamEndCapture(s->stream, &graph);
      if (rc != 0)
        why = "the captured run failed";
      else if (kiln_cuda_thread_allocations != allocations)
        why = "the captured run allocated device memory";
      else if (!outputs_fit)
        why = "an output grew after the bucket's first run";
      else if (ended != KILN_CUDA_SUCCESS)
        why = result_name(ended);
      else if ((r = kiln_cuda.api.cuGraphInstantiateWithFlags(&b->exec, graph, 0)) !=
               KILN_CUDA_SUCCESS)
        why = result_name(r);
      if (why) {
        if (graph)
          kiln_cuda.api.cuGraphDestroy(graph);
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
      rc = enqueue_run(s, &io);
      s->stats.stream_runs += 1;
    } else {
      for (uint32_t i = 0; i < n_out; ++i) {
        b->outputs[i] = device_out[i];
        memcpy(b->out_dims[i], out_dims[i], (size_t)abi->outputs[i].rank * sizeof(int64_t));
      }
      b->graph_in_bytes = total_in;
      s->stats.graph_captures += 1;
      r = kiln_cuda.api.cuGraphLaunch(b->exec, s->stream);
      if (r != KILN_CUDA_SUCCESS)
        rc = set_error(s, "cuGraphLaunch", r);
      graph_outputs = 1;
    }
  } else {
    rc = enqueue_run(s, &io);
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
  uint64_t enqueued = kiln_now_ns();
  CUresult r = kiln_cuda.api.cuStreamSynchronize(s->stream);
  if (rc == 0 && r != KILN_CUDA_SUCCESS)
    rc = set_error(s, "running the model on the GPU", r);
  *finished = r == KILN_CUDA_SUCCESS;
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

int kiln_cuda_run(void *state, const kiln_model_v1 *abi, const kiln_runtime_services *services,
                  void *session, void *const *in_data, const int64_t *const *in_dims,
                  const kiln_resident *resident, void **out_alloc, void **out_data,
                  int64_t *const *out_dims) {
  cuda_session *s = state;
  if (kiln_cuda_begin_writes(s) != 0)
    return -1;
  int finished = 0;
  int rc = run_on_stream(s, abi, services, session, in_data, in_dims, resident, out_alloc,
                         out_data, out_dims, &finished);
  kiln_cuda_end_writes(s, finished);
  return rc;
}
