/*===- onednn.c - the CPU device's convolutions and matmuls in oneDNN ------===*
 *
 * oneDNN is loaded with dlopen the first time a model needs it (its
 * functions through one table, onednn_api.h / onednn_load.c), so the
 * runtime links no vendor library and a host without oneDNN runs every
 * model compiled without library calls.
 *
 * Each library call of an artifact becomes oneDNN primitives, created when
 * the session is created for each batch the artifact declares
 * (`--batch-buckets`; dynamic dims taken as 1 when it declares none); a run
 * with other dims creates one for those at that run (a convolution or
 * pool whose spatial dims are known only at run time: one per input
 * shape, made at the first run with it). Up to KILN_VARIANTS
 * primitives per call are kept (least recently used replaced), with one
 * scratchpad for the session (each kind's primitive is made in
 * onednn_primitives.c). A call binds the operand pointers to prepared
 * memory objects and executes.
 * Layouts: a convolution's activation is channels-first (NCHW, what
 * generated code reads and writes) or channels-last (NHWC, kept by the
 * compiler between convolutions, pools, concats and channel scales); a
 * convolution with one side channels-last runs channels-last on both and
 * reorders the other side through a staging buffer; with both sides
 * channels-first oneDNN picks its layout and both are reordered. A pool
 * or a channel scale (oneDNN's binary multiplication) runs in its
 * input's layout. A concat reads and writes each operand in its own
 * layout. An [N,C,1,1] operand is the same bytes in either layout. A
 * convolution's weights are packed once into the layout oneDNN picks;
 * matmuls run on row-major operands.
 * A fused epilogue becomes oneDNN's bias argument and post-ops: a sum
 * with the residual the output buffer already holds, then an eltwise
 * activation (a hard sigmoid: linear, then a clip to [0, 1]).
 *
 *===----------------------------------------------------------------------===*/

#include "onednn.h"
#include "device.h"
#include "kiln/kiln_toolchain.h"

#include "onednn_state.h"
#include "../host_env.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void release_variant(prepared_call *c, variant *v) {
  if (v->primitive) dnnl_primitive_destroy(v->primitive);
  if (v->src) dnnl_memory_destroy(v->src);
  if (v->weights) dnnl_memory_destroy(v->weights);
  if (v->dst) dnnl_memory_destroy(v->dst);
  if (v->bias) dnnl_memory_destroy(v->bias);
  if (v->scratchpad) dnnl_memory_destroy(v->scratchpad);
  for (int32_t k = 0; v->sources && k < c->desc.num_inputs; ++k)
    if (v->sources[k]) dnnl_memory_destroy(v->sources[k]);
  free(v->sources);
  kiln_release_reorder(&v->src_in);
  kiln_release_reorder(&v->dst_in);
  kiln_release_reorder(&v->dst_out);
  kiln_release_reorder(&v->weights_pack);
  kiln_release_reorder(&v->weights_unpack);
  if (v->pack && --v->pack->users == 0) {
    free(v->pack->data);
    memset(v->pack, 0, sizeof *v->pack);
  }
  free(v->run_weights);
  memset(v, 0, sizeof *v);
  v->batch = -1;
  if (c->last == v)
    c->last = NULL;
}

static void release_call(prepared_call *c) {
  for (int i = 0; i < KILN_VARIANTS; ++i)
    release_variant(c, &c->variants[i]);
}


/* Whether `v` was made for these operand dims (its batch; a convolution's
 * or pool's input dims; a concat's output dims; a matmul's lhs and rhs
 * dims) and `threads`, the OpenMP thread count in force. */
