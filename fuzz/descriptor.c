/* descriptor.c - fuzz the runtime's validation of an artifact's descriptor.
 *
 * An artifact is code (docs/Security.md): this never loads a fuzzed file.
 * It loads trusted artifacts compiled by Kiln (KILN_FUZZ_MODELS, a
 * colon-separated list of .so paths), copies each descriptor into memory
 * it can change (test/e2e/descriptor_copy.h lists its value fields) and
 * reads the input as edits of that copy:
 *   byte 0: which model;
 *   then 4 bytes per edit: field index (2 bytes, little-endian, modulo the
 *   field count), byte within the field, the new value.
 * The edited descriptor goes through kiln_model_from_abi and, when
 * accepted, kiln_session_create (one thread, memory from an allocator that
 * refuses more than 256 MiB at once), as a loaded artifact's would; then
 * every edit is undone. Refusals are fine; a crash, a hang or
 * a sanitizer report is a finding. KILN_FUZZ_VERBOSE=1 prints each edit
 * (to read a finding). */
#include "kiln/kiln.h"
#include "test/e2e/descriptor_copy.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_MODELS = 8, MAX_EDITS = 64 };

/* Sessions take their memory from an allocator that refuses more than
 * 256 MiB at once: a mutated arena size (valid up to 2^48 bytes) then
 * exercises the out-of-memory path instead of reserving gigabytes. */
#define MAX_ALLOCATION ((size_t)256 << 20)

static void *bounded_allocate(void *context, size_t bytes, size_t alignment) {
  (void)context;
  if (bytes > MAX_ALLOCATION)
    return NULL;
  void *p = NULL;
  return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment,
                        bytes ? bytes : 1) == 0 ? p : NULL;
}

static void bounded_release(void *context, void *p) {
  (void)context;
  free(p);
}

static const kiln_allocator bounded = {bounded_allocate, bounded_release, NULL};

static descriptor_copy copies[MAX_MODELS];
static int num_models;
static int verbose; /* KILN_FUZZ_VERBOSE=1: print each edit */

static void load_models(void) {
  const char *list = getenv("KILN_FUZZ_MODELS");
  if (!list || !*list) {
    fprintf(stderr, "descriptor fuzz target: set KILN_FUZZ_MODELS to compiled artifacts "
                    "(path.so[:path.so...])\n");
    exit(2);
  }
  char *paths = strdup(list);
  for (char *path = strtok(paths, ":"); path && num_models < MAX_MODELS;
       path = strtok(NULL, ":")) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const kiln_model_v1 *original =
        library ? (const kiln_model_v1 *)dlsym(library, "kiln_model_descriptor") : NULL;
    if (!original) {
      fprintf(stderr, "descriptor fuzz target: cannot load %s: %s\n", path, dlerror());
      exit(2);
    }
    descriptor_copy_make(&copies[num_models++], original, original->num_library_calls);
  }
  free(paths);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  load_models();
  verbose = getenv("KILN_FUZZ_VERBOSE") && *getenv("KILN_FUZZ_VERBOSE") == '1';
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  descriptor_copy *copy = &copies[data[0] % num_models];
  struct {
    unsigned char *at;
    unsigned char saved;
  } undo[MAX_EDITS];
  int edits = 0;
  for (size_t i = 1; i + 4 <= size && edits < MAX_EDITS; i += 4) {
    const descriptor_field *f = &copy->fields[(data[i] | (data[i + 1] << 8)) % copy->num_fields];
    size_t b = data[i + 2] % f->bytes;
    unsigned char saved = f->at[b];
    if (verbose)
      fprintf(stderr, "edit: %s, byte %zu of %zu: %u -> %u\n", f->what, b, f->bytes, f->at[b],
              data[i + 3]);
    if (descriptor_field_set(f, b, data[i + 3])) {
      undo[edits].at = f->at + b;
      undo[edits].saved = saved;
      ++edits;
    }
  }
  kiln_model *model = NULL;
  if (kiln_model_from_abi(copy->abi, &model) == KILN_OK) {
    kiln_session *session = NULL;
    kiln_session_options options = {1, &bounded};
    if (kiln_session_create_with_options(model, &options, &session) == KILN_OK)
      kiln_session_free(session);
    kiln_model_free(model);
  }
  while (edits > 0) {
    --edits;
    *undo[edits].at = undo[edits].saved;
  }
  return 0;
}
