/*===- cudnn_graph.c - a convolution call as a cuDNN operation graph ---------===*/
#include "cudnn_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* params: groups, strides[2], dilations[2], pads[4] (low, then high),
 * then optionally the output's batch stride. */
enum { P_GROUPS, P_STRIDE_H, P_STRIDE_W, P_DILATION_H, P_DILATION_W, P_PAD_TOP, P_PAD_LEFT,
       P_PAD_BOTTOM, P_PAD_RIGHT, P_OUTPUT_BATCH_STRIDE };

int kiln_cudnn_graph_takes(const kiln_library_epilogue *epilogue) {
  switch (epilogue->activation) {
  case KILN_ACTIVATION_NONE:
  case KILN_ACTIVATION_RELU:
  case KILN_ACTIVATION_CLIP:
  case KILN_ACTIVATION_SIGMOID:
  case KILN_ACTIVATION_TANH:
    return 1;
  default:
    return 0;
  }
}

static cudnnBackendDescriptor_t create(kiln_cudnn_graph *g, int type) {
  cudnnBackendDescriptor_t d = NULL;
  if (g->num_owned == KILN_CUDNN_GRAPH_MAX_DESCRIPTORS ||
      g->api->cudnnBackendCreateDescriptor(type, &d) != KILN_CUDNN_SUCCESS)
    return NULL;
  g->owned[g->num_owned++] = d;
  return d;
}

static int set(kiln_cudnn_graph *g, cudnnBackendDescriptor_t d, int name, int type,
               int64_t count, const void *values) {
  return g->api->cudnnBackendSetAttribute(d, name, type, count, values) == KILN_CUDNN_SUCCESS;
}

/* A float32 tensor of 4 dims in NCHW order, dense but for its batch
 * items, `batch_stride` elements apart (0: dense). */
static cudnnBackendDescriptor_t tensor(kiln_cudnn_graph *g, int64_t uid, const int64_t *dims,
                                       int is_virtual, int64_t batch_stride) {
  cudnnBackendDescriptor_t t = create(g, KILN_CUDNN_BACKEND_TENSOR);
  int64_t strides[4] = {batch_stride ? batch_stride : dims[1] * dims[2] * dims[3],
                        dims[2] * dims[3], dims[3], 1};
  int64_t alignment = 16; /* the runtime's buffers are 64-byte aligned */
  int32_t type = KILN_CUDNN_DATA_FLOAT;
  _Bool virt = is_virtual != 0;
  if (!t || !set(g, t, KILN_CUDNN_ATTR_TENSOR_DATA_TYPE, KILN_CUDNN_TYPE_DATA_TYPE, 1, &type) ||
      !set(g, t, KILN_CUDNN_ATTR_TENSOR_DIMENSIONS, KILN_CUDNN_TYPE_INT64, 4, dims) ||
      !set(g, t, KILN_CUDNN_ATTR_TENSOR_STRIDES, KILN_CUDNN_TYPE_INT64, 4, strides) ||
      !set(g, t, KILN_CUDNN_ATTR_TENSOR_UNIQUE_ID, KILN_CUDNN_TYPE_INT64, 1, &uid) ||
      !set(g, t, KILN_CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, KILN_CUDNN_TYPE_INT64, 1, &alignment) ||
      !set(g, t, KILN_CUDNN_ATTR_TENSOR_IS_VIRTUAL, KILN_CUDNN_TYPE_BOOLEAN, 1, &virt) ||
      g->api->cudnnBackendFinalize(t) != KILN_CUDNN_SUCCESS)
    return NULL;
  return t;
}

static void add_uid(kiln_cudnn_graph *g, int64_t uid, int operand) {
  g->uids[g->num_uids] = uid;
  g->operands[g->num_uids++] = operand;
}

