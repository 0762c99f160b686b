/*===- onednn.c - the CPU device's convolutions and matmuls in oneDNN ------===*
 *
 * oneDNN is loaded with dlopen the first time a model needs it (its
 * functions through one table), so the runtime links no vendor library
 * and a host without oneDNN runs every model compiled without library
 * calls.
 *
 * Each library call of an artifact becomes a oneDNN primitive, created when
 * the session is created (or, when the batch is dynamic, the first time a
 * batch size is seen; the primitive of the last size is kept). A call
 * binds the operand pointers to prepared memory objects and executes.
 * Plain NCHW / OIHW layouts: the compiled code's buffers are row-major.
 * A fused epilogue becomes oneDNN's bias argument and post-ops: a sum
 * with the residual the output buffer already holds (a binary add post-op
 * sends oneDNN 2.6's plain-layout convolutions to a path 3x slower), then
 * an eltwise activation.
 *
 *===----------------------------------------------------------------------===*/

#include "onednn.h"
#include "device.h"

#include <oneapi/dnnl/dnnl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every oneDNN function the runtime calls. */
#define KILN_ONEDNN_FUNCTIONS(X) \
  X(dnnl_dilated_convolution_forward_desc_init) \
  X(dnnl_engine_create) \
  X(dnnl_engine_destroy) \
  X(dnnl_matmul_desc_init) \
  X(dnnl_memory_create) \
  X(dnnl_memory_desc_get_size) \
  X(dnnl_memory_desc_init_by_tag) \
  X(dnnl_memory_destroy) \
  X(dnnl_memory_set_data_handle) \
  X(dnnl_post_ops_append_eltwise) \
  X(dnnl_post_ops_append_sum) \
  X(dnnl_post_ops_create) \
  X(dnnl_post_ops_destroy) \
  X(dnnl_primitive_attr_create) \
  X(dnnl_primitive_attr_destroy) \
  X(dnnl_primitive_attr_set_post_ops) \
  X(dnnl_primitive_attr_set_scratchpad_mode) \
  X(dnnl_primitive_create) \
  X(dnnl_primitive_desc_create) \
  X(dnnl_primitive_desc_destroy) \
  X(dnnl_primitive_desc_query_md) \
  X(dnnl_primitive_destroy) \
  X(dnnl_primitive_execute) \
  X(dnnl_stream_create) \
  X(dnnl_stream_destroy) \
  X(dnnl_stream_wait)

static struct {
#define KILN_ONEDNN_POINTER(name) __typeof__(&name) p_##name;
  KILN_ONEDNN_FUNCTIONS(KILN_ONEDNN_POINTER)
#undef KILN_ONEDNN_POINTER
} onednn;

