/* session_batches_test.c MODEL.so [BUCKETS]
 * One session of a dynamic-batch model run with batch sizes in turn (more
 * distinct ones than the device keeps primitives for, so some are made
 * again): each run's outputs must be bit-identical to a fresh session's
 * for that batch. A model whose input 0 is an image with spatial dims
 * known only at run time ([N,C,H,W], H and W dynamic) is run with nine
 * input shapes instead, several of one batch (a primitive made for one
 * image size must not run another). With BUCKETS ("1,8"), the model must
 * declare those batch buckets. Uses only kiln.h. Prints "N passed, N
 * failed". */
#include "kiln/kiln.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int passed, failed;


enum { MAX_BATCH = 9 };

/* The input shapes of runs 1..MAX_BATCH: batch, height, width (the
 * model's own where static). */
typedef struct shape {
  int64_t batch, height, width;
} shape;
static shape shapes[MAX_BATCH + 1];
static const shape images[MAX_BATCH + 1] = {{0, 0, 0},    {1, 32, 32}, {2, 32, 32}, {1, 40, 24},
                                             {1, 24, 40},  {3, 48, 36}, {1, 64, 64}, {2, 20, 28},
                                             {1, 32, 40},  {1, 40, 32}};

static kiln_model *model;
static kiln_tensor input;
static size_t sample_floats; /* the largest sample of input 0 */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static size_t count_of(const kiln_tensor *t) {
  size_t n = 1;
  for (int d = 0; d < t->rank; ++d)
    n *= (size_t)t->dims[d];
  return n;
}

/* Runs `session` on shape `k`'s first samples; a copy of output 0. */
static float *run(kiln_session *session, int64_t k, size_t *count) {
  input.dims[0] = shapes[k].batch;
  if (input.rank == 4) {
    input.dims[2] = shapes[k].height;
    input.dims[3] = shapes[k].width;
  }
  kiln_tensor out;
  if (kiln_session_run(session, &input, 1) != KILN_OK ||
      kiln_session_output(session, 0, &out) != KILN_OK)
    return NULL;
  *count = count_of(&out);
  float *copy = malloc(*count * sizeof(float));
  if (copy)
    memcpy(copy, out.data, *count * sizeof(float));
  return copy;
}

static kiln_session *new_session(void) {
  kiln_session_options options = {2, NULL};
  kiln_session *session = NULL;
  if (kiln_session_create_with_options(model, &options, &session) != KILN_OK)
    return NULL;
  return session;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.so [BUCKETS]\n", argv[0]);
    return 2;
  }
  if (kiln_model_load(argv[1], &model) != KILN_OK) {
    printf("cannot load %s: %s\n0 passed, 1 failed\n", argv[1], kiln_last_error());
    return 1;
  }
  const kiln_model_tensor *in = kiln_model_input(model, 0);
  CHECK(in && in->dtype == KILN_DTYPE_F32 && in->rank >= 1 && in->dims[0] < 0,
        "input 0 is float32 with a dynamic batch");
  if (failed) {
    printf("%d passed, %d failed\n", passed, failed);
    return 1;
  }
  uint32_t num_buckets = 0;
  const uint64_t *buckets = kiln_model_batch_buckets(model, &num_buckets);
  char declared[128] = "";
  for (uint32_t i = 0; i < num_buckets; ++i)
    snprintf(declared + strlen(declared), sizeof declared - strlen(declared), "%s%llu",
             i ? "," : "", (unsigned long long)buckets[i]);
  printf("batch buckets: %s\n", num_buckets ? declared : "(none: batch 1)");
  if (argc > 2)
    CHECK(strcmp(declared, argv[2]) == 0, "declared buckets %s, want %s", declared, argv[2]);

  input.dtype = KILN_DTYPE_F32;
  input.rank = in->rank;
  int spatial = in->rank == 4 && in->dims[2] < 0 && in->dims[3] < 0;
  CHECK(in->rank < 2 || in->dims[1] > 0, "input 0's dim 1 is static");
  for (int d = 1; d < in->rank; ++d)
    CHECK(in->dims[d] > 0 || (spatial && d >= 2), "input 0's dim %d is static (or H and W "
          "both dynamic)", d);
  if (failed) {
    printf("%d passed, %d failed\n", passed, failed);
    return 1;
  }
  sample_floats = 1;
  for (int d = 1; d < in->rank; ++d) {
    input.dims[d] = in->dims[d];
    sample_floats *= (size_t)(spatial && d >= 2 ? 64 : in->dims[d]);
  }
  for (int k = 1; k <= MAX_BATCH; ++k) {
    int image = in->rank == 4;
    shapes[k] = spatial ? images[k] : (shape){k, image ? in->dims[2] : 0, image ? in->dims[3] : 0};
  }
  if (spatial)
    printf("spatial dims known only at run time: %d input shapes\n", MAX_BATCH);
  float *data = malloc(MAX_BATCH * sample_floats * sizeof(float));
  for (size_t i = 0; data && i < MAX_BATCH * sample_floats; ++i)
    data[i] = (float)sin(0.001 * (double)i);
  input.data = data;

  /* The first run of a session at batch 8: its time says whether the
   * session prepared that batch when it was created (printed, not
   * checked: a timing). */
  double start = now_ms();
  kiln_session *timed = new_session();
  double created = now_ms();
  size_t n = 0;
  float *first = timed ? run(timed, 8, &n) : NULL;
  printf("batch %lld (%lldx%lld): session created in %.1f ms, first run %.1f ms\n",
         (long long)shapes[8].batch, (long long)shapes[8].height, (long long)shapes[8].width,
         created - start, now_ms() - created);
  CHECK(first != NULL, "first run at shape 8");
  free(first);
  kiln_session_free(timed);

  /* References: a fresh session per batch. */
  float *reference[MAX_BATCH + 1] = {0};
  size_t counts[MAX_BATCH + 1] = {0};
  for (int64_t b = 1; b <= MAX_BATCH; ++b) {
    kiln_session *fresh = new_session();
    reference[b] = fresh ? run(fresh, b, &counts[b]) : NULL;
    CHECK(reference[b] != NULL, "shape %lld in a fresh session", (long long)b);
    kiln_session_free(fresh);
  }
  /* One session, shapes in turn: 9 distinct ones, some again after
   * others replaced their primitives. */
  static const int64_t order[] = {1, 8, 3, 8, 1, 5, 6, 7, 2, 4, 9, 1, 3, 9, 8, 1};
  kiln_session *session = new_session();
  CHECK(session != NULL, "session");
  for (size_t i = 0; session && i < sizeof order / sizeof order[0]; ++i) {
    int64_t b = order[i];
    size_t count = 0;
    float *out = run(session, b, &count);
    CHECK(out && reference[b] && count == counts[b] &&
              memcmp(out, reference[b], count * sizeof(float)) == 0,
          "run %zu (shape %lld: batch %lld, %lldx%lld) matches a fresh session's bit for bit",
          i, (long long)b, (long long)shapes[b].batch, (long long)shapes[b].height,
          (long long)shapes[b].width);
    free(out);
  }
  kiln_session_free(session);
  for (int b = 0; b <= MAX_BATCH; ++b)
    free(reference[b]);
  free(data);
  kiln_model_free(model);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
