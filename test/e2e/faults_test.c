/* faults_test.c MODEL.so...
 * Faults and API misuse, for each model at batch 2 (uses only kiln.h):
 * - a session whose allocator fails at its k-th allocation, for every k
 *   until a run needs fewer: session creation or the run fails with
 *   KILN_ERROR_OUT_OF_MEMORY or succeeds, never crashes; after a failed
 *   run the same session runs again (allocator healthy) and matches a
 *   normal session bit for bit;
 * - input dims whose byte count overflows are refused with
 *   KILN_ERROR_SHAPE;
 * - kiln_model_free while a session lives: the session keeps running;
 * - a successful call clears kiln_last_error.
 * Prints "N passed, N failed". */
#include "kiln/kiln.h"
#include "check.h"
#include "inputs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

/* Fails the allocation numbered `fail_at` (1-based); 0: never. */
typedef struct failing {
  long calls, fail_at, failures;
} failing;

static void *failing_allocate(void *context, size_t bytes, size_t alignment) {
  failing *f = context;
  if (++f->calls == f->fail_at) {
    ++f->failures;
    return NULL;
  }
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  return aligned_alloc(alignment, rounded ? rounded : alignment);
}

static void failing_release(void *context, void *ptr) {
  (void)context;
  free(ptr);
}

/* Output 0 of one run, copied; NULL on failure (`status` says why). */
static void *run_once(kiln_session *session, kiln_tensor *inputs, uint32_t n, size_t *bytes,
                      kiln_status *status) {
  kiln_tensor out;
  *status = kiln_session_run(session, inputs, n);
  if (*status != KILN_OK || kiln_session_output(session, 0, &out) != KILN_OK)
    return NULL;
  *bytes = test_count_of(out.dims, out.rank) * kiln_dtype_size(out.dtype);
  void *copy = malloc(*bytes ? *bytes : 1);
  if (copy)
    memcpy(copy, out.data, *bytes);
  return copy;
}

static void check_model(const char *path) {
  kiln_model *model = NULL;
  if (kiln_model_load(path, &model) != KILN_OK) {
    CHECK(0, "load %s", path);
    return;
  }
  CHECK(kiln_last_error()[0] == '\0', "a successful load leaves no error");
  kiln_tensor inputs[MAX_TEST_INPUTS];
  uint32_t n = make_inputs(model, 2, inputs);
  kiln_session_options plain = {1, NULL};
  kiln_session *session = NULL;
  size_t want_bytes = 0;
  kiln_status status = kiln_session_create_with_options(model, &plain, &session);
  void *want = status == KILN_OK ? run_once(session, inputs, n, &want_bytes, &status) : NULL;
  CHECK(want != NULL, "%s: a normal run", path);
  kiln_session_free(session);

  /* The k-th allocation fails, for every k a run reaches. */
  long points = 0, out_of_memory = 0, recovered = 0;
  for (long k = 1; k < 10000 && want; ++k) {
    failing f = {0, k, 0};
    kiln_allocator allocator = {failing_allocate, failing_release, &f};
    kiln_session_options options = {1, &allocator};
    session = NULL;
    status = kiln_session_create_with_options(model, &options, &session);
    size_t bytes = 0;
    void *got = NULL;
    if (status == KILN_OK)
      got = run_once(session, inputs, n, &bytes, &status);
    if (!f.failures) { /* the whole run needs fewer than k allocations */
      CHECK(got && bytes == want_bytes && memcmp(got, want, bytes) == 0,
            "%s: a run with a healthy allocator", path);
      free(got);
      kiln_session_free(session);
      break;
    }
    ++points;
    CHECK(status == KILN_ERROR_OUT_OF_MEMORY || status == KILN_OK,
          "%s: allocation %ld fails: %s", path, k, kiln_status_name(status));
    if (status == KILN_ERROR_OUT_OF_MEMORY)
      ++out_of_memory;
    if (session) {
      /* Healthy again: the same session must run and agree. */
      free(got);
      got = run_once(session, inputs, n, &bytes, &status);
      if (got && bytes == want_bytes && memcmp(got, want, bytes) == 0)
        ++recovered;
      else
        CHECK(0, "%s: after allocation %ld failed, the session runs again (%s)", path, k,
              kiln_status_name(status));
    }
    free(got);
    kiln_session_free(session);
  }
  printf("%s: %ld failure points, %ld refused with KILN_ERROR_OUT_OF_MEMORY, %ld sessions "
         "recovered\n",
         path, points, out_of_memory, recovered);
  CHECK(points > 0, "%s: the allocator was called", path);

  /* Dims whose bytes overflow. */
  session = NULL;
  if (n > 0 && kiln_session_create_with_options(model, &plain, &session) == KILN_OK) {
    const kiln_model_tensor *t = kiln_model_input(model, 0);
    if (t->rank > 0 && t->dims[0] < 0) {
      kiln_tensor huge = inputs[0];
      huge.dims[0] = (int64_t)1 << 62;
      kiln_tensor list[MAX_TEST_INPUTS];
      memcpy(list, inputs, sizeof(kiln_tensor) * n);
      list[0] = huge;
      CHECK(kiln_session_run(session, list, n) == KILN_ERROR_SHAPE &&
                strstr(kiln_last_error(), "too large"),
            "%s: a batch of 2^62 is refused (%s)", path, kiln_last_error());
    }
    /* The caller lets go of the model; its session keeps it. */
    kiln_model_free(model);
    model = NULL;
    size_t bytes = 0;
    void *got = run_once(session, inputs, n, &bytes, &status);
    CHECK(got && bytes == want_bytes && memcmp(got, want, bytes) == 0,
          "%s: a session runs after kiln_model_free", path);
    CHECK(kiln_last_error()[0] == '\0', "a successful run clears the last error");
    free(got);
    kiln_session_free(session);
  }
  free(want);
  free_inputs(inputs, n);
  kiln_model_free(model);
}

int main(int argc, char **argv) {
  for (int m = 1; m < argc; ++m)
    check_model(argv[m]);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0 || argc < 2;
}