/* From here on, each dnnl_* call goes through the loaded table. */
#define KILN_ONEDNN_REDIRECT(name) (onednn.p_##name)
#define dnnl_dilated_convolution_forward_desc_init KILN_ONEDNN_REDIRECT(dnnl_dilated_convolution_forward_desc_init)
#define dnnl_engine_create KILN_ONEDNN_REDIRECT(dnnl_engine_create)
#define dnnl_engine_destroy KILN_ONEDNN_REDIRECT(dnnl_engine_destroy)
#define dnnl_matmul_desc_init KILN_ONEDNN_REDIRECT(dnnl_matmul_desc_init)
#define dnnl_memory_create KILN_ONEDNN_REDIRECT(dnnl_memory_create)
#define dnnl_memory_desc_get_size KILN_ONEDNN_REDIRECT(dnnl_memory_desc_get_size)
#define dnnl_memory_desc_init_by_tag KILN_ONEDNN_REDIRECT(dnnl_memory_desc_init_by_tag)
#define dnnl_memory_destroy KILN_ONEDNN_REDIRECT(dnnl_memory_destroy)
#define dnnl_memory_set_data_handle KILN_ONEDNN_REDIRECT(dnnl_memory_set_data_handle)
#define dnnl_post_ops_append_eltwise KILN_ONEDNN_REDIRECT(dnnl_post_ops_append_eltwise)
#define dnnl_post_ops_append_sum KILN_ONEDNN_REDIRECT(dnnl_post_ops_append_sum)
#define dnnl_post_ops_create KILN_ONEDNN_REDIRECT(dnnl_post_ops_create)
#define dnnl_post_ops_destroy KILN_ONEDNN_REDIRECT(dnnl_post_ops_destroy)
#define dnnl_primitive_attr_create KILN_ONEDNN_REDIRECT(dnnl_primitive_attr_create)
#define dnnl_primitive_attr_destroy KILN_ONEDNN_REDIRECT(dnnl_primitive_attr_destroy)
#define dnnl_primitive_attr_set_post_ops KILN_ONEDNN_REDIRECT(dnnl_primitive_attr_set_post_ops)
#define dnnl_primitive_attr_set_scratchpad_mode KILN_ONEDNN_REDIRECT(dnnl_primitive_attr_set_scratchpad_mode)
#define dnnl_primitive_create KILN_ONEDNN_REDIRECT(dnnl_primitive_create)
#define dnnl_primitive_desc_create KILN_ONEDNN_REDIRECT(dnnl_primitive_desc_create)
#define dnnl_primitive_desc_destroy KILN_ONEDNN_REDIRECT(dnnl_primitive_desc_destroy)
#define dnnl_primitive_desc_query_md KILN_ONEDNN_REDIRECT(dnnl_primitive_desc_query_md)
#define dnnl_primitive_destroy KILN_ONEDNN_REDIRECT(dnnl_primitive_destroy)
#define dnnl_primitive_execute KILN_ONEDNN_REDIRECT(dnnl_primitive_execute)
#define dnnl_stream_create KILN_ONEDNN_REDIRECT(dnnl_stream_create)
#define dnnl_stream_destroy KILN_ONEDNN_REDIRECT(dnnl_stream_destroy)
#define dnnl_stream_wait KILN_ONEDNN_REDIRECT(dnnl_stream_wait)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load_onednn(void) {
  const char *file = getenv("KILN_ONEDNN_LIBRARY");
  if (!file || !*file)
    file = "libdnnl.so.2";
  void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(load_error, sizeof load_error, "oneDNN (%s) cannot be loaded: %s", file, dlerror());
    return;
  }