/* A pointwise operation y = mode(x[, b]); clips only for ReLU. */
static cudnnBackendDescriptor_t pointwise(kiln_cudnn_graph *g, int32_t mode,
                                          cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                                          cudnnBackendDescriptor_t y, const float *clips) {
  cudnnBackendDescriptor_t pw = create(g, KILN_CUDNN_BACKEND_POINTWISE);
  int32_t precision = KILN_CUDNN_DATA_FLOAT;
  if (!pw || !set(g, pw, KILN_CUDNN_ATTR_POINTWISE_MODE, KILN_CUDNN_TYPE_POINTWISE_MODE, 1, &mode) ||
      !set(g, pw, KILN_CUDNN_ATTR_POINTWISE_MATH_PREC, KILN_CUDNN_TYPE_DATA_TYPE, 1, &precision))
    return NULL;
  if (clips) {
    /* Typed as the math precision (cuDNN takes float clips for float math). */
    double lower = clips[0], upper = clips[1];
    if (!set(g, pw, KILN_CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, KILN_CUDNN_TYPE_DOUBLE, 1,
             &lower) ||
        !set(g, pw, KILN_CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, KILN_CUDNN_TYPE_DOUBLE, 1, &upper))
      return NULL;
  }
  cudnnBackendDescriptor_t op = create(g, KILN_CUDNN_BACKEND_OPERATION_POINTWISE);
  if (g->api->cudnnBackendFinalize(pw) != KILN_CUDNN_SUCCESS || !op ||
      !set(g, op, KILN_CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
           KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw) ||
      !set(g, op, KILN_CUDNN_ATTR_OPERATION_POINTWISE_XDESC, KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
           &x) ||
      (b && !set(g, op, KILN_CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
                 KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b)) ||
      !set(g, op, KILN_CUDNN_ATTR_OPERATION_POINTWISE_YDESC, KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
           &y) ||
      g->api->cudnnBackendFinalize(op) != KILN_CUDNN_SUCCESS)
    return NULL;
  return op;
}

void kiln_cudnn_graph_free(kiln_cudnn_graph *g) {
  if (!g)
    return;
  if (g->plan)
    g->api->cudnnBackendDestroyDescriptor(g->plan);
  for (int i = g->num_owned; i-- > 0;)
    g->api->cudnnBackendDestroyDescriptor(g->owned[i]);
  free(g);
}

static kiln_cudnn_graph *refuse(kiln_cudnn_graph *g, char *why, size_t why_bytes,
                                const char *what) {
  snprintf(why, why_bytes, "cuDNN's graph API refused %s", what);
  kiln_cudnn_graph_free(g);
  return NULL;
}

