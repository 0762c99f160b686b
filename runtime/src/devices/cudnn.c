/*===- cudnn.c - a CUDA session's convolution calls in cuDNN -----------------===*/
#include "cudnn.h"
#include "cudnn_api.h"
#include "cudnn_graph.h"
#include "vendor_load.h"
#include "../host_env.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
  pthread_once_t once;
  int ready;
  char error[512];
  kiln_cudnn_api api;
} lib = {PTHREAD_ONCE_INIT};

static void load_library(void) {
  static const char *const names[] = {"libcudnn.so.9"};
  static const char *const symbols[] = {
#define KILN_CUDNN_NAME(name, parameters) #name,
      KILN_CUDNN_ENTRY_POINTS(KILN_CUDNN_NAME)
#undef KILN_CUDNN_NAME
  };
  const char *file = NULL;
  void *handle = kiln_vendor_open(
      "cuDNN", "KILN_CUDNN_LIBRARY", names, 1,
      "the model's convolutions run in it (install cuDNN 9, or compile with --no-libraries)",
      &file, lib.error, sizeof lib.error);
  if (handle && kiln_vendor_resolve(handle, "cuDNN", file, symbols, &lib.api,
                                    sizeof symbols / sizeof *symbols, lib.error,
                                    sizeof lib.error) == 0)
    lib.ready = 1;
}

/* params: groups, strides[2], dilations[2], pads[4] (low, then high),
 * then optionally the output's batch stride (kiln_model_abi.h). */
#define KILN_CUDNN_PARAMS 9

/* Elements between the output's batch items: dense, or the call's
 * output_batch_stride (its output is channels of a concatenation). */
static int64_t output_batch_stride(const kiln_library_call *call) {
  const int64_t *y = call->operand_dims[2];
  return call->num_params > KILN_CUDNN_PARAMS ? call->params[KILN_CUDNN_PARAMS]
                                             : y[1] * y[2] * y[3];
}

kiln_status kiln_cudnn_check(const kiln_model_v1 *abi, const char *what) {
  int any = 0;
  for (uint32_t i = 0; i < abi->num_library_calls; ++i) {
    const kiln_library_call *call = &abi->library_calls[i];
    if (call->kind != KILN_LIBRARY_CONV)
      continue;
    any = 1;
    const int64_t *p = call->params;
    if (call->num_operands != 3 ||
        (call->num_params != KILN_CUDNN_PARAMS && call->num_params != KILN_CUDNN_PARAMS + 1) ||
        !p || !call->operand_ranks || call->operand_ranks[0] != 4 ||
        call->operand_ranks[1] != 4 || call->operand_ranks[2] != 4 || p[0] < 1 ||
        p[5] != p[7] || p[6] != p[8])
      return kiln_fail(KILN_ERROR_LOAD,
                       "%s: library call %u is not a convolution this runtime's CUDA device runs",
                       what, i);
    /* A strided output: its channels, height and width are static, its
     * batch items no closer than dense, 16-byte aligned (the graph's
     * tensors declare it). */
    const int64_t *y = call->operand_dims[2];
    if (call->num_params > KILN_CUDNN_PARAMS &&
        (y[1] < 1 || y[2] < 1 || y[3] < 1 || output_batch_stride(call) < y[1] * y[2] * y[3] ||
         output_batch_stride(call) % 4 != 0 || output_batch_stride(call) > INT32_MAX))
      return kiln_fail(KILN_ERROR_LOAD,
                       "%s: library call %u writes its output %lld elements a batch item apart, "
                       "which cuDNN cannot take for an output of [%lld, %lld, %lld] a batch item",
                       what, i, (long long)output_batch_stride(call), (long long)y[1],
                       (long long)y[2], (long long)y[3]);
    /* Every epilogue here has a path through the convolution API too. */
    int32_t act = call->epilogue.activation;
    if (!kiln_cudnn_graph_takes(&call->epilogue) ||
        (act == KILN_ACTIVATION_CLIP && (call->epilogue.alpha != 0.0f || !(call->epilogue.beta > 0.0f))))
      return kiln_fail(KILN_ERROR_LOAD, "%s: library call %u has an epilogue cuDNN lacks", what,
                       i);
  }
  if (!any)
    return KILN_OK;
  pthread_once(&lib.once, load_library);
  if (!lib.ready)
    return kiln_fail(KILN_ERROR_LOAD, "%s: %s", what, lib.error);
  return KILN_OK;
}