#define KILN_ONEDNN_RESOLVE(name)                                                          \
  if (!load_error[0] &&                                                                    \
      !(onednn.p_##name = (__typeof__(onednn.p_##name))dlsym(library, #name)))              \
    snprintf(load_error, sizeof load_error, "oneDNN (%s) has no %s: a version other than 2.x?", \
             file, #name);
  KILN_ONEDNN_FUNCTIONS(KILN_ONEDNN_RESOLVE)
#undef KILN_ONEDNN_RESOLVE
}

kiln_status kiln_onednn_load(const char *what) {
  pthread_once(&load_once, load_onednn);
  if (load_error[0])
    return kiln_fail(KILN_ERROR_LOAD, "%s needs %s", what, load_error);
  return KILN_OK;
}

/* A call of the descriptor, read in its kind's layout (kiln_model_abi.h). */
typedef struct call_view {
  int32_t kind;
  int32_t rank; /* of the output */
  int32_t input_rank, weight_rank;
  const int64_t *input_dims, *weight_dims, *output_dims; /* -1 dynamic */
  const int64_t *strides, *dilations, *pads;             /* convolution */
  int64_t groups;
  int32_t has_bias, has_residual, activation;
  float alpha, beta;
} call_view;

/* Reads `call` into `view`; 0 when it is a call this device runs. */
static int read_call(const kiln_library_call *call, call_view *view) {
  memset(view, 0, sizeof *view);
  if (call->num_operands != 3 || !call->operand_ranks || !call->operand_dims)
    return 1;
  for (int k = 0; k < 3; ++k)
    if (call->operand_ranks[k] < 1 || call->operand_ranks[k] > KILN_MAX_RANK ||
        !call->operand_dims[k])
      return 1;
  view->kind = call->kind;
  view->input_rank = call->operand_ranks[0];
  view->weight_rank = call->operand_ranks[1];
  view->rank = call->operand_ranks[2];
  view->input_dims = call->operand_dims[0];
  view->weight_dims = call->operand_dims[1];
  view->output_dims = call->operand_dims[2];
  view->has_bias = call->epilogue.has_bias;
  view->has_residual = call->epilogue.has_residual;
  view->activation = call->epilogue.activation;
  view->alpha = call->epilogue.alpha;
  view->beta = call->epilogue.beta;
  if (view->activation < KILN_ACTIVATION_NONE || view->activation > KILN_ACTIVATION_GELU_TANH)
    return 1;
  if (call->kind == KILN_LIBRARY_CONV) {
    /* groups, strides[2], dilations[2], pads[4] */
    if (view->rank != 4 || view->input_rank != 4 || view->weight_rank != 4 ||
        call->num_params != 9 || !call->params || call->params[0] < 1)
      return 1;
    view->groups = call->params[0];
    view->strides = call->params + 1;
    view->dilations = call->params + 3;
    view->pads = call->params + 5;
    return 0;
  }
  if (call->kind == KILN_LIBRARY_MATMUL)
    return !(view->rank >= 2 && view->rank <= 4 && view->input_rank <= view->rank &&
             view->weight_rank <= view->rank && call->num_params == 0);
  return 1;
}

typedef struct prepared_call {
  call_view desc; /* what the call computes, read from the descriptor */
  int64_t batch; /* the batch the primitive was made for, -1 for none */
  int64_t shape[KILN_MAX_RANK]; /* matmul: the lhs dims it was made for */
  dnnl_primitive_t primitive;
  dnnl_memory_t src, weights, dst, bias;
  dnnl_memory_t scratchpad; /* owned by the call: no allocation per run */
  void *scratchpad_data;
} prepared_call;

struct kiln_library_state {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  uint32_t num_calls;
  prepared_call *calls;
};

static void release_call(prepared_call *c) {
  if (c->primitive) dnnl_primitive_destroy(c->primitive);
  if (c->src) dnnl_memory_destroy(c->src);
  if (c->weights) dnnl_memory_destroy(c->weights);
  if (c->dst) dnnl_memory_destroy(c->dst);
  if (c->bias) dnnl_memory_destroy(c->bias);
  if (c->scratchpad) dnnl_memory_destroy(c->scratchpad);
  free(c->scratchpad_data);
  c->primitive = NULL;
  c->src = c->weights = c->dst = c->bias = c->scratchpad = NULL;
  c->scratchpad_data = NULL;
  c->batch = -1;
}

static int finish_primitive(kiln_library_state *state, prepared_call *c, const_dnnl_op_desc_t op,
                            const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *w_md,
                            const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *bias_md);

/* Builds the convolution primitive of `c` for batch `batch`. */
static int prepare_conv(kiln_library_state *state, prepared_call *c, int64_t batch) {
  const call_view *d = &c->desc;
  release_call(c);
  dnnl_dims_t src_dims = {batch, d->input_dims[1], d->input_dims[2], d->input_dims[3]};
  dnnl_dims_t dst_dims = {batch, d->output_dims[1], d->output_dims[2], d->output_dims[3]};
  dnnl_memory_desc_t src_md, weights_md, dst_md;
  int64_t g = d->groups;
  if (dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, dnnl_nchw) ||
      dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, dnnl_nchw))
    return 1;
  if (g == 1) {
    dnnl_dims_t w_dims = {d->weight_dims[0], d->weight_dims[1], d->weight_dims[2], d->weight_dims[3]};
    if (dnnl_memory_desc_init_by_tag(&weights_md, 4, w_dims, dnnl_f32, dnnl_oihw))
      return 1;
  } else {
    dnnl_dims_t w_dims = {g, d->weight_dims[0] / g, d->weight_dims[1], d->weight_dims[2],
                          d->weight_dims[3]};
    if (dnnl_memory_desc_init_by_tag(&weights_md, 5, w_dims, dnnl_f32, dnnl_goihw))
      return 1;
  }
  dnnl_dims_t strides = {d->strides[0], d->strides[1]};
  dnnl_dims_t dilates = {d->dilations[0] - 1, d->dilations[1] - 1};
  dnnl_dims_t pad_l = {d->pads[0], d->pads[1]};
  dnnl_dims_t pad_r = {d->pads[2], d->pads[3]};
  /* oneDNN wants the high padding that makes its output size match. */
  for (int i = 0; i < 2; ++i) {
    int64_t in = d->input_dims[2 + i], k = (d->weight_dims[2 + i] - 1) * d->dilations[i] + 1;
    int64_t out = d->output_dims[2 + i];
    pad_r[i] = (out - 1) * d->strides[i] + k - in - pad_l[i];
  }
  dnnl_memory_desc_t bias_md;
  dnnl_dims_t bias_dims = {d->output_dims[1]};
  if (d->has_bias && dnnl_memory_desc_init_by_tag(&bias_md, 1, bias_dims, dnnl_f32, dnnl_a))
    return 1;
  dnnl_convolution_desc_t conv;
  if (dnnl_dilated_convolution_forward_desc_init(&conv, dnnl_forward_inference,
                                                 dnnl_convolution_direct, &src_md, &weights_md,
                                                 d->has_bias ? &bias_md : NULL, &dst_md, strides,
                                                 dilates, pad_l, pad_r))
    return 1;
  if (finish_primitive(state, c, &conv, &src_md, &weights_md, &dst_md,
                       d->has_bias ? &bias_md : NULL))
    return 1;
  c->batch = batch;
  return 0;
}

