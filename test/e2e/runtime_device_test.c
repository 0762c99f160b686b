/* runtime_device_test.c
 * The runtime picks its device from the descriptor and lets the device
 * check the host first: an artifact for a device this runtime lacks, or
 * one whose code needs processor features the host lacks (or the runtime
 * does not know), is refused at load with a message naming the device or
 * the features, instead of faulting on the first instruction (SIGILL).
 * The CPU device reads each library call in its kind's layout (operand
 * dims, parameters, epilogue) and refuses a malformed one when a session
 * is created. Descriptors are built by hand here; their `run` is never
 * called.
 * Prints "N passed, N failed". */
#include "kiln/kiln.h"

#include <stdio.h>
#include <string.h>

static int passed, failed;
/* Evaluates `cond` once (it may load a model). */
#define CHECK(cond, ...)                                                                        \
  do {                                                                                          \
    int ok = (cond);                                                                            \
    printf("%s: ", ok ? "PASS" : "FAIL");                                                       \
    printf(__VA_ARGS__);                                                                        \
    printf("\n");                                                                               \
    if (ok) ++passed; else ++failed;                                                            \
  } while (0)

static int never_run(const kiln_runtime_services *s, void *state, void *const *in_data,
                     const int64_t *const *in_dims, void **out_alloc, void **out_data,
                     int64_t *const *out_dims) {
  return 1;
}

/* One float output of one element (a model has at least one output). */
static const int64_t output_dims[1] = {1};
static const kiln_model_tensor output = {"y", KILN_DTYPE_F32, 1, output_dims};

static kiln_model_v1 descriptor(uint32_t device, const char *features) {
  kiln_model_v1 abi;
  memset(&abi, 0, sizeof abi);
  abi.num_outputs = 1;
  abi.outputs = &output;
  abi.magic = KILN_MODEL_MAGIC;
  abi.abi_version = KILN_MODEL_ABI_VERSION;
  abi.content_hash = "test";
  abi.target = "x86_64-unknown-linux-gnu test-cpu";
  abi.device = device;
  abi.required_features = features;
  abi.run = never_run;
  return abi;
}

