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

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

/* Zeroed room past each copied array, for mutations that make a count or
 * a rank larger (a zero dim or a null pointer there is refused). */
enum {
  SLACK = KILN_LIBRARY_MAX_CONCAT_INPUTS + 2,
  PARAM_SLACK = 16,
  RANK_SLACK = KILN_MAX_RANK * sizeof(int64_t)
};

/* A byte range of the copy to mutate; `shrink_only` for counts. */
typedef struct field {
  unsigned char *at;
  size_t bytes;
  int shrink_only;
} field;

static field fields[1 << 16];
static size_t num_fields;

static void add(void *at, size_t bytes, int shrink_only) {
  if (num_fields < sizeof fields / sizeof fields[0])
    fields[num_fields++] = (field){at, bytes, shrink_only};
}

static void *copy_of(const void *from, size_t bytes, size_t slack_bytes) {
  unsigned char *to = calloc(1, bytes + slack_bytes + 1);
  if (to && from && bytes)
    memcpy(to, from, bytes);
  return to;
}

static kiln_model_tensor *copy_tensors(const kiln_model_tensor *from, uint32_t n) {
  kiln_model_tensor *to = copy_of(from, n * sizeof *to, 0);
  for (uint32_t i = 0; to && i < n; ++i) {
    to[i].dims = copy_of(from[i].dims, (size_t)from[i].rank * sizeof(int64_t), RANK_SLACK);
    add(&to[i].dtype, sizeof to[i].dtype, 0);
    add(&to[i].rank, sizeof to[i].rank, 1);
    add((void *)(uintptr_t)to[i].dims, (size_t)from[i].rank * sizeof(int64_t), 0);
  }
  return to;
}

static kiln_library_call *copy_calls(const kiln_library_call *from, uint32_t n, uint32_t mutate) {
  kiln_library_call *to = copy_of(from, n * sizeof *to, 0);
  for (uint32_t i = 0; to && i < n; ++i) {
    const kiln_library_call *c = &from[i];
    int32_t *ranks = copy_of(c->operand_ranks, (size_t)c->num_operands * sizeof(int32_t),
                             SLACK * sizeof(int32_t));
    const int64_t **dims = copy_of(c->operand_dims, (size_t)c->num_operands * sizeof(void *),
                                   SLACK * sizeof(void *));
    for (int32_t k = 0; dims && k < c->num_operands; ++k)
      dims[k] = copy_of(c->operand_dims[k], (size_t)c->operand_ranks[k] * sizeof(int64_t),
                        RANK_SLACK);
    int64_t *params = copy_of(c->params, (size_t)c->num_params * sizeof(int64_t),
                              PARAM_SLACK * sizeof(int64_t));
    to[i].operand_ranks = ranks;
    to[i].operand_dims = (const int64_t *const *)dims;
    to[i].params = params;
    if (i >= mutate)
      continue;
    add(&to[i].kind, sizeof to[i].kind, 0);
    add(&to[i].num_operands, sizeof to[i].num_operands, 0);
    add(ranks, (size_t)c->num_operands * sizeof(int32_t), 0);
    for (int32_t k = 0; dims && k < c->num_operands; ++k)
      add((void *)(uintptr_t)dims[k], (size_t)c->operand_ranks[k] * sizeof(int64_t), 0);
    add(&to[i].num_params, sizeof to[i].num_params, 0);
    add(params, (size_t)c->num_params * sizeof(int64_t), 0);
    add(&to[i].epilogue, sizeof to[i].epilogue, 0);
    add(&to[i].weights_layout_bytes, sizeof to[i].weights_layout_bytes, 0);
  }
  return to;
}

/* Little-endian value of a count field, for shrink-only fields. */
static uint64_t value_of(const unsigned char *at, size_t bytes) {
  uint64_t v = 0;
  memcpy(&v, at, bytes < 8 ? bytes : 8);
  return v;
}

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
  kiln_model_v1 *abi = copy_of(original, sizeof *original, 0);
  abi->inputs = copy_tensors(original->inputs, original->num_inputs);
  abi->outputs = copy_tensors(original->outputs, original->num_outputs);
  abi->library_calls = copy_calls(original->library_calls, original->num_library_calls,
                                  mutate_calls);
  abi->batch_buckets = copy_of(original->batch_buckets,
                               original->num_batch_buckets * sizeof(uint64_t), 0);
  add(&abi->magic, sizeof abi->magic, 0);
  add(&abi->abi_version, sizeof abi->abi_version, 0);
  add(&abi->num_inputs, sizeof abi->num_inputs, 1);
  add(&abi->num_outputs, sizeof abi->num_outputs, 1);
  add(&abi->num_library_calls, sizeof abi->num_library_calls, 1);
  add(&abi->arena_bytes, sizeof abi->arena_bytes, 0);
  add(&abi->max_batch, sizeof abi->max_batch, 0);
  add(&abi->device, sizeof abi->device, 0);
  add(&abi->num_batch_buckets, sizeof abi->num_batch_buckets, 1);
  add((void *)(uintptr_t)abi->batch_buckets, original->num_batch_buckets * sizeof(uint64_t), 0);

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
    for (size_t b = 0; b < fields[f].bytes; ++b) {
      unsigned char *at = fields[f].at + b;
      unsigned char saved = *at;
      seed = seed * 1103515245u + 12345u;
      unsigned char flip = (unsigned char)((seed >> 16) | 1);
      if (fields[f].shrink_only) {
        uint64_t before = value_of(fields[f].at, fields[f].bytes);
        *at ^= flip;
        uint64_t after = value_of(fields[f].at, fields[f].bytes);
        if (after >= before) {
          *at = saved;
          continue;
        }
      } else {
        *at ^= flip;
      }
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
