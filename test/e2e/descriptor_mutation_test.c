/* descriptor_mutation_test.c MODEL.so [CALLS]
 * The runtime validates an artifact's descriptor before anything uses it.
 * This loads MODEL.so, copies its descriptor into memory it can change,
 * and flips one byte at a time of every value field (counts only
 * downwards: a count past its array is memory the runtime cannot check;
 * ranks may grow, into zeroed room the copy keeps past each dims array)
 * of the top record, the input/output tensors, the batch buckets and the
 * first CALLS library calls (default all): kinds, ranks, dims,
 * parameters, epilogues, layout sizes. Each mutated descriptor must load
 * through kiln_model_from_abi and, when accepted, give a session (or a
 * clear error) without crashing or hanging; nothing is run (a descriptor
 * that disagrees with its code is out of reach of any check: an artifact
 * is code, docs/Security.md). Pointer fields and the prepacked layout
 * blob are not mutated. Prints the counts and "N passed, N failed". */
#include "kiln/kiln.h"
#include "check.h"
#include "descriptor_copy.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static descriptor_copy copy;

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.so [CALLS]\n", argv[0]);
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  const kiln_model_v1 *original = library ? dlsym(library, "kiln_model_descriptor") : NULL;
  if (!original) {
    printf("cannot load %s\n0 passed, 1 failed\n", argv[1]);
    return 1;
  }
  uint32_t mutate_calls = argc > 2 ? (uint32_t)atoi(argv[2]) : original->num_library_calls;
  descriptor_copy_make(&copy, original, mutate_calls);
  kiln_model_v1 *abi = copy.abi;
  size_t num_fields = copy.num_fields;

  /* The copy itself must load and give a session. */
  kiln_model *model = NULL;
  kiln_session *session = NULL;
  CHECK(kiln_model_from_abi(abi, &model) == KILN_OK &&
            kiln_session_create(model, &session) == KILN_OK,
        "the unmutated copy loads");
  kiln_session_free(session);
  kiln_model_free(model);

  long tries = 0, refused_at_load = 0, refused_at_session = 0, accepted = 0;
  uint32_t seed = 12345;
  for (size_t f = 0; f < num_fields; ++f)
    for (size_t b = 0; b < copy.fields[f].bytes; ++b) {
      unsigned char *at = copy.fields[f].at + b;
      unsigned char saved = *at;
      seed = seed * 1103515245u + 12345u;
      unsigned char flip = (unsigned char)((seed >> 16) | 1);
      if (!descriptor_field_set(&copy.fields[f], b, saved ^ flip))
        continue;
      ++tries;
      model = NULL;
      session = NULL;
      if (kiln_model_from_abi(abi, &model) != KILN_OK) {
        ++refused_at_load;
      } else {
        kiln_session_options options = {1, NULL};
        if (kiln_session_create_with_options(model, &options, &session) != KILN_OK)
          ++refused_at_session;
        else
          ++accepted;
        kiln_session_free(session);
        kiln_model_free(model);
      }
      *at = saved;
    }
  printf("%s: %zu fields, %ld single-byte mutations: %ld refused at load, %ld refused at "
         "session creation, %ld accepted (a consistent descriptor); no crash, no hang\n",
         argv[1], num_fields, tries, refused_at_load, refused_at_session, accepted);
  CHECK(tries > 0, "mutations were tried");
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
