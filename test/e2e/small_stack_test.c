/* small_stack_test.c BATCH MODEL.so...
 * Runs each model at batch BATCH on 1 and 2 threads from a thread whose
 * stack is 256 KiB (run it with OMP_STACKSIZE=256K so that the runtime's
 * worker threads have no more), and checks each output is bit-identical to
 * the same run from the main thread: the stack a run uses must not grow
 * with the batch. Inputs are synthetic (float: a sine; integer: small
 * values, valid token ids). Uses only kiln.h. Prints "N passed, N failed". */
#include "kiln/kiln.h"
#include "check.h"
#include "inputs.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

enum { STACK_BYTES = 256 * 1024 };

typedef struct job {
  const char *path;
  int64_t batch;
  int32_t threads;
  void *output; /* a copy of output 0 */
  size_t bytes;
  int ok;
} job;

/* Loads the model, runs it once at the job's batch, keeps output 0. */
static void *run_job(void *opaque) {
  job *j = opaque;
  kiln_model *model = NULL;
  kiln_session *session = NULL;
  kiln_tensor inputs[MAX_TEST_INPUTS];
  uint32_t n = 0;
  j->ok = 0;
  if (kiln_model_load(j->path, &model) != KILN_OK)
    return NULL;
  n = make_inputs(model, j->batch, inputs);
  kiln_session_options options = {j->threads, NULL};
  kiln_tensor out;
  if (kiln_session_create_with_options(model, &options, &session) == KILN_OK &&
      kiln_session_run(session, inputs, n) == KILN_OK &&
      kiln_session_output(session, 0, &out) == KILN_OK) {
    j->bytes = test_count_of(out.dims, out.rank) * kiln_dtype_size(out.dtype);
    j->output = malloc(j->bytes ? j->bytes : 1);
    if (j->output) {
      memcpy(j->output, out.data, j->bytes);
      j->ok = 1;
    }
  }
  kiln_session_free(session);
  free_inputs(inputs, n);
  kiln_model_free(model);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s BATCH MODEL.so...\n", argv[0]);
    return 2;
  }
  int64_t batch = atoll(argv[1]);
  /* Each artifact states the stack its generated code takes: known, and
   * well inside the small thread's. */
  for (int m = 2; m < argc; ++m) {
    kiln_model *model = NULL;
    uint64_t stack = kiln_model_load(argv[m], &model) == KILN_OK ? kiln_model_stack_bytes(model) : 0;
    CHECK(stack > 0 && stack < STACK_BYTES / 4, "%s states its stack: %llu bytes", argv[m],
          (unsigned long long)stack);
    kiln_model_free(model);
  }
  for (int m = 2; m < argc; ++m)
    for (int32_t threads = 1; threads <= 2; ++threads) {
      job reference = {argv[m], batch, threads, NULL, 0, 0};
      run_job(&reference);
      CHECK(reference.ok, "%s batch %lld, %d thread(s), main thread", argv[m], (long long)batch,
            threads);
      job small = {argv[m], batch, threads, NULL, 0, 0};
      pthread_attr_t attr;
      pthread_t thread;
      pthread_attr_init(&attr);
      pthread_attr_setstacksize(&attr, STACK_BYTES);
      int started = pthread_create(&thread, &attr, run_job, &small) == 0;
      if (started)
        pthread_join(thread, NULL);
      pthread_attr_destroy(&attr);
      CHECK(started && small.ok && reference.ok && small.bytes == reference.bytes &&
                memcmp(small.output, reference.output, small.bytes) == 0,
            "%s batch %lld, %d thread(s), from a 256 KiB stack: same output", argv[m],
            (long long)batch, threads);
      if (small.ok && reference.ok)
        printf("ok: %s batch %lld, %d thread(s) on a 256 KiB stack\n", argv[m],
               (long long)batch, threads);
      free(reference.output);
      free(small.output);
    }
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