kiln_cudnn_graph *kiln_cudnn_graph_build(const kiln_cudnn_api *api,
                                         const kiln_library_call *call,
                                         const int64_t *const *dims, char *why,
                                         size_t why_bytes) {
  kiln_cudnn_graph *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(why, why_bytes, "out of memory");
    return NULL;
  }
  g->api = api;
  const kiln_library_epilogue *e = &call->epilogue;
  if (!kiln_cudnn_graph_takes(e))
    return refuse(g, why, why_bytes, "the epilogue's activation");
  const int64_t *p = call->params;
  int last_is_conv = !e->has_bias && !e->has_residual && e->activation == KILN_ACTIVATION_NONE;
  int64_t next_virtual = 100;
  /* The output's memory (and the residual's, the same): dense, or
   * channels of a concatenation. */
  int64_t y_stride = call->num_params > P_OUTPUT_BATCH_STRIDE ? p[P_OUTPUT_BATCH_STRIDE] : 0;
  cudnnBackendDescriptor_t x = tensor(g, KILN_CUDNN_UID_X, dims[0], 0, 0);
  cudnnBackendDescriptor_t w = tensor(g, KILN_CUDNN_UID_W, dims[1], 0, 0);
  cudnnBackendDescriptor_t y = tensor(g, KILN_CUDNN_UID_Y, dims[2], 0, y_stride);
  cudnnBackendDescriptor_t t = last_is_conv ? y : tensor(g, next_virtual++, dims[2], 1, 0);
  if (!x || !w || !y || !t)
    return refuse(g, why, why_bytes, "a tensor");
  add_uid(g, KILN_CUDNN_UID_X, 0);
  add_uid(g, KILN_CUDNN_UID_W, 1);
  add_uid(g, KILN_CUDNN_UID_Y, 2);

  cudnnBackendDescriptor_t conv = create(g, KILN_CUDNN_BACKEND_CONVOLUTION);
  int32_t type = KILN_CUDNN_DATA_FLOAT, mode = KILN_CUDNN_CROSS_CORRELATION;
  int64_t spatial = 2, strides[2] = {p[P_STRIDE_H], p[P_STRIDE_W]};
  int64_t dilations[2] = {p[P_DILATION_H], p[P_DILATION_W]};
  int64_t pre[2] = {p[P_PAD_TOP], p[P_PAD_LEFT]}, post[2] = {p[P_PAD_BOTTOM], p[P_PAD_RIGHT]};
  if (!conv ||
      !set(g, conv, KILN_CUDNN_ATTR_CONVOLUTION_COMP_TYPE, KILN_CUDNN_TYPE_DATA_TYPE, 1, &type) ||
      !set(g, conv, KILN_CUDNN_ATTR_CONVOLUTION_CONV_MODE, KILN_CUDNN_TYPE_CONVOLUTION_MODE, 1,
           &mode) ||
      !set(g, conv, KILN_CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, KILN_CUDNN_TYPE_INT64, 1,
           &spatial) ||
      !set(g, conv, KILN_CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, KILN_CUDNN_TYPE_INT64, 2,
           strides) ||
      !set(g, conv, KILN_CUDNN_ATTR_CONVOLUTION_DILATIONS, KILN_CUDNN_TYPE_INT64, 2, dilations) ||
      !set(g, conv, KILN_CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, KILN_CUDNN_TYPE_INT64, 2, pre) ||
      !set(g, conv, KILN_CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, KILN_CUDNN_TYPE_INT64, 2, post) ||
      api->cudnnBackendFinalize(conv) != KILN_CUDNN_SUCCESS)
    return refuse(g, why, why_bytes, "the convolution");
  cudnnBackendDescriptor_t op = create(g, KILN_CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD);
  float one = 1.0f, zero = 0.0f;
  if (!op ||
      !set(g, op, KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_ALPHA, KILN_CUDNN_TYPE_FLOAT, 1, &one) ||
      !set(g, op, KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_BETA, KILN_CUDNN_TYPE_FLOAT, 1, &zero) ||
      !set(g, op, KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_CONV_DESC, KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR,
           1, &conv) ||
      !set(g, op, KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_X, KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
           &x) ||
      !set(g, op, KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_W, KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
           &w) ||
      !set(g, op, KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_Y, KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
           &t) ||
      api->cudnnBackendFinalize(op) != KILN_CUDNN_SUCCESS)
    return refuse(g, why, why_bytes, "the convolution's operation");
  g->ops[g->num_ops++] = op;

  /* The epilogue, each step into a new virtual tensor, the last into y. */
  int steps = e->has_bias + e->has_residual + (e->activation != KILN_ACTIVATION_NONE);
  for (int step = 0; step < 3 && steps > 0; ++step) {
    int32_t pw_mode;
    cudnnBackendDescriptor_t b = NULL;
    const float *clips = NULL;
    float clip_values[2] = {0.0f, 3.4028234663852886e38f};
    if (step == 0 && e->has_bias) {
      int64_t bias_dims[4] = {1, dims[2][1], 1, 1};
      if (!(b = tensor(g, KILN_CUDNN_UID_BIAS, bias_dims, 0, 0)))
        return refuse(g, why, why_bytes, "the bias");
      add_uid(g, KILN_CUDNN_UID_BIAS, 3);
      pw_mode = KILN_CUDNN_POINTWISE_ADD;
    } else if (step == 1 && e->has_residual) {
      if (!(b = tensor(g, KILN_CUDNN_UID_RESIDUAL, dims[2], 0, y_stride)))
        return refuse(g, why, why_bytes, "the residual");
      add_uid(g, KILN_CUDNN_UID_RESIDUAL, 2); /* the output's own buffer */
      pw_mode = KILN_CUDNN_POINTWISE_ADD;
    } else if (step == 2 && e->activation != KILN_ACTIVATION_NONE) {
      switch (e->activation) {
      case KILN_ACTIVATION_RELU:
        pw_mode = KILN_CUDNN_POINTWISE_RELU_FWD;
        clips = clip_values;
        break;
      case KILN_ACTIVATION_CLIP:
        pw_mode = KILN_CUDNN_POINTWISE_RELU_FWD;
        clip_values[0] = e->alpha;
        clip_values[1] = e->beta;
        clips = clip_values;
        break;
      case KILN_ACTIVATION_SIGMOID:
        pw_mode = KILN_CUDNN_POINTWISE_SIGMOID_FWD;
        break;
      default:
        pw_mode = KILN_CUDNN_POINTWISE_TANH_FWD;
        break;
      }
    } else {
      continue;
    }
    cudnnBackendDescriptor_t out =
        --steps == 0 ? y : tensor(g, next_virtual++, dims[2], 1, 0);
    cudnnBackendDescriptor_t pw = out ? pointwise(g, pw_mode, t, b, out, clips) : NULL;
    if (!pw)
      return refuse(g, why, why_bytes, "an epilogue's pointwise operation");
    g->ops[g->num_ops++] = pw;
    t = out;
  }
  return g;
}

