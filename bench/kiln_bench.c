/*===- kiln_bench.c - Kiln's figures, measured as a C service sees them ----===*
 *
 * Links only the runtime (no MLIR, no LLVM), like a service that embeds a
 * model. Three measurements, each printed as one `key value` line per
 * figure for bench/run.py:
 *
 *   kiln_bench latency MODEL.so INPUT.npy THREADS RUNS REPEATS
 *     median latency of RUNS runs, REPEATS times (prints each median; the
 *     driver takes the minimum of medians), after warm-up runs.
 *   kiln_bench startup MODEL.so INPUT.npy THREADS
 *     time to first result: kiln_model_load + kiln_session_create + the
 *     first kiln_session_run, each timed; then the process's peak RSS
 *     (VmHWM) after a second run.
 *   kiln_bench overhead MODEL.so INPUT.npy RUNS
 *     per-run time of a tiny model (one element), one thread: what the
 *     runtime itself costs per kiln_session_run.
 *
 * INPUT.npy (float32 or int64, C order) is the model's single input; its
 * dim 0 is the batch.
 *
 *===----------------------------------------------------------------------===*/

#include "kiln/kiln.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The process's peak resident set (VmHWM, KiB). Not getrusage's
 * ru_maxrss: that keeps the high-water mark of the process before exec
 * (the benchmark's driver), not this program's. */
static long peak_rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
      break;
  if (f)
    fclose(f);
  return kib;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Reads a version-1/2 .npy of float32 or int64 into `t` (malloc'd data). */
static int read_npy(const char *path, kiln_tensor *t) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "kiln_bench: cannot open %s\n", path);
    return 1;
  }
  unsigned char magic[8];
  unsigned header_len = 0;
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0)
    goto bad;
  if (magic[6] == 1) {
    unsigned char n[2];
    if (fread(n, 1, 2, f) != 2)
      goto bad;
    header_len = n[0] | n[1] << 8;
  } else {
    unsigned char n[4];
    if (fread(n, 1, 4, f) != 4)
      goto bad;
    header_len = n[0] | n[1] << 8 | n[2] << 16 | (unsigned)n[3] << 24;
  }
  char header[4096];
  if (header_len >= sizeof header || fread(header, 1, header_len, f) != header_len)
    goto bad;
  header[header_len] = 0;
  if (strstr(header, "'fortran_order': True"))
    goto bad;
  size_t element;
  if (strstr(header, "'<f4'")) {
    t->dtype = KILN_DTYPE_F32;
    element = 4;
  } else if (strstr(header, "'<i8'")) {
    t->dtype = KILN_DTYPE_I64;
    element = 8;
  } else {
    goto bad;
  }
  const char *shape = strstr(header, "'shape': (");
  if (!shape)
    goto bad;
  shape += strlen("'shape': (");
  t->rank = 0;
  size_t count = 1;
  while (*shape && *shape != ')') {
    char *end;
    long long d = strtoll(shape, &end, 10);
    if (end == shape)
      break;
    if (t->rank == KILN_MAX_RANK)
      goto bad;
    t->dims[t->rank++] = d;
    count *= (size_t)d;
    shape = end;
    while (*shape == ',' || *shape == ' ')
      ++shape;
  }
  t->data = malloc(count * element + 1);
  if (!t->data || fread(t->data, element, count, f) != count)
    goto bad;
  fclose(f);
  return 0;
bad:
  fprintf(stderr, "kiln_bench: %s is not a C-order float32/int64 .npy\n", path);
  fclose(f);
  return 1;
}

static kiln_session *open_session(const char *path, int threads, kiln_model **model) {
  if (kiln_model_load(path, model) != KILN_OK) {
    fprintf(stderr, "kiln_bench: %s\n", kiln_last_error());
    return NULL;
  }
  kiln_session_options options = {threads, NULL};
  kiln_session *session = NULL;
  if (kiln_session_create_with_options(*model, &options, &session) != KILN_OK) {
    fprintf(stderr, "kiln_bench: %s\n", kiln_last_error());
    return NULL;
  }
  return session;
}