static int variant_fits(const prepared_call *c, const variant *v, const int64_t *const *dims,
                        int threads) {
  if (v->batch < 0 || v->threads != threads)
    return 0;
  if (c->desc.kind == KILN_LIBRARY_CONV || c->desc.kind == KILN_LIBRARY_POOL ||
      c->desc.kind == KILN_LIBRARY_SCALE)
    return memcmp(v->shape[0], dims[0], 4 * sizeof(int64_t)) == 0 &&
           (c->desc.kind != KILN_LIBRARY_SCALE || v->shape[1][0] == dims[1][0]);
  if (c->desc.kind == KILN_LIBRARY_CONCAT)
    return memcmp(v->shape[0], dims[c->desc.num_inputs], 4 * sizeof(int64_t)) == 0;
  if (c->desc.kind != KILN_LIBRARY_MATMUL)
    return v->batch == dims[0][0];
  for (int i = 0; i < c->desc.input_rank; ++i)
    if (v->shape[0][i] != dims[0][i])
      return 0;
  for (int i = 0; i < c->desc.weight_rank; ++i)
    if (v->shape[1][i] != dims[1][i])
      return 0;
  return 1;
}

/* Makes a primitive of `c` for operand dims `dims` (in the order the
 * call passes its operands: a convolution's input, weight and output, a
 * pool's input and output, a concat's inputs and output, a matmul's lhs,
 * rhs and output) into `v`,
 * which is released first. */