#define KILN_CUDNN_PLANS 8

/* A call's plan at one batch: a fused graph, or else the convolution
 * API's descriptors and algorithm. */
typedef struct plan {
  int used;
  int64_t batch;
  uint64_t last_use;
  kiln_cudnn_graph *graph;
  int ran; /* whether the plan has run once */
  cudnnTensorDescriptor_t x, y;
  int algo;
} plan;

typedef struct conv_state {
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnActivationDescriptor_t activation; /* fused: ReLU or identity, with a bias */
  cudnnActivationDescriptor_t after;      /* an activation the fused call lacks, in place */
  cudnnTensorDescriptor_t bias;
  int64_t y_batch_stride; /* elements between the output's batch items */
  int no_graph; /* a graph of this call failed its first run: the API only */
  plan plans[KILN_CUDNN_PLANS];
} conv_state;

struct kiln_cudnn {
  const kiln_model_v1 *abi;
  cudnnHandle_t handle;
  void *workspace;
  size_t workspace_bytes;
  conv_state *calls; /* by call id; unused for other kinds */
  uint64_t clock;
  int nondeterministic; /* KILN_GPU_ALLOW_NONDETERMINISTIC: any algorithm */
  int graphs;           /* the graph API first ($KILN_CUDNN_GRAPH=0: never) */
  uint32_t graph_plans, api_plans; /* plans made each way */
  char fallback_reason[320];       /* why the first plan left the graph API */
};

static void free_plan(plan *p) {
  kiln_cudnn_graph_free(p->graph);
  if (p->x)
    lib.api.cudnnDestroyTensorDescriptor(p->x);
  if (p->y)
    lib.api.cudnnDestroyTensorDescriptor(p->y);
  memset(p, 0, sizeof *p);
}

static void free_call(conv_state *c) {
  for (int k = 0; k < KILN_CUDNN_PLANS; ++k)
    free_plan(&c->plans[k]);
  if (c->w)
    lib.api.cudnnDestroyFilterDescriptor(c->w);
  if (c->conv)
    lib.api.cudnnDestroyConvolutionDescriptor(c->conv);
  if (c->activation)
    lib.api.cudnnDestroyActivationDescriptor(c->activation);
  if (c->after)
    lib.api.cudnnDestroyActivationDescriptor(c->after);
  if (c->bias)
    lib.api.cudnnDestroyTensorDescriptor(c->bias);
  memset(c, 0, sizeof *c);
}

void kiln_cudnn_free(kiln_cudnn *dnn) {
  if (!dnn)
    return;
  for (uint32_t i = 0; dnn->calls && i < dnn->abi->num_library_calls; ++i)
    free_call(&dnn->calls[i]);
  if (dnn->handle)
    lib.api.cudnnDestroy(dnn->handle);
  free(dnn->calls);
  free(dnn);
}

/* Makes the convolution API's descriptors of `call` that hold at every
 * batch (the filter, the convolution, the bias and the activations); 1 if
 * cuDNN accepts them all (no handle or GPU needed). */