/* Whether an engine's numerical notes allow it: float accuracy, and
 * determinism unless allowed otherwise. */
static int engine_allowed(kiln_cudnn_graph *g, cudnnBackendDescriptor_t cfg,
                          int nondeterministic) {
  cudnnBackendDescriptor_t engine = create(g, KILN_CUDNN_BACKEND_ENGINE);
  int64_t n = 0;
  int32_t notes[KILN_CUDNN_NUMERICAL_NOTE_COUNT];
  if (!engine ||
      g->api->cudnnBackendGetAttribute(cfg, KILN_CUDNN_ATTR_ENGINECFG_ENGINE,
                                       KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine) !=
          KILN_CUDNN_SUCCESS ||
      g->api->cudnnBackendGetAttribute(engine, KILN_CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                       KILN_CUDNN_TYPE_NUMERICAL_NOTE,
                                       KILN_CUDNN_NUMERICAL_NOTE_COUNT, &n, notes) !=
          KILN_CUDNN_SUCCESS)
    return 0;
  for (int64_t i = 0; i < n && i < KILN_CUDNN_NUMERICAL_NOTE_COUNT; ++i)
    if (notes[i] == KILN_CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
        notes[i] == KILN_CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
        (notes[i] == KILN_CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC && !nondeterministic))
      return 0;
  return 1;
}

