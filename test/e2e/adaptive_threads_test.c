/* adaptive_threads_test.c MODEL.so BATCH
 * A CPU session's thread count, run by run (kiln_session_thread_stats,
 * runtime/src/thread_policy.h). Off by default (KILN_ADAPTIVE_THREADS=1
 * turns it on for every session): a session of 2 threads then runs on 2
 * threads only, each output the bits of the session's first run. Turned
 * on (kiln_session_set_adaptive_threads), the session tries 1 thread
 * once its input shape has a timed run (the 4th run): that run's output
 * is the bits of a 1-thread session's (the reduced count runs primitives
 * made for it), every other run's the bits of one of the two counts.
 * Turned off again, no run uses fewer threads. A 1-thread session never
 * changes. (resnet18 at batch 2 is where 1 and 2 threads give different
 * bits on AVX-512, from its Winograd convolutions; where they give the
 * same, as on AVX2, the try's check cannot tell the counts apart: the
 * test says which.) The policy's response to a busy core is measured by make
 * bench, its rules by the unit tests. Prints "N passed, N failed". */
#include "check.h"
#include "inputs.h"

#include <stdlib.h>
#include <string.h>

static int passed, failed;

/* Runs `session` and copies output 0 into *into; its bytes, 0 on failure. */
static size_t run_once(kiln_session *session, const kiln_tensor *inputs, uint32_t n, void **into) {
  kiln_tensor out;
  if (kiln_session_run(session, inputs, n) != KILN_OK ||
      kiln_session_output(session, 0, &out) != KILN_OK)
    return 0;
  size_t bytes = test_count_of(out.dims, out.rank) * kiln_dtype_size(out.dtype);
  free(*into);
  *into = malloc(bytes);
  memcpy(*into, out.data, bytes);
  return bytes;
}

static int same(const void *a, const void *b, size_t bytes) {
  return a && b && memcmp(a, b, bytes) == 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODEL.so BATCH\n", argv[0]);
    return 2;
  }
  const char *env = getenv("KILN_ADAPTIVE_THREADS");
  int by_default = env && strcmp(env, "1") == 0;
  kiln_model *model = NULL;
  CHECK(kiln_model_load(argv[1], &model) == KILN_OK, "loading %s", argv[1]);
  if (!model) {
    printf("%d passed, %d failed\n", passed, failed);
    return 1;
  }
  kiln_thread_stats stats;
  CHECK(kiln_session_thread_stats(NULL, &stats) == KILN_ERROR_INVALID_ARGUMENT &&
            kiln_session_set_adaptive_threads(NULL, 1) == KILN_ERROR_INVALID_ARGUMENT,
        "a null session is an error");
  kiln_tensor inputs[MAX_TEST_INPUTS];
  uint32_t n = make_inputs(model, atol(argv[2]), inputs);
  CHECK(n > 0, "inputs at batch %s", argv[2]);

  /* One thread: never changes, even when asked to. */
  kiln_session_options one_thread = {1, NULL}, two_threads = {2, NULL};
  kiln_session *one = NULL, *two = NULL;
  CHECK(kiln_session_create_with_options(model, &one_thread, &one) == KILN_OK &&
            kiln_session_create_with_options(model, &two_threads, &two) == KILN_OK,
        "sessions of 1 and 2 threads");
  void *on_one = NULL, *on_two = NULL, *got = NULL;
  CHECK(one && kiln_session_set_adaptive_threads(one, 1) == KILN_OK, "asking a 1-thread session");
  size_t bytes = one ? run_once(one, inputs, n, &on_one) : 0;
  for (int r = 0; one && r < 9; ++r)
    run_once(one, inputs, n, &got);
  CHECK(bytes > 0 && kiln_session_thread_stats(one, &stats) == KILN_OK && stats.threads == 1 &&
            stats.reduced_threads == 1 && !stats.adaptive && stats.reduced_runs == 0,
        "a 1-thread session stays on 1 (threads %d, adaptive %d)", stats.threads,
        stats.adaptive);

  /* Two threads, as created: off unless KILN_ADAPTIVE_THREADS=1. */
  CHECK(two && run_once(two, inputs, n, &on_two) == bytes, "the 2-thread session's first run");
  int off_ok = 1;
  for (int r = 0; two && !by_default && r < 9; ++r)
    off_ok &= run_once(two, inputs, n, &got) == bytes && same(got, on_two, bytes);
  CHECK(two && kiln_session_thread_stats(two, &stats) == KILN_OK && stats.threads == 2 &&
            stats.adaptive == by_default,
        "KILN_ADAPTIVE_THREADS %s: the policy is %s", env ? env : "(unset)",
        by_default ? "on" : "off");
  if (!by_default)
    CHECK(off_ok && stats.reduced_threads == 2 && stats.reduced_runs == 0,
          "off: every run on 2 threads, the first run's bits");
  printf("1 and 2 threads give %s bits on this model\n",
         same(on_one, on_two, bytes) ? "the same" : "different");

  /* Turned on: runs 1-2 warm up, 3 is timed, 4 tries 1 thread. */
  CHECK(two && kiln_session_set_adaptive_threads(two, 1) == KILN_OK, "turning the policy on");
  int bits_ok = 1, fourth_on_one = 0;
  for (int r = 1; two && r <= 10; ++r) {
    int ok = run_once(two, inputs, n, &got) == bytes;
    if (r <= 3)
      bits_ok &= ok && same(got, on_two, bytes);
    else if (r == 4)
      fourth_on_one = ok && same(got, on_one, bytes);
    else
      bits_ok &= ok && (same(got, on_two, bytes) || same(got, on_one, bytes));
  }
  CHECK(two && kiln_session_thread_stats(two, &stats) == KILN_OK && stats.adaptive &&
            stats.reduced_threads == 1 && stats.runs == 10 && stats.tries >= 1 &&
            stats.reduced_runs >= 1,
        "on: 10 runs timed, 1 thread tried (%llu tries, %llu runs on 1, %llu switches)",
        (unsigned long long)stats.tries, (unsigned long long)stats.reduced_runs,
        (unsigned long long)stats.switches);
  CHECK(fourth_on_one, "the try (the 4th run) gives the 1-thread session's bits");
  CHECK(bits_ok, "every other run gives the bits of 2 threads (runs 1-3) or of one count");

  /* Off again: later runs all on 2 threads. */
  CHECK(two && kiln_session_set_adaptive_threads(two, 0) == KILN_OK, "turning the policy off");
  off_ok = 1;
  for (int r = 0; two && r < 6; ++r)
    off_ok &= run_once(two, inputs, n, &got) == bytes && same(got, on_two, bytes);
  CHECK(off_ok && kiln_session_thread_stats(two, &stats) == KILN_OK && !stats.adaptive &&
            stats.reduced_runs == 0,
        "off again: every run on 2 threads, the first run's bits");

  free(on_one);
  free(on_two);
  free(got);
  free_inputs(inputs, n);
  kiln_session_free(one);
  kiln_session_free(two);
  kiln_model_free(model);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
