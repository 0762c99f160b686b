/* stress_test.c soak MODEL.so RUNS
 * stress_test.c threads MODEL.so THREADS RUNS
 * soak: one session runs the model RUNS times (batch 2): every output
 * bit-identical to the first run's, and after a warm-up of 100 runs the
 * process's RSS grows by less than 1 MiB and the session's pool reserves
 * nothing more.
 * threads: THREADS threads share one model, each with its own session
 * (1 thread each), RUNS runs each, every output bit-identical to a
 * single-threaded run; each thread also frees and creates its session
 * again every 100 runs, so sessions come and go concurrently.
 * Uses only kiln.h. Prints "N passed, N failed". */
#include "kiln/kiln.h"
#include "check.h"
#include "inputs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static kiln_model *model;
static kiln_tensor inputs[MAX_TEST_INPUTS];
static uint32_t num_inputs;
static void *want;
static size_t want_bytes;

/* Runs `session` once; whether output 0 equals `want` (NULL: stores it). */
static int run_matches(kiln_session *session) {
  kiln_tensor out;
  if (kiln_session_run(session, inputs, num_inputs) != KILN_OK ||
      kiln_session_output(session, 0, &out) != KILN_OK)
    return 0;
  size_t bytes = test_count_of(out.dims, out.rank) * kiln_dtype_size(out.dtype);
  if (!want) {
    want = malloc(bytes ? bytes : 1);
    if (!want)
      return 0;
    memcpy(want, out.data, bytes);
    want_bytes = bytes;
    return 1;
  }
  return bytes == want_bytes && memcmp(out.data, want, bytes) == 0;
}

static kiln_session *new_session(void) {
  kiln_session_options options = {1, NULL};
  kiln_session *session = NULL;
  if (kiln_session_create_with_options(model, &options, &session) != KILN_OK)
    return NULL;
  return session;
}

/* The process's resident set, in KiB (VmRSS). */
static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0)
      kib = atol(line + 6);
  if (f)
    fclose(f);
  return kib;
}

static int soak(long runs) {
  kiln_session *session = new_session();
  CHECK(session != NULL, "session");
  if (!session)
    return 1;
  long mismatches = 0;
  long warm = runs < 200 ? runs / 2 : 100;
  long rss_after_warmup = 0;
  kiln_memory_stats warm_stats = {0}, end_stats = {0};
  for (long i = 0; i < runs; ++i) {
    if (!run_matches(session))
      ++mismatches;
    if (i + 1 == warm) {
      rss_after_warmup = rss_kib();
      kiln_session_memory_stats(session, &warm_stats);
    }
  }
  long rss_end = rss_kib();
  kiln_session_memory_stats(session, &end_stats);
  printf("soak: %ld runs, RSS %ld KiB after %ld warm-up runs, %ld KiB at the end; pool "
         "reserved %llu -> %llu bytes\n",
         runs, rss_after_warmup, warm, rss_end, (unsigned long long)warm_stats.reserved_bytes,
         (unsigned long long)end_stats.reserved_bytes);
  CHECK(mismatches == 0, "%ld of %ld runs differ from the first", mismatches, runs);
  CHECK(rss_end - rss_after_warmup < 1024, "RSS grew by %ld KiB after warm-up",
        rss_end - rss_after_warmup);
  CHECK(end_stats.reserved_bytes == warm_stats.reserved_bytes,
        "the pool reserved %llu more bytes after warm-up",
        (unsigned long long)(end_stats.reserved_bytes - warm_stats.reserved_bytes));
  kiln_session_free(session);
  return 0;
}

typedef struct worker {
  long runs, mismatches, failures;
} worker;

static void *work(void *opaque) {
  worker *w = opaque;
  kiln_session *session = NULL;
  for (long i = 0; i < w->runs; ++i) {
    if (i % 100 == 0) {
      kiln_session_free(session);
      session = new_session();
    }
    if (!session) {
      ++w->failures;
      continue;
    }
    if (!run_matches(session))
      ++w->mismatches;
  }
  kiln_session_free(session);
  return NULL;
}

static int threads(int count, long runs) {
  pthread_t ids[64];
  worker workers[64];
  if (count < 1 || count > 64)
    return 2;
  for (int t = 0; t < count; ++t) {
    workers[t] = (worker){runs, 0, 0};
    CHECK(pthread_create(&ids[t], NULL, work, &workers[t]) == 0, "thread %d starts", t);
  }
  long mismatches = 0, failures = 0;
  for (int t = 0; t < count; ++t) {
    pthread_join(ids[t], NULL);
    mismatches += workers[t].mismatches;
    failures += workers[t].failures;
  }
  printf("threads: %d x %ld runs, %ld differ from a single-threaded run, %ld sessions not "
         "created\n",
         count, runs, mismatches, failures);
  CHECK(mismatches == 0 && failures == 0, "every run of every thread matches");
  return 0;
}

int main(int argc, char **argv) {
  int is_soak = argc == 4 && strcmp(argv[1], "soak") == 0;
  int is_threads = argc == 5 && strcmp(argv[1], "threads") == 0;
  if (!is_soak && !is_threads) {
    fprintf(stderr, "usage: %s soak MODEL.so RUNS | threads MODEL.so THREADS RUNS\n", argv[0]);
    return 2;
  }
  if (kiln_model_load(argv[2], &model) != KILN_OK) {
    printf("cannot load %s: %s\n0 passed, 1 failed\n", argv[2], kiln_last_error());
    return 1;
  }
  num_inputs = make_inputs(model, 2, inputs);
  /* The reference: one session, one thread. */
  kiln_session *first = new_session();
  CHECK(first && run_matches(first), "a first run");
  kiln_session_free(first);
  if (is_soak)
    soak(atol(argv[3]));
  else
    threads(atoi(argv[3]), atol(argv[4]));
  free(want);
  free_inputs(inputs, num_inputs);
  kiln_model_free(model);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