static int describe_call(conv_state *c, const kiln_library_call *call) {
  const int64_t *p = call->params, *w = call->operand_dims[1];
  int64_t out_channels = call->operand_dims[2][1];
  int ok = lib.api.cudnnCreateFilterDescriptor(&c->w) == KILN_CUDNN_SUCCESS &&
           lib.api.cudnnSetFilter4dDescriptor(c->w, KILN_CUDNN_DATA_FLOAT,
                                              KILN_CUDNN_TENSOR_NCHW, (int)w[0], (int)w[1],
                                              (int)w[2], (int)w[3]) == KILN_CUDNN_SUCCESS &&
           lib.api.cudnnCreateConvolutionDescriptor(&c->conv) == KILN_CUDNN_SUCCESS &&
           lib.api.cudnnSetConvolution2dDescriptor(
               c->conv, (int)p[5], (int)p[6], (int)p[1], (int)p[2], (int)p[3], (int)p[4],
               KILN_CUDNN_CROSS_CORRELATION, KILN_CUDNN_DATA_FLOAT) == KILN_CUDNN_SUCCESS &&
           lib.api.cudnnSetConvolutionGroupCount(c->conv, (int)p[0]) == KILN_CUDNN_SUCCESS &&
           lib.api.cudnnSetConvolutionMathType(c->conv, KILN_CUDNN_FMA_MATH) ==
               KILN_CUDNN_SUCCESS;
  c->y_batch_stride = output_batch_stride(call);
  int32_t act = call->epilogue.activation;
  int fused_relu = call->epilogue.has_bias && act == KILN_ACTIVATION_RELU;
  if (ok && call->epilogue.has_bias)
    ok = lib.api.cudnnCreateActivationDescriptor(&c->activation) == KILN_CUDNN_SUCCESS &&
         lib.api.cudnnSetActivationDescriptor(
             c->activation,
             fused_relu ? KILN_CUDNN_ACTIVATION_RELU : KILN_CUDNN_ACTIVATION_IDENTITY,
             KILN_CUDNN_NOT_PROPAGATE_NAN, 0.0) == KILN_CUDNN_SUCCESS &&
         lib.api.cudnnCreateTensorDescriptor(&c->bias) == KILN_CUDNN_SUCCESS &&
         lib.api.cudnnSetTensor4dDescriptor(c->bias, KILN_CUDNN_TENSOR_NCHW,
                                            KILN_CUDNN_DATA_FLOAT, 1, (int)out_channels, 1,
                                            1) == KILN_CUDNN_SUCCESS;
  if (ok && act != KILN_ACTIVATION_NONE && !fused_relu) {
    int mode = act == KILN_ACTIVATION_RELU      ? KILN_CUDNN_ACTIVATION_RELU
               : act == KILN_ACTIVATION_CLIP    ? KILN_CUDNN_ACTIVATION_CLIPPED_RELU
               : act == KILN_ACTIVATION_SIGMOID ? KILN_CUDNN_ACTIVATION_SIGMOID
                                                : KILN_CUDNN_ACTIVATION_TANH;
    ok = lib.api.cudnnCreateActivationDescriptor(&c->after) == KILN_CUDNN_SUCCESS &&
         lib.api.cudnnSetActivationDescriptor(c->after, mode, KILN_CUDNN_NOT_PROPAGATE_NAN,
                                              call->epilogue.beta) == KILN_CUDNN_SUCCESS;
  }
  return ok;
}

/* Makes plan `p`'s input and output descriptors at `dims` and checks that
 * cuDNN's convolution of `c` makes the call's output dims; 0, else -1 and
 * `why`. */
