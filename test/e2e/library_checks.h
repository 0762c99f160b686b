/*===- library_checks.h - checks of the runtime's plans in a vendor library -===*
 *
 * For the tests that run the runtime's library-call code against the
 * installed cuDNN or cuBLASLt (cudnn_graph_test.c, cublaslt_descriptor_test.c):
 * a named check counted in `passed` / `failed`, and the check of every
 * call of one kind in a CUDA artifact.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_TEST_E2E_LIBRARY_CHECKS_H
#define KILN_TEST_E2E_LIBRARY_CHECKS_H

#include "device.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;

static void check(int ok, const char *what, const char *detail) {
  if (ok) {
    ++passed;
    printf("PASS: %s\n", what);
  } else {
    ++failed;
    printf("FAIL: %s%s%s\n", what, detail && *detail ? ": " : "", detail ? detail : "");
  }
}

/* A call's dims (3 operands, ranks up to 4) with each -1 (a dynamic dim)
 * taken as `batch`; `rows` is what the runtime's calls take. */
typedef struct call_dims {
  int64_t dims[3][4];
  const int64_t *rows[3];
} call_dims;

static void dims_at_batch(const kiln_library_call *call, int64_t batch, call_dims *out) {
  for (int o = 0; o < 3; ++o) {
    for (int d = 0; d < call->operand_ranks[o] && d < 4; ++d)
      out->dims[o][d] = call->operand_dims[o][d] < 0 ? batch : call->operand_dims[o][d];
    out->rows[o] = out->dims[o];
  }
}

/* Checks that the runtime loads the library (`loads`: kiln_cudnn_check or
 * kiln_cublaslt_check) for a model of the one call `call`, which resolves
 * every entry point it uses; 1 if it does. */
static int check_runtime_loads(kiln_status (*loads)(const kiln_model_v1 *, const char *),
                               const kiln_library_call *call, const char *what) {
  kiln_model_v1 abi;
  memset(&abi, 0, sizeof abi);
  abi.num_library_calls = 1;
  abi.library_calls = call;
  kiln_status status = loads(&abi, "the synthetic model");
  check(status == KILN_OK, what, status == KILN_OK ? "" : kiln_last_error());
  return status == KILN_OK;
}

/* Whether the library accepts `call` at batch 1 (`why` when not). */
typedef int (*accepts_call)(void *context, const kiln_library_call *call, char *why,
                            size_t why_bytes);

/* Checks that the artifact at `path` has calls of `kind` (`noun`: what
 * they are, for the message) and that `accepts` takes each. */
static void check_artifact_calls(const char *path, int32_t kind, const char *noun,
                                 accepts_call accepts, void *context) {
  void *artifact = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const kiln_model_v1 *abi = artifact ? dlsym(artifact, "kiln_model_descriptor") : NULL;
  if (!abi) {
    check(0, path, "not a Kiln artifact");
    return;
  }
  int calls = 0, ok = 0;
  char why[320], first[400] = "", what[512], none[64];
  for (uint32_t c = 0; c < abi->num_library_calls; ++c) {
    const kiln_library_call *call = &abi->library_calls[c];
    if (call->kind != kind)
      continue;
    ++calls;
    if (accepts(context, call, why, sizeof why))
      ++ok;
    else if (!first[0])
      snprintf(first, sizeof first, "call %u: %s", c, why);
  }
  snprintf(what, sizeof what, "%s: %d %s calls accepted", path, calls, noun);
  snprintf(none, sizeof none, "no %s call", noun);
  check(calls > 0 && ok == calls, what, calls ? first : none);
}

#endif