int kiln_cudnn_graph_plan(kiln_cudnn_graph *g, cudnnHandle_t handle, int nondeterministic,
                          size_t workspace_bytes, char *why, size_t why_bytes) {
  const kiln_cudnn_api *api = g->api;
  cudnnBackendDescriptor_t graph = create(g, KILN_CUDNN_BACKEND_OPERATIONGRAPH);
  if (!graph ||
      !set(g, graph, KILN_CUDNN_ATTR_OPERATIONGRAPH_OPS, KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR,
           g->num_ops, g->ops) ||
      !set(g, graph, KILN_CUDNN_ATTR_OPERATIONGRAPH_HANDLE, KILN_CUDNN_TYPE_HANDLE, 1, &handle) ||
      api->cudnnBackendFinalize(graph) != KILN_CUDNN_SUCCESS) {
    snprintf(why, why_bytes, "cuDNN's graph API refused the operation graph");
    return -1;
  }
  cudnnBackendDescriptor_t heuristic = create(g, KILN_CUDNN_BACKEND_ENGINEHEUR);
  int32_t mode = KILN_CUDNN_HEUR_MODE_A;
  int64_t count = 0;
  if (!heuristic ||
      !set(g, heuristic, KILN_CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
           KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph) ||
      !set(g, heuristic, KILN_CUDNN_ATTR_ENGINEHEUR_MODE, KILN_CUDNN_TYPE_HEUR_MODE, 1, &mode) ||
      api->cudnnBackendFinalize(heuristic) != KILN_CUDNN_SUCCESS ||
      api->cudnnBackendGetAttribute(heuristic, KILN_CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                    KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL) !=
          KILN_CUDNN_SUCCESS) {
    snprintf(why, why_bytes, "cuDNN's heuristic refused the operation graph");
    return -1;
  }
  enum { MAX_CONFIGS = 16 };
  cudnnBackendDescriptor_t configs[MAX_CONFIGS];
  if (count > MAX_CONFIGS)
    count = MAX_CONFIGS;
  for (int64_t i = 0; i < count; ++i)
    if (!(configs[i] = create(g, KILN_CUDNN_BACKEND_ENGINECFG))) {
      snprintf(why, why_bytes, "cuDNN cannot create engine configurations");
      return -1;
    }
  int64_t returned = 0;
  if (count > 0 &&
      api->cudnnBackendGetAttribute(heuristic, KILN_CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                    KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned,
                                    configs) != KILN_CUDNN_SUCCESS)
    returned = 0;
  int allowed = 0;
  for (int64_t i = 0; i < returned && i < count; ++i) {
    if (!engine_allowed(g, configs[i], nondeterministic))
      continue;
    ++allowed;
    cudnnBackendDescriptor_t plan = NULL;
    int64_t bytes = 0, got = 0;
    if (api->cudnnBackendCreateDescriptor(KILN_CUDNN_BACKEND_EXECUTION_PLAN, &plan) !=
        KILN_CUDNN_SUCCESS)
      break;
    if (set(g, plan, KILN_CUDNN_ATTR_EXECUTION_PLAN_HANDLE, KILN_CUDNN_TYPE_HANDLE, 1, &handle) &&
        set(g, plan, KILN_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
            KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]) &&
        api->cudnnBackendFinalize(plan) == KILN_CUDNN_SUCCESS &&
        api->cudnnBackendGetAttribute(plan, KILN_CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                      KILN_CUDNN_TYPE_INT64, 1, &got, &bytes) == KILN_CUDNN_SUCCESS &&
        bytes >= 0 && (size_t)bytes <= workspace_bytes) {
      g->plan = plan;
      g->workspace_bytes = bytes;
      g->engine = (int)i;
      return 0;
    }
    api->cudnnBackendDestroyDescriptor(plan);
  }
  snprintf(why, why_bytes,
           "cuDNN has no engine for the fused graph (%lld proposed, %d of float accuracy%s) "
           "that fits the %zu-byte workspace",
           (long long)returned, allowed, nondeterministic ? "" : " and deterministic",
           workspace_bytes);
  return -1;
}

cudnnStatus_t kiln_cudnn_graph_execute(kiln_cudnn_graph *g, cudnnHandle_t handle,
                                       void *const *operands, void *workspace) {
  const kiln_cudnn_api *api = g->api;
  void *pointers[5];
  for (int i = 0; i < g->num_uids; ++i)
    pointers[i] = operands[g->operands[i]];
  cudnnBackendDescriptor_t pack = NULL;
  cudnnStatus_t status = api->cudnnBackendCreateDescriptor(KILN_CUDNN_BACKEND_VARIANT_PACK, &pack);
  if (status != KILN_CUDNN_SUCCESS)
    return status;
  if ((status = api->cudnnBackendSetAttribute(pack, KILN_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                              KILN_CUDNN_TYPE_INT64, g->num_uids, g->uids)) ==
          KILN_CUDNN_SUCCESS &&
      (status = api->cudnnBackendSetAttribute(pack, KILN_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                              KILN_CUDNN_TYPE_VOID_PTR, g->num_uids, pointers)) ==
          KILN_CUDNN_SUCCESS &&
      (status = api->cudnnBackendSetAttribute(pack, KILN_CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                              KILN_CUDNN_TYPE_VOID_PTR, 1, &workspace)) ==
          KILN_CUDNN_SUCCESS &&
      (status = api->cudnnBackendFinalize(pack)) == KILN_CUDNN_SUCCESS)
    status = api->cudnnBackendExecute(handle, g->plan, pack);
  api->cudnnBackendDestroyDescriptor(pack);
  return status;
}