static int prepare_variant(kiln_library_state *state, prepared_call *c, variant *v,
                           const int64_t *const *dims) {
  release_variant(c, v);
  int rc;
  switch (c->desc.kind) {
  case KILN_LIBRARY_CONV: rc = kiln_onednn_prepare_conv(state, c, v, dims[0], dims[2]); break;
  case KILN_LIBRARY_POOL: rc = kiln_onednn_prepare_pool(state, c, v, dims[0], dims[1]); break;
  case KILN_LIBRARY_CONCAT:
    rc = kiln_onednn_prepare_concat(state, c, v, dims[c->desc.num_inputs]);
    break;
  case KILN_LIBRARY_SCALE:
    rc = kiln_onednn_prepare_scale(state, c, v, dims[0], dims[1][0]);
    break;
  default: rc = kiln_onednn_prepare_matmul(state, c, v, dims[0], dims[1], dims[2]); break;
  }
  const_dnnl_primitive_desc_t pd = NULL;
  const char *impl = NULL;
  if (!rc && dnnl_primitive_get_primitive_desc(v->primitive, &pd) == dnnl_success &&
      dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
    snprintf(v->implementation, sizeof v->implementation, "%s", impl);
  if (rc)
    release_variant(c, v);
  else
    v->threads = omp_get_max_threads();
  return rc;
}

/* The primitive of `c` for these operand dims: a kept one, or a new one
 * in place of the least recently used; NULL when oneDNN refuses. */
static variant *find_variant(kiln_library_state *state, prepared_call *c,
                             const int64_t *const *dims) {
  variant *slot = NULL; /* the first unused, else the least recently used */
  int threads = omp_get_max_threads();
  for (int i = 0; i < KILN_VARIANTS; ++i) {
    variant *v = &c->variants[i];
    if (variant_fits(c, v, dims, threads)) {
      v->last_used = ++state->clock;
      return v;
    }
    if (!slot || (slot->batch >= 0 && (v->batch < 0 || v->last_used < slot->last_used)))
      slot = v;
  }
  if (prepare_variant(state, c, slot, dims))
    return NULL;
  slot->last_used = ++state->clock;
  return slot;
}

/* The spatial output size prepare_batch takes for a convolution's dims
 * known only at run time when it must guess one (to prepack weights: the
 * layout oneDNN picks for them hardly depends on the image's size). */
#define KILN_GUESSED_SPATIAL 32

/* Fills the spatial sizes of convolution `d` known only at run time (-1
 * in `in_hw`, `out_hw`) with a guess: an unknown output
 * KILN_GUESSED_SPATIAL, an unknown input the size that gives the output.
 * 1 when the window gives no such sizes. */
static int guess_conv_image(const call_view *d, int64_t in_hw[2], int64_t out_hw[2]) {
  for (int i = 0; i < 2; ++i) {
    int64_t extent = (d->weight_dims[2 + i] - 1) * d->dilations[i] + 1;
    int64_t padding = d->pads[i] + d->pads[2 + i];
    if (out_hw[i] < 0)
      out_hw[i] = in_hw[i] < 0 ? KILN_GUESSED_SPATIAL
                               : (in_hw[i] + padding - extent) / d->strides[i] + 1;
    if (in_hw[i] < 0)
      in_hw[i] = (out_hw[i] - 1) * d->strides[i] + extent - padding;
    if (in_hw[i] < 1 || out_hw[i] < 1)
      return 1;
  }
  return 0;
}

/* Prepares call `c` for a batch `batch` as a session's creation does (a
 * static batch: its own): a convolution, pool or concat for that batch,
 * a matmul with its dynamic dims taken as `batch` (where the batch is
 * another dim, a guess; one oneDNN refuses is no error: the first run
 * prepares). A convolution, pool, concat or scale with spatial dims known
 * only at run time is left to its first run, unless `guess_spatial` (then a
 * convolution's output is taken as KILN_GUESSED_SPATIAL square). Constant
 * weights get packed. */
static int prepare_batch(kiln_library_state *state, prepared_call *c, int64_t batch,
                         int guess_spatial) {
  const call_view *d = &c->desc;
  int64_t in_hw[2] = {0, 0}, out_hw[2] = {0, 0};
  if (d->kind == KILN_LIBRARY_CONV || d->kind == KILN_LIBRARY_POOL) {
    in_hw[0] = d->input_dims[2], in_hw[1] = d->input_dims[3];
    out_hw[0] = d->output_dims[2], out_hw[1] = d->output_dims[3];
  }
  if (d->kind == KILN_LIBRARY_CONCAT || d->kind == KILN_LIBRARY_SCALE)
    out_hw[0] = d->output_dims[2], out_hw[1] = d->output_dims[3];
  if (in_hw[0] < 0 || in_hw[1] < 0 || out_hw[0] < 0 || out_hw[1] < 0) {
    if (!guess_spatial || d->kind != KILN_LIBRARY_CONV)
      return 0;
    if (guess_conv_image(d, in_hw, out_hw))
      return 1;
  }
  int64_t shapes[3][KILN_MAX_RANK];
  int weighted = d->kind == KILN_LIBRARY_MATMUL || d->kind == KILN_LIBRARY_SCALE;
  const int64_t *given[3] = {d->input_dims, weighted ? d->weight_dims : d->output_dims,
                             d->output_dims};
  int ranks[3] = {d->input_rank, weighted ? d->weight_rank : d->rank, d->rank};
  int guessed = 0;
  for (int k = 0; k < 3; ++k)
    for (int r = 0; r < ranks[k]; ++r) {
      shapes[k][r] = given[k][r] >= 0 ? given[k][r] : batch;
      guessed |= given[k][r] < 0;
    }
  /* A convolution's image size (the guess, where it is one): the
   * operands are the input, then the output twice. */
  if (d->kind == KILN_LIBRARY_CONV)
    for (int i = 0; i < 2; ++i) {
      shapes[0][2 + i] = in_hw[i];
      shapes[1][2 + i] = shapes[2][2 + i] = out_hw[i];
    }
  /* A concat's operands: the inputs, then the output (whose dims it is
   * prepared from). */
  const int64_t *dims[KILN_LIBRARY_MAX_CONCAT_INPUTS + 1] = {shapes[0], shapes[1], shapes[2]};
  if (d->kind == KILN_LIBRARY_CONCAT)
    for (int k = 0; k <= d->num_inputs; ++k)
      dims[k] = shapes[2];
  int threads = omp_get_max_threads();
  for (int i = 0; i < KILN_VARIANTS; ++i)
    if (variant_fits(c, &c->variants[i], dims, threads))
      return 0;
  if (!find_variant(state, c, dims))
    return d->kind == KILN_LIBRARY_MATMUL ? !guessed : 1;
  return 0;
}

kiln_status kiln_onednn_create(const kiln_model_v1 *abi, void **out) {
  *out = NULL;
  if (abi->num_library_calls == 0)
    return KILN_OK;
  kiln_status loaded = kiln_onednn_load("the model");
  if (loaded != KILN_OK)
    return loaded;
  kiln_library_state *state = calloc(1, sizeof(*state));
  if (!state)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  state->num_calls = abi->num_library_calls;
  state->no_winograd = kiln_env_is("KILN_ONEDNN_WINOGRAD", "0");
  if (state->num_calls) {
    state->calls = calloc(state->num_calls, sizeof(prepared_call));
    if (!state->calls || dnnl_engine_create(&state->engine, dnnl_cpu, 0) ||
        dnnl_stream_create(&state->stream, state->engine, dnnl_stream_default_flags)) {
      kiln_onednn_free(state);
      return kiln_fail(KILN_ERROR_RUN, "oneDNN cannot create its CPU engine");
    }
  }
  for (uint32_t i = 0; i < state->num_calls; ++i) {
    prepared_call *c = &state->calls[i];
    for (int k = 0; k < KILN_VARIANTS; ++k)
      c->variants[k].batch = -1;
    int invalid = kiln_read_call(&abi->library_calls[i], &c->desc);
    if (invalid) {
      kiln_onednn_free(state);
      if (invalid == 2)
        return kiln_fail(KILN_ERROR_FORMAT,
                         "library call %u has weights prepacked by another oneDNN version "
                         "(layout of %u bytes, this oneDNN's is %zu); recompile the model",
                         i, abi->library_calls[i].weights_layout_bytes,
                         sizeof(dnnl_memory_desc_t));
      return kiln_fail(KILN_ERROR_FORMAT, "library call %u has an invalid description", i);
    }
  }
  /* Every call is prepared now for each batch the artifact declares (1
   * when it declares none; a static batch: its own); a run with other
   * dims prepares at that run and keeps the primitive. */
  uint32_t num_batches = abi->num_batch_buckets ? abi->num_batch_buckets : 1;
  for (uint32_t b = 0; b < num_batches; ++b) {
    int64_t batch = abi->num_batch_buckets ? (int64_t)abi->batch_buckets[b] : 1;
    for (uint32_t i = 0; i < state->num_calls; ++i)
      if (prepare_batch(state, &state->calls[i], batch, 0)) {
        kiln_onednn_free(state);
        return kiln_fail(KILN_ERROR_RUN, "oneDNN cannot prepare library call %u (batch %lld)",
                         i, (long long)batch);
      }
  }
  *out = state;
  return KILN_OK;
}

void kiln_onednn_free(void *opaque) {
  kiln_library_state *state = opaque;
  if (!state)
    return;
  for (uint32_t i = 0; state->calls && i < state->num_calls; ++i)
    release_call(&state->calls[i]);
  free(state->calls);
  free(state->staging[0]);
  free(state->staging[1]);
  free(state->scratch);
  if (state->stream) dnnl_stream_destroy(state->stream);
  if (state->engine) dnnl_engine_destroy(state->engine);
  free(state);
}

/* Appends the session's scratchpad to `args` when `v` has one. */
static int bind_scratchpad(kiln_library_state *state, variant *v, dnnl_exec_arg_t *args,
                           int *count) {
  if (!v->scratchpad)
    return 0;
  if (dnnl_memory_set_data_handle(v->scratchpad, state->scratch))
    return 1;
  args[(*count)++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, v->scratchpad};
  return 0;
}

/* Runs a prepared concat on its operands (the inputs, then the output). */
static int execute_concat(kiln_library_state *state, prepared_call *c, variant *v,
                          void *const *operands) {
  int32_t n = c->desc.num_inputs;
  dnnl_exec_arg_t args[KILN_LIBRARY_MAX_CONCAT_INPUTS + 2];
  int count = 0;
  for (int32_t k = 0; k < n; ++k) {
    if (dnnl_memory_set_data_handle(v->sources[k], operands[k]))
      return 1;
    args[count++] = (dnnl_exec_arg_t){DNNL_ARG_MULTIPLE_SRC + k, v->sources[k]};
  }
  if (dnnl_memory_set_data_handle(v->dst, operands[n]))
    return 1;
  args[count++] = (dnnl_exec_arg_t){DNNL_ARG_DST, v->dst};
  if (bind_scratchpad(state, v, args, &count))
    return 1;
  return dnnl_primitive_execute(v->primitive, state->stream, count, args) != dnnl_success ||
         dnnl_stream_wait(state->stream) != dnnl_success;
}

/* Whether the output of `c` has no elements at operand dims `dims`
 * (the inputs, the weights or scale where there are some, the output). */
static int output_is_empty(const prepared_call *c, const int64_t *const *dims) {
  int k = c->desc.kind == KILN_LIBRARY_CONCAT ? c->desc.num_inputs
          : c->desc.kind == KILN_LIBRARY_POOL ? 1
                                              : 2;
  for (int r = 0; r < c->desc.rank; ++r)
    if (dims[k][r] == 0)
      return 1;
  return 0;
}

const char *kiln_onednn_implementation(void *opaque, uint32_t id) {
  kiln_library_state *state = opaque;
  if (!state || id >= state->num_calls || !state->calls[id].last)
    return NULL;
  return state->calls[id].last->implementation;
}

int kiln_onednn_execute(void *opaque, uint32_t id, void *const *operands,
                        const int64_t *const *dims) {
  kiln_library_state *state = opaque;
  if (!state || id >= state->num_calls)
    return 1;
  prepared_call *c = &state->calls[id];
  /* An output with no elements (a dynamic batch of 0, or a matmul's rows
   * or batch dims of 0; the other dims are static and not 0): nothing to
   * compute, and oneDNN rejects such shapes or divides by 0 on them. */
  if (output_is_empty(c, dims))
    return 0;
  /* A global pool over an image of no positions (a window of -1, the
   * input's size at the run, over an empty dim): each mean is over
   * nothing, NaN as Kiln's loops give (0 / 0); oneDNN takes no empty
   * input. */
  if (c->desc.kind == KILN_LIBRARY_POOL && (c->desc.kernel[0] == -1 || c->desc.kernel[1] == -1) &&
      (dims[0][2] == 0 || dims[0][3] == 0)) {
    float *out = operands[1];
    for (int64_t i = 0, n = dims[1][0] * dims[1][1] * dims[1][2] * dims[1][3]; i < n; ++i)
      out[i] = NAN;
    return 0;
  }
  /* A scale's batch broadcasts to the input's (one of two dynamic dims
   * the compiler could not prove equal); its input and output have the
   * same dims (spatial dims known only at run time among them). */
  if (c->desc.kind == KILN_LIBRARY_SCALE &&
      ((dims[1][0] != 1 && dims[1][0] != dims[0][0]) ||
       memcmp(dims[0], dims[2], 4 * sizeof(int64_t)) != 0 ||
       dims[0][1] != c->desc.input_dims[1]))
    return 1;
  if (c->desc.kind == KILN_LIBRARY_CONCAT && !kiln_concat_dims_agree(&c->desc, dims))
    return 1;
  variant *v = find_variant(state, c, dims);
  if (!v)
    return 1;
  c->last = v;
  if (c->desc.kind == KILN_LIBRARY_CONCAT)
    return execute_concat(state, c, v, operands);
  /* The operands in order: input, weight (a scale's: the scale; a pool
   * has none), output, then the bias. */
  int has_weights = c->desc.kind != KILN_LIBRARY_POOL;
  void *src = operands[0], *weights = has_weights ? operands[1] : NULL;
  void *out = operands[has_weights ? 2 : 1], *dst = out;
  if (v->src_in.primitive) {
    if (kiln_run_reorder(state->stream, &v->src_in, src, state->staging[0]))
      return 1;
    src = state->staging[0];
  }
  if (v->dst_out.primitive) {
    if (v->dst_in.primitive &&
        kiln_run_reorder(state->stream, &v->dst_in, dst, state->staging[1]))
      return 1;
    dst = state->staging[1];
  }
  if (v->pack) {
    weights = v->pack->data;
  } else if (v->weights_pack.primitive) {
    if (kiln_run_reorder(state->stream, &v->weights_pack, weights, v->run_weights))
      return 1;
    weights = v->run_weights;
  }
  if (dnnl_memory_set_data_handle(v->src, src) || dnnl_memory_set_data_handle(v->dst, dst) ||
      (v->weights && dnnl_memory_set_data_handle(v->weights, weights)))
    return 1;
  dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, v->src}, {DNNL_ARG_DST, v->dst}};
  int n = 2;
  if (v->weights)
    args[n++] = (dnnl_exec_arg_t){
        c->desc.kind == KILN_LIBRARY_SCALE ? DNNL_ARG_SRC_1 : DNNL_ARG_WEIGHTS, v->weights};
  if (c->desc.has_bias) {
    if (dnnl_memory_set_data_handle(v->bias, operands[3]))
      return 1;
    /* A scale's bias is its first post-op's second source. */
    args[n++] = (dnnl_exec_arg_t){c->desc.kind == KILN_LIBRARY_SCALE
                                      ? (DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1)
                                      : DNNL_ARG_BIAS,
                                  v->bias};
  }
  if (bind_scratchpad(state, v, args, &n))
    return 1;
  if (dnnl_primitive_execute(v->primitive, state->stream, n, args))
    return 1;
  if (v->dst_out.primitive && kiln_run_reorder(state->stream, &v->dst_out, dst, out))
    return 1;
  return dnnl_stream_wait(state->stream) ? 1 : 0;
}