/* The oneDNN eltwise algorithm of an activation (0 for none). */
static dnnl_alg_kind_t eltwise_of(int32_t activation) {
  switch (activation) {
  case KILN_ACTIVATION_RELU: return dnnl_eltwise_relu;
  case KILN_ACTIVATION_CLIP: return dnnl_eltwise_clip;
  case KILN_ACTIVATION_SIGMOID: return dnnl_eltwise_logistic;
  case KILN_ACTIVATION_TANH: return dnnl_eltwise_tanh;
  case KILN_ACTIVATION_GELU_ERF: return dnnl_eltwise_gelu_erf;
  case KILN_ACTIVATION_GELU_TANH: return dnnl_eltwise_gelu_tanh;
  }
  return dnnl_alg_kind_undef;
}

/* The epilogue's post-ops: the residual (a sum with what the output
 * buffer holds), then the activation. */
static int set_post_ops(dnnl_primitive_attr_t attr, const call_view *d) {
  if (!d->has_residual && d->activation == KILN_ACTIVATION_NONE)
    return 0;
  dnnl_post_ops_t ops;
  if (dnnl_post_ops_create(&ops))
    return 1;
  int rc = 0;
  if (d->has_residual)
    rc |= dnnl_post_ops_append_sum(ops, 1.0f) != dnnl_success;
  if (d->activation != KILN_ACTIVATION_NONE)
    rc |= dnnl_post_ops_append_eltwise(ops, 1.0f, eltwise_of(d->activation), d->alpha,
                                       d->beta) != dnnl_success;
  rc |= dnnl_primitive_attr_set_post_ops(attr, ops) != dnnl_success;
  dnnl_post_ops_destroy(ops);
  return rc;
}

/* Creates the primitive for prepared descriptors and owns a scratchpad. */
static int finish_primitive(kiln_library_state *state, prepared_call *c, const_dnnl_op_desc_t op,
                            const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *w_md,
                            const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *bias_md) {
  dnnl_primitive_attr_t attr;
  if (dnnl_primitive_attr_create(&attr))
    return 1;
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  if (set_post_ops(attr, &c->desc)) {
    dnnl_primitive_attr_destroy(attr);
    return 1;
  }
  dnnl_primitive_desc_t pd;
  int rc = dnnl_primitive_desc_create(&pd, op, attr, state->engine, NULL);
  dnnl_primitive_attr_destroy(attr);
  if (rc)
    return 1;
  const dnnl_memory_desc_t *scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  size_t scratch_bytes = scratch_md ? dnnl_memory_desc_get_size(scratch_md) : 0;
  if (scratch_bytes) {
    c->scratchpad_data = aligned_alloc(64, (scratch_bytes + 63) / 64 * 64);
    if (!c->scratchpad_data ||
        dnnl_memory_create(&c->scratchpad, scratch_md, state->engine, c->scratchpad_data)) {
      dnnl_primitive_desc_destroy(pd);
      return 1;
    }
  }
  rc = dnnl_primitive_create(&c->primitive, pd);
  dnnl_primitive_desc_destroy(pd);
  if (rc || dnnl_memory_create(&c->src, src_md, state->engine, DNNL_MEMORY_NONE) ||
      dnnl_memory_create(&c->weights, w_md, state->engine, DNNL_MEMORY_NONE) ||
      dnnl_memory_create(&c->dst, dst_md, state->engine, DNNL_MEMORY_NONE) ||
      (bias_md && dnnl_memory_create(&c->bias, bias_md, state->engine, DNNL_MEMORY_NONE)))
    return 1;
  return 0;
}

/* Row-major memory descriptor of `dims` padded with leading 1s to `rank`. */
static int plain_md(dnnl_memory_desc_t *md, const int64_t *dims, int dims_rank, int rank) {
  dnnl_dims_t full;
  for (int d = 0; d < rank; ++d)
    full[d] = d < rank - dims_rank ? 1 : dims[d - (rank - dims_rank)];
  static const dnnl_format_tag_t tags[] = {dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc,
                                           dnnl_abcd};
  return dnnl_memory_desc_init_by_tag(md, rank, full, dnnl_f32, tags[rank]) != dnnl_success;
}