int main(void) {
  kiln_model *model = NULL;

  kiln_model_v1 plain = descriptor(KILN_DEVICE_CPU, "");
  CHECK(kiln_model_from_abi(&plain, &model) == KILN_OK, "a CPU model needing no feature loads");
  kiln_model_free(model);

  kiln_model_v1 other = descriptor(99, "");
  CHECK(kiln_model_from_abi(&other, &model) == KILN_ERROR_LOAD &&
            strstr(kiln_last_error(), "device kind 99") && strstr(kiln_last_error(), "cpu"),
        "an unknown device is refused, naming the ones there are: %s", kiln_last_error());

  kiln_model_v1 unknown = descriptor(KILN_DEVICE_CPU, "avx2,kiln-no-such-feature");
  CHECK(kiln_model_from_abi(&unknown, &model) == KILN_ERROR_LOAD &&
            strstr(kiln_last_error(), "kiln-no-such-feature") &&
            !strstr(kiln_last_error(), "avx2"),
        "a feature the runtime does not know is refused by name: %s", kiln_last_error());

  /* Each feature alone: either the host has it (the model loads) or the
   * message names exactly it as lacking. */
  const char *features[] = {"sse4.2",     "avx2",     "fma",      "avx512f",   "avx512bw",
                            "avx512vnni", "avx512bf16", "avx512fp16", "amx-tile", "amx-int8"};
  int lacking = 0;
  for (size_t i = 0; i < sizeof features / sizeof features[0]; ++i) {
    kiln_model_v1 abi = descriptor(KILN_DEVICE_CPU, features[i]);
    kiln_status status = kiln_model_from_abi(&abi, &model);
    if (status == KILN_OK) {
      CHECK(1, "host has %s: loads", features[i]);
      kiln_model_free(model);
    } else {
      ++lacking;
      CHECK(status == KILN_ERROR_LOAD && strstr(kiln_last_error(), features[i]) &&
                strstr(kiln_last_error(), "lacks") && strstr(kiln_last_error(), "test-cpu"),
            "host lacks %s: refused: %s", features[i], kiln_last_error());
    }
  }
  printf("this host lacks %d of %zu checked features\n", lacking,
         sizeof features / sizeof features[0]);

  /* A matmul [?,4] x [4,3] -> [?,3] with a bias, and a convolution whose
   * parameter list has the wrong length for its kind. */
  static const int32_t ranks[] = {2, 2, 2};
  static const int64_t lhs[] = {-1, 4}, rhs[] = {4, 3}, out[] = {-1, 3};
  static const int64_t *const dims[] = {lhs, rhs, out};
  static const int32_t conv_ranks[] = {4, 4, 4};
  static const int64_t x[] = {1, 3, 8, 8}, w[] = {4, 3, 3, 3}, y[] = {1, 4, 6, 6};
  static const int64_t *const conv_dims[] = {x, w, y};
  static const int64_t short_params[] = {1, 1, 1};
  kiln_library_call calls[2];
  memset(calls, 0, sizeof calls);
  calls[0].kind = KILN_LIBRARY_MATMUL;
  calls[0].num_operands = 3;
  calls[0].operand_ranks = ranks;
  calls[0].operand_dims = dims;
  calls[0].epilogue.has_bias = 1;
  calls[0].epilogue.activation = KILN_ACTIVATION_RELU;
  calls[1].kind = KILN_LIBRARY_CONV;
  calls[1].num_operands = 3;
  calls[1].operand_ranks = conv_ranks;
  calls[1].operand_dims = conv_dims;
  calls[1].num_params = 3;
  calls[1].params = short_params;
  kiln_model_v1 with_calls = descriptor(KILN_DEVICE_CPU, "");
  with_calls.library_calls = calls;
  kiln_session *session = NULL;
  with_calls.num_library_calls = 1;
  CHECK(kiln_model_from_abi(&with_calls, &model) == KILN_OK &&
            kiln_session_create(model, &session) == KILN_OK,
        "a well-formed matmul call (bias, relu) is prepared");
  kiln_session_free(session);
  kiln_model_free(model);
  with_calls.num_library_calls = 2;
  model = NULL;
  /* Refused when the model is loaded, before anything reads the call. */
  CHECK(kiln_model_from_abi(&with_calls, &model) == KILN_ERROR_FORMAT && model == NULL &&
            strstr(kiln_last_error(), "library call 1 has an invalid description"),
        "a convolution with 3 parameters (its kind takes 9) is refused at load: %s",
        kiln_last_error());

  /* The matmul with a hard sigmoid (two post-ops: linear, then a clip)
   * and with HardSwish is prepared; a HardSwish with other parameters
   * than ONNX's (oneDNN's has none) and an activation past the last are
   * refused at load. */
  with_calls.num_library_calls = 1;
  const struct {
    int32_t activation;
    float alpha, beta;
    int prepared;
  } activations[] = {{KILN_ACTIVATION_HARDSIGMOID, 0.2f, 0.5f, 1},
                     {KILN_ACTIVATION_HARDSWISH, 1.0f / 6.0f, 0.5f, 1},
                     {KILN_ACTIVATION_HARDSWISH, 0.25f, 0.5f, 0},
                     {KILN_ACTIVATION_HARDSWISH + 1, 0.0f, 0.0f, 0}};
  for (size_t i = 0; i < sizeof activations / sizeof activations[0]; ++i) {
    calls[0].epilogue.activation = activations[i].activation;
    calls[0].epilogue.alpha = activations[i].alpha;
    calls[0].epilogue.beta = activations[i].beta;
    model = NULL;
    session = NULL;
    kiln_status status = kiln_model_from_abi(&with_calls, &model);
    if (activations[i].prepared)
      CHECK(status == KILN_OK && kiln_session_create(model, &session) == KILN_OK,
            "a matmul with activation %d (%g, %g) is prepared", activations[i].activation,
            activations[i].alpha, activations[i].beta);
    else
      CHECK(status == KILN_ERROR_FORMAT && model == NULL &&
                strstr(kiln_last_error(), "library call 0 has an invalid description"),
            "a matmul with activation %d (%g, %g) is refused at load: %s",
            activations[i].activation, activations[i].alpha, activations[i].beta,
            kiln_last_error());
    kiln_session_free(session);
    kiln_model_free(model);
  }

  /* A channel scale [?,8,5,5] * [?,8,1,1], channels-last in and out: is
   * prepared, also with a bias and an activation (a batch norm and its
   * ReLU); with a residual, constant weights, a scale that is not
   * [N or 1,C,1,1] or a third layout it is refused at load. */
  static const int64_t sx[] = {-1, 8, 5, 5}, ss[] = {-1, 8, 1, 1}, s1[] = {1, 8, 1, 1};
  static const int64_t wide[] = {-1, 8, 5, 1}, other_c[] = {-1, 4, 1, 1}, batch2[] = {2, 8, 1, 1};
  static const int64_t *const scale_dims[] = {sx, ss, sx};
  static const int64_t last[] = {KILN_LAYOUT_CHANNELS_LAST, KILN_LAYOUT_CHANNELS_LAST};
  static const int64_t third[] = {KILN_LAYOUT_CHANNELS_LAST, 2};
  const int64_t *const bad_scales[] = {wide, other_c, batch2};
  kiln_library_call scale;
  memset(&scale, 0, sizeof scale);
  scale.kind = KILN_LIBRARY_SCALE;
  scale.num_operands = 3;
  scale.operand_ranks = conv_ranks;
  scale.operand_dims = scale_dims;
  scale.num_params = 2;
  scale.params = last;
  with_calls.library_calls = &scale;
  with_calls.num_library_calls = 1;
  session = NULL;
  CHECK(kiln_model_from_abi(&with_calls, &model) == KILN_OK &&
            kiln_session_create(model, &session) == KILN_OK,
        "a well-formed channel scale call is prepared");
  kiln_session_free(session);
  kiln_model_free(model);
  scale.epilogue.has_bias = 1;
  scale.epilogue.activation = KILN_ACTIVATION_RELU;
  session = NULL;
  CHECK(kiln_model_from_abi(&with_calls, &model) == KILN_OK &&
            kiln_session_create(model, &session) == KILN_OK,
        "a channel scale with a bias and a ReLU is prepared: %s", kiln_last_error());
  kiln_session_free(session);
  kiln_model_free(model);
  scale.epilogue.has_bias = 0;
  scale.epilogue.activation = KILN_ACTIVATION_NONE;
  const int64_t *given_scales[] = {ss, s1};
  for (int i = 0; i < 2; ++i) {
    const int64_t *const fine[] = {sx, given_scales[i], sx};
    scale.operand_dims = fine;
    scale.num_params = i ? 0 : 2;
    model = NULL;
    CHECK(kiln_model_from_abi(&with_calls, &model) == KILN_OK,
          "a scale of batch %s, layouts %s, loads", i ? "1" : "N", i ? "absent" : "given");
    kiln_model_free(model);
  }
  scale.operand_dims = scale_dims;
  scale.num_params = 2;
  for (int i = 0; i < 6; ++i) {
    kiln_library_call bad = scale;
    const int64_t *const bad_dims[] = {sx, bad_scales[i < 3 ? i : 0], sx};
    if (i < 3)
      bad.operand_dims = bad_dims;
    else if (i == 3)
      bad.epilogue.has_residual = 1;
    else if (i == 4)
      bad.weights = sx;
    else
      bad.params = third;
    with_calls.library_calls = &bad;
    model = NULL;
    CHECK(kiln_model_from_abi(&with_calls, &model) == KILN_ERROR_FORMAT && model == NULL &&
              strstr(kiln_last_error(), "library call 0 has an invalid description"),
          "a malformed channel scale (case %d) is refused at load: %s", i, kiln_last_error());
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