static int run(kiln_session *session, const kiln_tensor *input) {
  if (kiln_session_run(session, input, 1) != KILN_OK) {
    fprintf(stderr, "kiln_bench: %s\n", kiln_last_error());
    return 1;
  }
  return 0;
}

static int latency(const char *path, const kiln_tensor *input, int threads, int runs,
                   int repeats) {
  kiln_model *model = NULL;
  kiln_session *session = open_session(path, threads, &model);
  if (!session)
    return 1;
  for (int w = 0; w < 3; ++w)
    if (run(session, input))
      return 1;
  double *times = malloc(sizeof(double) * (size_t)runs);
  for (int r = 0; r < repeats; ++r) {
    for (int i = 0; i < runs; ++i) {
      double start = now_ms();
      if (run(session, input))
        return 1;
      times[i] = now_ms() - start;
    }
    qsort(times, (size_t)runs, sizeof(double), compare_double);
    printf("median_ms %.4f\n", times[runs / 2]);
  }
  free(times);
  kiln_session_free(session);
  kiln_model_free(model);
  return 0;
}

static int startup(const char *path, const kiln_tensor *input, int threads) {
  double t0 = now_ms();
  kiln_model *model = NULL;
  if (kiln_model_load(path, &model) != KILN_OK) {
    fprintf(stderr, "kiln_bench: %s\n", kiln_last_error());
    return 1;
  }
  double t1 = now_ms();
  kiln_session_options options = {threads, NULL};
  kiln_session *session = NULL;
  if (kiln_session_create_with_options(model, &options, &session) != KILN_OK) {
    fprintf(stderr, "kiln_bench: %s\n", kiln_last_error());
    return 1;
  }
  double t2 = now_ms();
  if (run(session, input))
    return 1;
  double t3 = now_ms();
  if (run(session, input))
    return 1;
  double t4 = now_ms();
  printf("load_ms %.3f\ncreate_ms %.3f\nfirst_run_ms %.3f\nsecond_run_ms %.3f\n", t1 - t0,
         t2 - t1, t3 - t2, t4 - t3);
  printf("first_result_ms %.3f\n", t3 - t0);
  printf("peak_rss_kib %ld\n", peak_rss_kib());
  printf("arena_bytes %llu\n", (unsigned long long)kiln_model_arena_bytes(model));
  kiln_memory_stats memory;
  if (kiln_session_memory_stats(session, &memory) == KILN_OK)
    printf("pool_reserved_bytes %llu\n", (unsigned long long)memory.reserved_bytes);
  kiln_session_free(session);
  kiln_model_free(model);
  return 0;
}

static int overhead(const char *path, const kiln_tensor *input, int runs) {
  kiln_model *model = NULL;
  kiln_session *session = open_session(path, 1, &model);
  if (!session)
    return 1;
  for (int w = 0; w < 100; ++w)
    if (run(session, input))
      return 1;
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    double start = now_ms();
    for (int i = 0; i < runs; ++i)
      if (run(session, input))
        return 1;
    double per_run = (now_ms() - start) / runs;
    if (per_run < best)
      best = per_run;
  }
  printf("per_run_us %.4f\n", best * 1e3);
  kiln_session_free(session);
  kiln_model_free(model);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: kiln_bench latency|startup|overhead MODEL.so INPUT.npy ...\n");
    return 2;
  }
  kiln_tensor input;
  memset(&input, 0, sizeof input);
  if (read_npy(argv[3], &input))
    return 1;
  int rc = 2;
  if (!strcmp(argv[1], "latency") && argc == 7)
    rc = latency(argv[2], &input, atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
  else if (!strcmp(argv[1], "startup") && argc == 5)
    rc = startup(argv[2], &input, atoi(argv[4]));
  else if (!strcmp(argv[1], "overhead") && argc == 5)
    rc = overhead(argv[2], &input, atoi(argv[4]));
  else
    fprintf(stderr, "kiln_bench: bad arguments\n");
  free(input.data);
  return rc;
}
