/* String tensors through the C API: a model's string inputs are the
 * caller's `const char *`s, its string outputs the session's, valid until
 * the next run; the strings a run makes are freed when the next starts
 * (the pool's bytes in use do not grow over 2,000 runs); a bound output
 * receives the pointers; the descriptor says KILN_DTYPE_STRING.
 *
 * usage: strings_c_api_test ARTIFACT (compiled from Inputs/strings.mlir)
 * Ends with the line `N passed, N failed`. */
#include "kiln/kiln.h"

#include <stdio.h>
#include <string.h>

static int passed, failed;

static void check(int ok, const char *what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("FAIL %s (%s)\n", what, kiln_last_error());
  }
}

static const char *string_at(const kiln_tensor *t, int64_t i) {
  return ((const char *const *)t->data)[i];
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: strings_c_api_test ARTIFACT\n");
    return 2;
  }
  kiln_model *model;
  if (kiln_model_load(argv[1], &model) != KILN_OK) {
    printf("FAIL load (%s)\n0 passed, 1 failed\n", kiln_last_error());
    return 1;
  }
  check(kiln_model_input(model, 0)->dtype == KILN_DTYPE_STRING &&
            kiln_model_input(model, 1)->dtype == KILN_DTYPE_F32 &&
            kiln_model_output(model, 0)->dtype == KILN_DTYPE_STRING &&
            kiln_model_output(model, 1)->dtype == KILN_DTYPE_STRING,
        "descriptor dtypes");
  check(strcmp(kiln_dtype_name(KILN_DTYPE_STRING), "string") == 0 &&
            kiln_dtype_size(KILN_DTYPE_STRING) == sizeof(const char *),
        "dtype name and size");
  kiln_session *session;
  if (kiln_session_create(model, &session) != KILN_OK) {
    printf("FAIL session (%s)\n0 passed, 1 failed\n", kiln_last_error());
    return 1;
  }
  const char *words[3] = {"abc", "D\xc3\xa9j\xc3\xa0 vu", ""};
  float numbers[3] = {0.5f, -1e-5f, 123456789.0f};
  kiln_tensor inputs[2] = {{words, KILN_DTYPE_STRING, 1, {3}}, {numbers, KILN_DTYPE_F32, 1, {3}}};
  check(kiln_session_run(session, inputs, 2) == KILN_OK, "run");
  kiln_tensor upper, text;
  check(kiln_session_output(session, 0, &upper) == KILN_OK &&
            kiln_session_output(session, 1, &text) == KILN_OK,
        "outputs");
  check(upper.dtype == KILN_DTYPE_STRING && upper.rank == 1 && upper.dims[0] == 3 &&
            strcmp(string_at(&upper, 0), "ABC") == 0 &&
            strcmp(string_at(&upper, 1), "D\xc3\x89J\xc3\x80 VU") == 0 &&
            strcmp(string_at(&upper, 2), "") == 0,
        "upper-cased strings");
  check(strcmp(string_at(&text, 0), "0.5") == 0 && strcmp(string_at(&text, 1), "-1e-05") == 0 &&
            strcmp(string_at(&text, 2), "123456790.0") == 0,
        "floats as text");

  /* The strings of a run are freed when the next one starts: the bytes in
   * use stay level. */
  kiln_memory_stats first, now;
  kiln_session_memory_stats(session, &first);
  int level = 1, same = 1;
  for (int k = 0; k < 2000; ++k) {
    numbers[0] = (float)k;
    if (kiln_session_run(session, inputs, 2) != KILN_OK) {
      level = 0;
      break;
    }
    kiln_session_memory_stats(session, &now);
    level &= now.in_use_bytes == first.in_use_bytes;
    kiln_session_output(session, 1, &text);
    char want[32];
    snprintf(want, sizeof want, "%d.0", k);
    same &= strcmp(string_at(&text, 0), want) == 0;
  }
  check(level, "bytes in use level over 2,000 runs");
  check(same, "each run's text");
  check(now.reserved_bytes == first.reserved_bytes, "no new heap blocks after the first run");

  /* A bound output receives the session's pointers. */
  const char *bound[3] = {0, 0, 0};
  kiln_tensor target = {bound, KILN_DTYPE_STRING, 1, {3}};
  check(kiln_session_bind_output(session, 1, &target) == KILN_OK &&
            kiln_session_run(session, inputs, 2) == KILN_OK && bound[1] &&
            strcmp(bound[1], "-1e-05") == 0,
        "bound output");

  /* A number where a string is wanted is refused by its dtype. */
  kiln_tensor wrong[2] = {{numbers, KILN_DTYPE_F32, 1, {3}}, {numbers, KILN_DTYPE_F32, 1, {3}}};
  check(kiln_session_run(session, wrong, 2) == KILN_ERROR_DTYPE, "dtype checked");

  kiln_session_free(session);
  kiln_model_free(model);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