/* Builds the matmul primitive of `c` for lhs dims `lhs`. */
static int prepare_matmul(kiln_library_state *state, prepared_call *c, const int64_t *lhs,
                          const int64_t *out) {
  const call_view *d = &c->desc;
  release_call(c);
  dnnl_memory_desc_t src_md, w_md, dst_md;
  if (plain_md(&src_md, lhs, d->input_rank, d->rank) ||
      plain_md(&w_md, d->weight_dims, d->weight_rank, d->rank) ||
      plain_md(&dst_md, out, d->rank, d->rank))
    return 1;
  /* The bias broadcasts over every dim but the last. */
  dnnl_memory_desc_t bias_md;
  int64_t bias_dims[1] = {d->output_dims[d->rank - 1]};
  if (d->has_bias && plain_md(&bias_md, bias_dims, 1, d->rank))
    return 1;
  dnnl_matmul_desc_t matmul;
  if (dnnl_matmul_desc_init(&matmul, &src_md, &w_md, d->has_bias ? &bias_md : NULL, &dst_md))
    return 1;
  if (finish_primitive(state, c, &matmul, &src_md, &w_md, &dst_md,
                       d->has_bias ? &bias_md : NULL))
    return 1;
  for (int i = 0; i < d->input_rank; ++i)
    c->shape[i] = lhs[i];
  c->batch = 0;
  return 0;
}

static int same_shape(const prepared_call *c, const int64_t *lhs) {
  if (c->batch < 0)
    return 0;
  for (int i = 0; i < c->desc.input_rank; ++i)
    if (c->shape[i] != lhs[i])
      return 0;
  return 1;
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
    c->batch = -1;
    const call_view *d = &c->desc;
    if (read_call(&abi->library_calls[i], &c->desc)) {
      kiln_onednn_free(state);
      return kiln_fail(KILN_ERROR_FORMAT, "library call %u has an invalid description", i);
    }
    /* Static shapes are prepared now; dynamic ones at their first run. */
    int is_static = 1;
    for (int k = 0; k < d->rank; ++k)
      is_static &= d->output_dims[k] >= 0;
    int failed_prepare = 0;
    if (is_static && d->kind == KILN_LIBRARY_CONV)
      failed_prepare = prepare_conv(state, c, d->input_dims[0]);
    else if (is_static && d->kind == KILN_LIBRARY_MATMUL)
      failed_prepare = prepare_matmul(state, c, d->input_dims, d->output_dims);
    if (failed_prepare) {
      kiln_onednn_free(state);
      return kiln_fail(KILN_ERROR_RUN, "oneDNN cannot prepare library call %u", i);
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
  if (state->stream) dnnl_stream_destroy(state->stream);
  if (state->engine) dnnl_engine_destroy(state->engine);
  free(state);
}

int kiln_onednn_execute(void *opaque, uint32_t id, void *const *operands,
                        const int64_t *const *dims) {
  kiln_library_state *state = opaque;
  if (!state || id >= state->num_calls)
    return 1;
  prepared_call *c = &state->calls[id];
  /* A dynamic batch of 0: nothing to compute (and oneDNN rejects it). */
  if (dims[0][0] == 0)
    return 0;
  if (c->desc.kind == KILN_LIBRARY_MATMUL) {
    if (!same_shape(c, dims[0]) && prepare_matmul(state, c, dims[0], dims[2]))
      return 1;
  } else {
    int64_t batch = dims[0][0];
    if (c->batch != batch && prepare_conv(state, c, batch))
      return 1;
  }
  if (dnnl_memory_set_data_handle(c->src, operands[0]) ||
      dnnl_memory_set_data_handle(c->weights, operands[1]) ||
      dnnl_memory_set_data_handle(c->dst, operands[2]))
    return 1;
  dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_WEIGHTS, c->weights},
                             {DNNL_ARG_DST, c->dst}};
  int n = 3;
  if (c->desc.has_bias) {
    if (dnnl_memory_set_data_handle(c->bias, operands[3]))
      return 1;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, c->bias};
  }
  if (c->scratchpad)
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, c->scratchpad};
  if (dnnl_primitive_execute(c->primitive, state->stream, n, args))
    return 1;
  return dnnl_stream_wait(state->stream) ? 1 : 0;
}
