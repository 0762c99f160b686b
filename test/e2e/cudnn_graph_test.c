/*===- cudnn_graph_test.c - Kiln's cuDNN plans against the real cuDNN ---------===*
 *
 * usage: cudnn-graph-test [ARTIFACT.so...]
 *
 * The runtime builds each convolution call as an operation graph of cuDNN
 * 9's graph API (runtime/src/devices/cudnn_graph.c). cuDNN validates and
 * finalises tensors, convolutions and operations without a GPU (only the
 * operation graph, the engines and plans need one), so this runs the
 * runtime's builder against the installed cuDNN here: every entry point
 * the runtime resolves exists; a synthetic call with every epilogue the
 * compiler hands cuDNN (bias, residual, ReLU, clip, sigmoid, tanh; groups,
 * strides, dilations, asymmetric pads) is accepted at batch 1 and 8, and
 * an inconsistent one refused; and so is every convolution call of the
 * CUDA artifacts named (the reference models). The same for the
 * convolution API, which runs a call no engine fuses: the runtime's own
 * descriptors (kiln_cudnn_describe) are accepted, and cuDNN's output from
 * them is the call's, which checks the order of pads, strides and
 * dilations the runtime passes (h and w differ in each). A call whose
 * output is channels of a concatenation (output_batch_stride) is taken
 * both ways, and one whose batch items would overlap is refused when the
 * artifact loads. The engines'
 * choice and the numbers are checked on a GPU (test/gpu/run.sh) and, on
 * host memory, against the stand-in (cuda-device-libraries). Skipped,
 * saying so, when cuDNN 9 is not installed. Ends with `N passed, N failed`.
 *
 *===----------------------------------------------------------------------===*/
#include "cudnn.h"
#include "cudnn_graph.h"
#include "library_checks.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *open_cudnn(void) {
  const char *chosen = getenv("KILN_CUDNN_LIBRARY");
  if (chosen)
    return dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
  void *library = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
  if (library)
    return library;
  const char *home = getenv("CUDA_HOME");
  char path[512];
  snprintf(path, sizeof path, "%s/lib64/libcudnn.so.9", home ? home : "/usr/local/cuda");
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* Builds the graph of `call` at `batch` (dims -1 there) with `api`; 1 if
 * accepted. */
static int builds(void *api, const kiln_library_call *call, int64_t batch, char *why,
                  size_t why_bytes) {
  call_dims at;
  dims_at_batch(call, batch, &at);
  kiln_cudnn_graph *graph = kiln_cudnn_graph_build(api, call, at.rows, why, why_bytes);
  int ok = graph != NULL;
  if (ok) {
    int want = 1 + call->epilogue.has_bias + call->epilogue.has_residual +
               (call->epilogue.activation != KILN_ACTIVATION_NONE);
    if (graph->num_ops != want) {
      snprintf(why, why_bytes, "%d operations, not %d", graph->num_ops, want);
      ok = 0;
    }
  }
  kiln_cudnn_graph_free(graph);
  return ok;
}

static int builds_at_batch_1(void *api, const kiln_library_call *call, char *why,
                             size_t why_bytes) {
  return builds(api, call, 1, why, why_bytes);
}

/* Whether `accepts` (builds or described) takes `call` at `batch`. */
typedef int (*accepts_at)(void *context, const kiln_library_call *call, int64_t batch,
                          char *why, size_t why_bytes);

/* Checks that `accepts` takes `call` with every epilogue the compiler
 * hands cuDNN (bias, residual, ReLU, a clip to [0, 6], sigmoid, tanh) at
 * batch 1 and 8; `what` says what, after the count. */
static void check_every_epilogue(kiln_library_call call, accepts_at accepts, void *context,
                                 const char *what) {
  static const int32_t activations[] = {KILN_ACTIVATION_NONE, KILN_ACTIVATION_RELU,
                                        KILN_ACTIVATION_CLIP, KILN_ACTIVATION_SIGMOID,
                                        KILN_ACTIVATION_TANH};
  int accepted = 0, tried = 0;
  char why[320], first[400] = "";
  for (size_t a = 0; a < sizeof activations / sizeof *activations; ++a)
    for (int bias = 0; bias < 2; ++bias)
      for (int residual = 0; residual < 2; ++residual)
        for (int64_t batch = 1; batch <= 8; batch += 7) {
          call.epilogue = (kiln_library_epilogue){bias, residual, activations[a], 0.0f, 6.0f};
          ++tried;
          if (accepts(context, &call, batch, why, sizeof why))
            ++accepted;
          else if (!first[0])
            snprintf(first, sizeof first, "activation %d, bias %d, residual %d, batch %lld: %s",
                     activations[a], bias, residual, (long long)batch, why);
        }
  char line[200];
  snprintf(line, sizeof line, "%d synthetic convolutions%s", tried, what);
  check(accepted == tried, line, first);
}

/* Describes `call` for the convolution API at `batch` (dims -1 there); 1
 * if cuDNN accepts it and makes the call's output. */
static int described(void *unused, const kiln_library_call *call, int64_t batch, char *why,
                     size_t why_bytes) {
  (void)unused;
  call_dims at;
  dims_at_batch(call, batch, &at);
  return kiln_cudnn_describe(call, at.rows, why, why_bytes) == 0;
}

static int described_at_batch_1(void *unused, const kiln_library_call *call, char *why,
                                size_t why_bytes) {
  return described(unused, call, 1, why, why_bytes);
}