kiln_status kiln_cpu_prepack_weights(const kiln_library_call *call, int32_t num_threads,
                                     void **packed, size_t *packed_bytes, void **layout,
                                     size_t *layout_bytes) {
  *packed = *layout = NULL;
  *packed_bytes = *layout_bytes = 0;
  kiln_status loaded = kiln_onednn_load("prepacking weights");
  if (loaded != KILN_OK)
    return loaded;
  prepared_call c;
  memset(&c, 0, sizeof c);
  for (int k = 0; k < KILN_VARIANTS; ++k)
    c.variants[k].batch = -1;
  if (kiln_read_call(call, &c.desc) || !c.desc.weights || c.desc.weights_layout)
    return kiln_fail(KILN_ERROR_FORMAT, "prepacking needs a valid call with plain constant weights");
  kiln_library_state state;
  memset(&state, 0, sizeof state);
  int saved_threads = omp_get_max_threads();
  if (num_threads > 0)
    omp_set_num_threads(num_threads);
  int failed = dnnl_engine_create(&state.engine, dnnl_cpu, 0) ||
               dnnl_stream_create(&state.stream, state.engine, dnnl_stream_default_flags) ||
               prepare_batch(&state, &c, 1, 1) || c.variants[0].batch < 0;
  /* The one variant made (the first slot) holds the packing. A Winograd
   * convolution's (a call whose batch is fixed at 2 or more) is not kept:
   * oneDNN reorders into it only from plain weights. */
  packing *p = failed || strstr(c.variants[0].implementation, "wino") ? NULL : c.variants[0].pack;
  if (p) {
    *layout = malloc(sizeof(dnnl_memory_desc_t));
    if (*layout) {
      memcpy(*layout, &p->md, sizeof(dnnl_memory_desc_t));
      *layout_bytes = sizeof(dnnl_memory_desc_t);
      *packed = p->data;
      *packed_bytes = dnnl_memory_desc_get_size(&p->md);
      p->data = NULL;
    } else {
      failed = 1;
    }
  }
  release_call(&c);
  free(state.staging[0]);
  free(state.staging[1]);
  free(state.scratch);
  if (state.stream)
    dnnl_stream_destroy(state.stream);
  if (state.engine)
    dnnl_engine_destroy(state.engine);
  if (num_threads > 0)
    omp_set_num_threads(saved_threads);
  return failed ? kiln_fail(KILN_ERROR_RUN, "oneDNN cannot prepare the call to pack its weights")
                : KILN_OK;
}