static int describe_tensors(plan *p, const conv_state *c, const int64_t *const *dims, char *why,
                            size_t why_bytes) {
  const int64_t *x = dims[0], *y = dims[2];
  int n = 0, channels = 0, h = 0, w = 0;
  if (lib.api.cudnnCreateTensorDescriptor(&p->x) != KILN_CUDNN_SUCCESS ||
      lib.api.cudnnSetTensor4dDescriptor(p->x, KILN_CUDNN_TENSOR_NCHW, KILN_CUDNN_DATA_FLOAT,
                                         (int)x[0], (int)x[1], (int)x[2],
                                         (int)x[3]) != KILN_CUDNN_SUCCESS ||
      lib.api.cudnnCreateTensorDescriptor(&p->y) != KILN_CUDNN_SUCCESS ||
      lib.api.cudnnSetTensor4dDescriptorEx(p->y, KILN_CUDNN_DATA_FLOAT, (int)y[0], (int)y[1],
                                           (int)y[2], (int)y[3], (int)c->y_batch_stride,
                                           (int)(y[2] * y[3]), (int)y[3],
                                           1) != KILN_CUDNN_SUCCESS) {
    snprintf(why, why_bytes, "cuDNN refused the tensors");
    return -1;
  }
  /* The descriptors' pads, strides and dilations give the call's output. */
  if (lib.api.cudnnGetConvolution2dForwardOutputDim(c->conv, p->x, c->w, &n, &channels, &h,
                                                    &w) != KILN_CUDNN_SUCCESS ||
      n != y[0] || channels != y[1] || h != y[2] || w != y[3]) {
    snprintf(why, why_bytes,
             "cuDNN's convolution makes [%d, %d, %d, %d], the call's output is "
             "[%lld, %lld, %lld, %lld]",
             n, channels, h, w, (long long)y[0], (long long)y[1], (long long)y[2],
             (long long)y[3]);
    return -1;
  }
  return 0;
}

int kiln_cudnn_describe(const kiln_library_call *call, const int64_t *const *dims, char *why,
                        size_t why_bytes) {
  conv_state c;
  plan p;
  memset(&c, 0, sizeof c);
  memset(&p, 0, sizeof p);
  int ok = describe_call(&c, call);
  if (!ok)
    snprintf(why, why_bytes, "cuDNN refused the convolution's descriptors");
  else if (describe_tensors(&p, &c, dims, why, why_bytes) != 0)
    ok = 0;
  free_plan(&p);
  free_call(&c);
  return ok ? 0 : -1;
}

static kiln_status prepare(kiln_cudnn *dnn);

kiln_status kiln_cudnn_create(const kiln_model_v1 *abi, void *stream, void *workspace,
                              size_t workspace_bytes, kiln_cudnn **out) {
  *out = NULL;
  int any = 0;
  for (uint32_t i = 0; i < abi->num_library_calls; ++i)
    any |= abi->library_calls[i].kind == KILN_LIBRARY_CONV;
  if (!any)
    return KILN_OK;
  kiln_cudnn *dnn = calloc(1, sizeof *dnn);
  if (!dnn)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  dnn->abi = abi;
  dnn->workspace = workspace;
  dnn->workspace_bytes = workspace_bytes;
  dnn->nondeterministic = abi->gpu && (abi->gpu->flags & KILN_GPU_ALLOW_NONDETERMINISTIC);
  dnn->graphs = !kiln_env_is("KILN_CUDNN_GRAPH", "0");
  dnn->calls = calloc(abi->num_library_calls, sizeof *dnn->calls);
  if (!dnn->calls || lib.api.cudnnCreate(&dnn->handle) != KILN_CUDNN_SUCCESS ||
      lib.api.cudnnSetStream(dnn->handle, stream) != KILN_CUDNN_SUCCESS) {
    kiln_cudnn_free(dnn);
    return kiln_fail(KILN_ERROR_LOAD, "cuDNN cannot be initialised");
  }
  for (uint32_t i = 0; i < abi->num_library_calls; ++i) {
    const kiln_library_call *call = &abi->library_calls[i];
    if (call->kind != KILN_LIBRARY_CONV)
      continue;
    if (!describe_call(&dnn->calls[i], call)) {
      kiln_cudnn_free(dnn);
      return kiln_fail(KILN_ERROR_LOAD, "cuDNN refused the descriptors of call %u", i);
    }
  }
  kiln_status prepared = prepare(dnn);
  if (prepared != KILN_OK) {
    kiln_cudnn_free(dnn);
    return prepared;
  }
  *out = dnn;
  return KILN_OK;
}

/* Marks `slot` as the plan of `batch`, just used. */
static plan *keep(kiln_cudnn *dnn, plan *slot, int64_t batch) {
  slot->used = 1;
  slot->batch = batch;
  slot->last_use = ++dnn->clock;
  return slot;
}