/* The convolution API's descriptors, made by the runtime. */
static void check_convolution_api(int argc, char **argv) {
  /* x [n, 8, 17, 20] * w [16, 4, 3, 5], groups 2, stride (2, 3), dilation
   * (1, 2), pads (3, 1) both sides: y [n, 16, 11, 5]. Swapping h and w,
   * or strides and dilations, changes the output. */
  int32_t ranks[3] = {4, 4, 4};
  int64_t x[4] = {-1, 8, 17, 20}, w[4] = {16, 4, 3, 5}, y[4] = {-1, 16, 11, 5};
  const int64_t *dims[3] = {x, w, y};
  int64_t params[9] = {2, 2, 3, 1, 2, 3, 1, 3, 1};
  kiln_library_call call = {.kind = KILN_LIBRARY_CONV, .num_operands = 3, .operand_ranks = ranks,
                            .operand_dims = dims, .num_params = 9, .params = params};
  if (!check_runtime_loads(kiln_cudnn_check, &call,
                           "the runtime loads cuDNN for a model of a convolution"))
    return;
  check_every_epilogue(call, described, NULL,
                       "' API descriptors accepted, cuDNN's output the call's");
  char why[320];
  int64_t wider[4] = {-1, 16, 11, 6}; /* one column too many */
  dims[2] = wider;
  call.epilogue = (kiln_library_epilogue){1, 0, KILN_ACTIVATION_RELU, 0.0f, 0.0f};
  int refused = !described(NULL, &call, 1, why, sizeof why);
  check(refused && strstr(why, "[1, 16, 11, 5]"),
        "an output cuDNN's convolution does not make is refused, naming cuDNN's",
        refused ? why : "cuDNN accepted it");
  for (int i = 1; i < argc; ++i)
    check_artifact_calls(argv[i], KILN_LIBRARY_CONV, "convolution (convolution API)",
                         described_at_batch_1, NULL);
}

/* A call whose output is channels 16..31 of a concatenation of 40:
 * its batch items 40 * 11 * 5 elements apart. */
static void check_strided_output(void *api) {
  int32_t ranks[3] = {4, 4, 4};
  int64_t x[4] = {-1, 8, 17, 20}, w[4] = {16, 4, 3, 5}, y[4] = {-1, 16, 11, 5};
  const int64_t *dims[3] = {x, w, y};
  int64_t params[10] = {2, 2, 3, 1, 2, 3, 1, 3, 1, 40 * 11 * 5};
  kiln_library_call call = {.kind = KILN_LIBRARY_CONV, .num_operands = 3, .operand_ranks = ranks,
                            .operand_dims = dims, .num_params = 10, .params = params};
  if (!check_runtime_loads(kiln_cudnn_check, &call,
                           "the runtime loads a convolution writing into a concatenation"))
    return;
  check_every_epilogue(call, builds, api, " writing into a concatenation: graphs accepted");
  check_every_epilogue(call, described, NULL,
                       " writing into a concatenation: API descriptors accepted");
  kiln_model_v1 abi;
  memset(&abi, 0, sizeof abi);
  abi.num_library_calls = 1;
  abi.library_calls = &call;
  params[9] = 15 * 11 * 5; /* batch items overlapping */
  int refused = kiln_cudnn_check(&abi, "the synthetic model") != KILN_OK;
  check(refused && strstr(kiln_last_error(), "825 elements a batch item apart"),
        "an output whose batch items would overlap is refused when the artifact loads",
        refused ? kiln_last_error() : "loaded");
}

int main(int argc, char **argv) {
  void *library = open_cudnn();
  if (!library) {
    printf("SKIPPED: cuDNN 9 is not installed here (%s)\n0 passed, 0 failed\n", dlerror());
    return 0;
  }
  kiln_cudnn_api api;
  static const char *const names[] = {
#define NAME(name, parameters) #name,
      KILN_CUDNN_ENTRY_POINTS(NAME)
#undef NAME
  };
  void **slots = (void **)&api;
  char missing[256] = "";
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
    if (!(slots[i] = dlsym(library, names[i])) && !missing[0])
      snprintf(missing, sizeof missing, "%s is missing", names[i]);
  check(!missing[0], "cuDNN has every entry point the runtime resolves", missing);
  if (missing[0]) {
    printf("%d passed, %d failed\n", passed, failed);
    return 1;
  }

  /* Synthetic calls: x [n, 8, 9, 10] * w [16, 4, 3, 3], groups 2, stride
   * (1, 2), dilation (2, 1), pads (2, 1) before and (1, 0) after. */
  int32_t ranks[3] = {4, 4, 4};
  int64_t x[4] = {-1, 8, 9, 10}, w[4] = {16, 4, 3, 3}, y[4] = {-1, 16, 8, 5};
  const int64_t *dims[3] = {x, w, y};
  int64_t params[9] = {2, 1, 2, 2, 1, 2, 1, 1, 0};
  kiln_library_call call = {.kind = KILN_LIBRARY_CONV, .num_operands = 3,
                            .operand_ranks = ranks, .operand_dims = dims,
                            .num_params = 9, .params = params};
  check_every_epilogue(call, builds, &api, " with every epilogue accepted");
  char why[320];
  int64_t wrong[4] = {-1, 16, 8, 6}; /* one column too many */
  const int64_t *wrong_dims[3] = {x, w, wrong};
  kiln_library_call bad = {.kind = KILN_LIBRARY_CONV, .num_operands = 3, .operand_ranks = ranks,
                           .operand_dims = wrong_dims, .num_params = 9, .params = params};
  check(!builds(&api, &bad, 1, why, sizeof why), "an inconsistent output shape is refused",
        "cuDNN accepted it");

  for (int i = 1; i < argc; ++i)
    check_artifact_calls(argv[i], KILN_LIBRARY_CONV, "convolution", builds_at_batch_1, &api);
  check_convolution_api(argc, argv);
  check_strided_output(&api);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
