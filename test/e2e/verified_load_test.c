/* verified_load_test.c MODEL.so OTHER.so
 * kiln_model_load_verified: the model loads and runs with its file's
 * SHA-256 (from sha256sum), in either case; a wrong hash gives
 * KILN_ERROR_VERIFY and nothing loads; a malformed hash or a missing file
 * is refused. The runtime's SHA-256 is checked against sha256sum on files
 * of every padding case (0..130 bytes, and the model itself) through the
 * message of a refused load, which names the file's actual hash. Two
 * different models loaded verified side by side are each themselves (the
 * loader must not take the second for the first: both come from a
 * /proc/self/fd path). */
#include "kiln/kiln.h"
#include "check.h"
#include "inputs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

/* sha256sum's digest of `path`, or "" when it cannot run. */
static void sha256sum(const char *path, char out[65]) {
  char command[4200];
  snprintf(command, sizeof command, "sha256sum '%s'", path);
  out[0] = '\0';
  FILE *p = popen(command, "r");
  if (p) {
    if (fscanf(p, "%64s", out) != 1)
      out[0] = '\0';
    pclose(p);
  }
}

/* The actual hash the runtime names when it refuses `path`. */
static int runtime_hash(const char *path, char out[65]) {
  kiln_model *model = NULL;
  const char *zeros = "0000000000000000000000000000000000000000000000000000000000000000";
  if (kiln_model_load_verified(path, zeros, &model) != KILN_ERROR_VERIFY || model)
    return 0;
  const char *at = strstr(kiln_last_error(), "has SHA-256 ");
  return at && sscanf(at + 12, "%64[0-9a-f]", out) == 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODEL.so OTHER.so\n", argv[0]);
    return 2;
  }
  const char *path = argv[1];
  char expected[65];
  sha256sum(path, expected);
  CHECK(strlen(expected) == 64, "sha256sum gives the model's hash");

  kiln_model *model = NULL;
  CHECK(kiln_model_load_verified(path, expected, &model) == KILN_OK && model,
        "the model loads with its own hash");
  kiln_session *session = NULL;
  if (model) {
    kiln_tensor inputs[MAX_TEST_INPUTS];
    uint32_t n = make_inputs(model, 1, inputs);
    CHECK(n > 0 && kiln_session_create(model, &session) == KILN_OK &&
              kiln_session_run(session, inputs, n) == KILN_OK,
          "the verified model runs");
    free_inputs(inputs, n);
    kiln_session_free(session);
    kiln_model_free(model);
  }
  char upper[65];
  for (int i = 0; i < 65; ++i)
    upper[i] = (char)toupper((unsigned char)expected[i]);
  model = NULL;
  CHECK(kiln_model_load_verified(path, upper, &model) == KILN_OK, "upper-case hex is accepted");
  kiln_model_free(model);

  char wrong[65];
  memcpy(wrong, expected, 65);
  wrong[10] = wrong[10] == 'a' ? 'b' : 'a';
  model = NULL;
  CHECK(kiln_model_load_verified(path, wrong, &model) == KILN_ERROR_VERIFY && !model,
        "a wrong hash is refused with KILN_ERROR_VERIFY");
  CHECK(strstr(kiln_last_error(), expected) && strstr(kiln_last_error(), wrong),
        "the message names the actual and the expected hash");
  CHECK(kiln_model_load_verified(path, "abc", &model) == KILN_ERROR_INVALID_ARGUMENT,
        "a malformed hash is refused");
  CHECK(kiln_model_load_verified("/nonexistent/model.so", expected, &model) == KILN_ERROR_LOAD,
        "a missing file is refused");
  CHECK(kiln_model_load_verified(NULL, expected, &model) == KILN_ERROR_INVALID_ARGUMENT,
        "a null path is refused");

  /* Two models verified at once, and one after the other. */
  char other_hash[65];
  sha256sum(argv[2], other_hash);
  kiln_model *first = NULL, *second = NULL, *plain = NULL;
  int both = kiln_model_load_verified(path, expected, &first) == KILN_OK &&
             kiln_model_load_verified(argv[2], other_hash, &second) == KILN_OK &&
             kiln_model_load(argv[2], &plain) == KILN_OK;
  CHECK(both && kiln_model_input(second, 0)->rank == kiln_model_input(plain, 0)->rank &&
            kiln_model_input(second, 0)->dims[kiln_model_input(plain, 0)->rank - 1] ==
                kiln_model_input(plain, 0)->dims[kiln_model_input(plain, 0)->rank - 1] &&
            kiln_model_input(first, 0)->rank != kiln_model_input(second, 0)->rank,
        "two models loaded verified side by side are each themselves");
  kiln_model_free(first);
  kiln_model_free(second);
  second = NULL;
  CHECK(kiln_model_load_verified(argv[2], other_hash, &second) == KILN_OK &&
            kiln_model_input(second, 0)->rank == kiln_model_input(plain, 0)->rank,
        "a model loaded verified after another was freed is itself");
  kiln_model_free(second);
  kiln_model_free(plain);

  /* SHA-256 against sha256sum on every padding case. */
  char file[] = "/tmp/kiln-sha256-XXXXXX";
  int mismatches = 0, compared = 0;
  if (mkstemp(file) >= 0) {
    for (int size = 0; size <= 130; ++size) {
      FILE *f = fopen(file, "wb");
      for (int i = 0; f && i < size; ++i)
        fputc((i * 31 + size) & 0xff, f);
      if (f)
        fclose(f);
      char want[65], got[65];
      sha256sum(file, want);
      if (!runtime_hash(file, got) || strcmp(want, got) != 0)
        ++mismatches;
      ++compared;
    }
    remove(file);
  }
  char got[65];
  CHECK(runtime_hash(path, got) && strcmp(got, expected) == 0,
        "the runtime's SHA-256 of the model is sha256sum's");
  CHECK(compared == 131 && mismatches == 0,
        "the runtime's SHA-256 is sha256sum's for sizes 0..130");
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