/* The plan of call `id` for its dims (the batch is what varies). */
static plan *plan_for(kiln_cudnn *dnn, uint32_t id, const int64_t *const *dims) {
  conv_state *c = &dnn->calls[id];
  int64_t batch = dims[0][0];
  plan *slot = &c->plans[0];
  for (int i = 0; i < KILN_CUDNN_PLANS; ++i) {
    if (c->plans[i].used && c->plans[i].batch == batch) {
      c->plans[i].last_use = ++dnn->clock;
      return &c->plans[i];
    }
    if (!c->plans[i].used || (slot->used && c->plans[i].last_use < slot->last_use))
      slot = &c->plans[i];
  }
  free_plan(slot);
  const kiln_library_call *call = &dnn->abi->library_calls[id];
  if (dnn->graphs && !c->no_graph) {
    /* The fused graph when an engine runs it; else the convolution API. */
    char why[256];
    kiln_cudnn_graph *graph = kiln_cudnn_graph_build(&lib.api, call, dims, why, sizeof why);
    if (graph && kiln_cudnn_graph_plan(graph, dnn->handle, dnn->nondeterministic,
                                       dnn->workspace_bytes, why, sizeof why) == 0) {
      slot->graph = graph;
      dnn->graph_plans += 1;
      return keep(dnn, slot, batch);
    }
    kiln_cudnn_graph_free(graph);
    if (!dnn->fallback_reason[0])
      snprintf(dnn->fallback_reason, sizeof dnn->fallback_reason, "call %u at batch %lld: %s",
               id, (long long)batch, why);
  }
  char why[256];
  if (describe_tensors(slot, c, dims, why, sizeof why) != 0) {
    free_plan(slot);
    kiln_fail(KILN_ERROR_RUN, "call %u at batch %lld: %s", id, (long long)batch, why);
    return NULL;
  }
  int algo = -1;
  if (call->epilogue.has_bias && call->epilogue.activation != KILN_ACTIVATION_RELU) {
    /* The fused call with the identity takes this algorithm only. */
    size_t bytes = 0;
    if (lib.api.cudnnGetConvolutionForwardWorkspaceSize(
            dnn->handle, slot->x, c->w, c->conv, slot->y, KILN_CUDNN_ALGO_IMPLICIT_PRECOMP_GEMM,
            &bytes) == KILN_CUDNN_SUCCESS &&
        bytes <= dnn->workspace_bytes)
      algo = KILN_CUDNN_ALGO_IMPLICIT_PRECOMP_GEMM;
  } else {
    /* The heuristic's first that fits, deterministic unless the artifact
     * allows otherwise (--allow-nondeterministic). */
    cudnnConvolutionFwdAlgoPerf_t results[8];
    int returned = 0;
    if (lib.api.cudnnGetConvolutionForwardAlgorithm_v7(dnn->handle, slot->x, c->w, c->conv,
                                                       slot->y, 8, &returned, results) ==
        KILN_CUDNN_SUCCESS)
      for (int i = 0; i < returned && algo < 0; ++i)
        if (results[i].status == KILN_CUDNN_SUCCESS &&
            (dnn->nondeterministic || results[i].determinism == KILN_CUDNN_DETERMINISTIC) &&
            results[i].memory <= dnn->workspace_bytes)
          algo = results[i].algo;
  }
  if (algo < 0) {
    free_plan(slot);
    kiln_fail(KILN_ERROR_RUN, "cuDNN has no %salgorithm for call %u at batch %lld that fits "
              "the %zu-byte workspace",
              dnn->nondeterministic ? "" : "deterministic ",
              id, (long long)batch, dnn->workspace_bytes);
    return NULL;
  }
  slot->algo = algo;
  dnn->api_plans += 1;
  return keep(dnn, slot, batch);
}

/* Makes each call's plan, when the session is created, for each batch
 * the artifact declares (1 when it declares none); one for guessed dims (a
 * dynamic dim need not be the batch) that cuDNN refuses is left to the
 * first run of its shape. */
static int prepare_call(void *context, uint32_t id, const int64_t *const *dims, int guessed) {
  return dims[0][0] && !plan_for(context, id, dims) && !guessed;
}

static kiln_status prepare(kiln_cudnn *dnn) {
  return kiln_prepare_calls(dnn->abi, KILN_LIBRARY_CONV, prepare_call, dnn)
             ? KILN_ERROR_RUN /* its message */
             : KILN_OK;
}

int kiln_cudnn_execute(kiln_cudnn *dnn, uint32_t id, void *const *operands,
                       const int64_t *const *dims) {
  if (!dnn || id >= dnn->abi->num_library_calls ||
      dnn->abi->library_calls[id].kind != KILN_LIBRARY_CONV)
    return -1;
  if (!dims[0][0])
    return 0; /* an empty batch */
  const kiln_library_call *call = &dnn->abi->library_calls[id];
  conv_state *c = &dnn->calls[id];
  plan *p = plan_for(dnn, id, dims);
  if (!p)
    return -1;
  cudnnStatus_t status;
  if (p->graph) {
    status = kiln_cudnn_graph_execute(p->graph, dnn->handle, operands, dnn->workspace);
    if (status == KILN_CUDNN_SUCCESS) {
      p->ran = 1;
      return 0;
    }
    if (p->ran) {
      kiln_fail(KILN_ERROR_RUN, "cuDNN failed (status %d) in call %u (graph API)", status, id);
      return -1;
    }
    /* A plan that fails its first run (on the stream, never in a capture:
     * a bucket's first run is not captured) is dropped, and the call goes
     * through the convolution API from now on. */
    if (!dnn->fallback_reason[0])
      snprintf(dnn->fallback_reason, sizeof dnn->fallback_reason,
               "call %u at batch %lld: its fused graph's plan failed its first run (status %d)",
               id, (long long)dims[0][0], status);
    dnn->graph_plans -= 1;
    c->no_graph = 1;
    free_plan(p);
    if (!(p = plan_for(dnn, id, dims)))
      return -1;
  }
  float one = 1.0f, zero = 0.0f, residual = call->epilogue.has_residual ? 1.0f : 0.0f;
  if (call->epilogue.has_bias)
    /* y = act(conv(x) + residual * z + bias), z the output's own buffer. */
    status = lib.api.cudnnConvolutionBiasActivationForward(
        dnn->handle, &one, p->x, operands[0], c->w, operands[1], c->conv, p->algo,
        dnn->workspace, dnn->workspace_bytes, &residual, p->y, operands[2], c->bias, operands[3],
        c->activation, p->y, operands[2]);
  else
    /* y = conv(x) + residual * y */
    status = lib.api.cudnnConvolutionForward(dnn->handle, &one, p->x, operands[0], c->w,
                                             operands[1], c->conv, p->algo, dnn->workspace,
                                             dnn->workspace_bytes, &residual, p->y, operands[2]);
  if (status == KILN_CUDNN_SUCCESS && c->after)
    /* y = act(y), in place. */
    status = lib.api.cudnnActivationForward(dnn->handle, c->after, &one, p->y, operands[2], &zero,
                                            p->y, operands[2]);
  if (status != KILN_CUDNN_SUCCESS) {
    kiln_fail(KILN_ERROR_RUN, "cuDNN failed (status %d) in call %u", status, id);
    return -1;
  }
  return 0;
}

void kiln_cudnn_plans(const kiln_cudnn *dnn, uint32_t *graph_plans, uint32_t *api_plans,
                      const char **fallback_reason) {
  *graph_plans = dnn ? dnn->graph_plans : 0;
  *api_plans = dnn ? dnn->api_plans : 0;
  *fallback_reason = dnn && dnn->fallback_reason[0] ? dnn->fallback_reason : NULL;
}
