/* descriptor_copy.h - a loaded model's descriptor copied into memory that
 * can be changed, with the list of its value fields (counts, kinds,
 * ranks, dims, parameters, epilogues, layout sizes). Shared by
 * runtime-descriptor-mutations (every byte of every field in turn) and the
 * descriptor fuzz target (fuzz/descriptor.c). Counts may only shrink (a
 * count past its array is memory no check can see); ranks may grow, into
 * zeroed room kept past each dims array. Pointer fields and the prepacked
 * layout blob are not listed. */
#ifndef KILN_TEST_E2E_DESCRIPTOR_COPY_H
#define KILN_TEST_E2E_DESCRIPTOR_COPY_H

#include "kiln/kiln.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Zeroed room past each copied array, for mutations that make a count or
 * a rank larger (a zero dim or a null pointer there is refused). */
enum {
  DESCRIPTOR_SLACK = KILN_LIBRARY_MAX_CONCAT_INPUTS + 2,
  DESCRIPTOR_PARAM_SLACK = 16,
  DESCRIPTOR_RANK_SLACK = KILN_MAX_RANK * sizeof(int64_t)
};

/* A byte range of the copy to mutate; `shrink_only` for counts. */
typedef struct descriptor_field {
  unsigned char *at;
  size_t bytes;
  int shrink_only;
  char what[40]; /* "call 3 params", for reports */
} descriptor_field;

typedef struct descriptor_copy {
  kiln_model_v1 *abi;
  descriptor_field fields[1 << 16];
  size_t num_fields;
} descriptor_copy;

static void descriptor_field_add(descriptor_copy *c, void *at, size_t bytes, int shrink_only,
                                 const char *what, int index) {
  if (c->num_fields >= sizeof c->fields / sizeof c->fields[0] || !bytes)
    return;
  descriptor_field *f = &c->fields[c->num_fields++];
  f->at = (unsigned char *)at;
  f->bytes = bytes;
  f->shrink_only = shrink_only;
  if (index >= 0)
    snprintf(f->what, sizeof f->what, "%s %d", what, index);
  else
    snprintf(f->what, sizeof f->what, "%s", what);
}

static void *descriptor_copy_of(const void *from, size_t bytes, size_t slack_bytes) {
  unsigned char *to = (unsigned char *)calloc(1, bytes + slack_bytes + 1);
  if (to && from && bytes)
    memcpy(to, from, bytes);
  return to;
}

static kiln_model_tensor *descriptor_copy_tensors(descriptor_copy *c, const kiln_model_tensor *from,
                                                  uint32_t n) {
  kiln_model_tensor *to = (kiln_model_tensor *)descriptor_copy_of(from, n * sizeof *to, 0);
  for (uint32_t i = 0; to && i < n; ++i) {
    to[i].dims = (const int64_t *)descriptor_copy_of(
        from[i].dims, (size_t)from[i].rank * sizeof(int64_t), DESCRIPTOR_RANK_SLACK);
    descriptor_field_add(c, &to[i].dtype, sizeof to[i].dtype, 0, "tensor dtype", (int)i);
    descriptor_field_add(c, &to[i].rank, sizeof to[i].rank, 1, "tensor rank", (int)i);
    descriptor_field_add(c, (void *)(uintptr_t)to[i].dims, (size_t)from[i].rank * sizeof(int64_t),
                         0, "tensor dims", (int)i);
  }
  return to;
}

static kiln_library_call *descriptor_copy_calls(descriptor_copy *c, const kiln_library_call *from,
                                                uint32_t n, uint32_t mutate) {
  kiln_library_call *to = (kiln_library_call *)descriptor_copy_of(from, n * sizeof *to, 0);
  for (uint32_t i = 0; to && i < n; ++i) {
    const kiln_library_call *call = &from[i];
    int32_t *ranks = (int32_t *)descriptor_copy_of(
        call->operand_ranks, (size_t)call->num_operands * sizeof(int32_t),
        DESCRIPTOR_SLACK * sizeof(int32_t));
    const int64_t **dims = (const int64_t **)descriptor_copy_of(
        call->operand_dims, (size_t)call->num_operands * sizeof(void *),
        DESCRIPTOR_SLACK * sizeof(void *));
    for (int32_t k = 0; dims && k < call->num_operands; ++k)
      dims[k] = (const int64_t *)descriptor_copy_of(
          call->operand_dims[k], (size_t)call->operand_ranks[k] * sizeof(int64_t),
          DESCRIPTOR_RANK_SLACK);
    int64_t *params = (int64_t *)descriptor_copy_of(
        call->params, (size_t)call->num_params * sizeof(int64_t),
        DESCRIPTOR_PARAM_SLACK * sizeof(int64_t));
    to[i].operand_ranks = ranks;
    to[i].operand_dims = (const int64_t *const *)dims;
    to[i].params = params;
    if (i >= mutate)
      continue;
    int n = (int)i;
    descriptor_field_add(c, &to[i].kind, sizeof to[i].kind, 0, "call kind", n);
    descriptor_field_add(c, &to[i].num_operands, sizeof to[i].num_operands, 0, "call num_operands",
                         n);
    descriptor_field_add(c, ranks, (size_t)call->num_operands * sizeof(int32_t), 0,
                         "call operand ranks", n);
    for (int32_t k = 0; dims && k < call->num_operands; ++k)
      descriptor_field_add(c, (void *)(uintptr_t)dims[k],
                           (size_t)call->operand_ranks[k] * sizeof(int64_t), 0,
                           "call operand dims", n);
    descriptor_field_add(c, &to[i].num_params, sizeof to[i].num_params, 0, "call num_params", n);
    descriptor_field_add(c, params, (size_t)call->num_params * sizeof(int64_t), 0, "call params",
                         n);
    descriptor_field_add(c, &to[i].epilogue, sizeof to[i].epilogue, 0, "call epilogue", n);
    descriptor_field_add(c, &to[i].weights_layout_bytes, sizeof to[i].weights_layout_bytes, 0,
                         "call weights_layout_bytes", n);
  }
  return to;
}

/* Copies `original` into `c` (heap memory, never freed: one per process),
 * listing the fields of the top record, the tensors, the batch buckets
 * and the first `mutate_calls` library calls. */
static void descriptor_copy_make(descriptor_copy *c, const kiln_model_v1 *original,
                                 uint32_t mutate_calls) {
  c->num_fields = 0;
  kiln_model_v1 *abi = (kiln_model_v1 *)descriptor_copy_of(original, sizeof *original, 0);
  c->abi = abi;
  abi->inputs = descriptor_copy_tensors(c, original->inputs, original->num_inputs);
  abi->outputs = descriptor_copy_tensors(c, original->outputs, original->num_outputs);
  abi->library_calls = descriptor_copy_calls(c, original->library_calls,
                                             original->num_library_calls, mutate_calls);
  abi->batch_buckets = (const uint64_t *)descriptor_copy_of(
      original->batch_buckets, original->num_batch_buckets * sizeof(uint64_t), 0);
  descriptor_field_add(c, &abi->magic, sizeof abi->magic, 0, "magic", -1);
  descriptor_field_add(c, &abi->abi_version, sizeof abi->abi_version, 0, "abi_version", -1);
  descriptor_field_add(c, &abi->num_inputs, sizeof abi->num_inputs, 1, "num_inputs", -1);
  descriptor_field_add(c, &abi->num_outputs, sizeof abi->num_outputs, 1, "num_outputs", -1);
  descriptor_field_add(c, &abi->num_library_calls, sizeof abi->num_library_calls, 1, "num_library_calls", -1);
  descriptor_field_add(c, &abi->arena_bytes, sizeof abi->arena_bytes, 0, "arena_bytes", -1);
  descriptor_field_add(c, &abi->max_batch, sizeof abi->max_batch, 0, "max_batch", -1);
  descriptor_field_add(c, &abi->device, sizeof abi->device, 0, "device", -1);
  descriptor_field_add(c, &abi->num_batch_buckets, sizeof abi->num_batch_buckets, 1, "num_batch_buckets", -1);
  descriptor_field_add(c, &abi->stack_bytes, sizeof abi->stack_bytes, 0, "stack_bytes", -1);
  descriptor_field_add(c, (void *)(uintptr_t)abi->batch_buckets,
                       original->num_batch_buckets * sizeof(uint64_t), 0, "batch_buckets", -1);
  /* Session-owned tensors (training steps): their indices; the initial
   * bytes are the artifact's constants and not mutated. */
  kiln_model_state *state = (kiln_model_state *)descriptor_copy_of(
      original->state, original->num_state * sizeof(kiln_model_state), 0);
  abi->state = state;
  descriptor_field_add(c, &abi->num_state, sizeof abi->num_state, 1, "num_state", -1);
  for (uint32_t k = 0; state && k < original->num_state; ++k) {
    descriptor_field_add(c, &state[k].input, sizeof state[k].input, 0, "state input", (int)k);
    descriptor_field_add(c, &state[k].output, sizeof state[k].output, 0, "state output", (int)k);
  }
}

/* Little-endian value of a count field, for shrink-only fields. */
static uint64_t descriptor_field_value(const descriptor_field *f) {
  uint64_t v = 0;
  memcpy(&v, f->at, f->bytes < 8 ? f->bytes : 8);
  return v;
}

/* Sets byte `b` of field `f` to `value`; a count that would grow keeps its
 * value. Returns whether the byte changed. */
static int descriptor_field_set(const descriptor_field *f, size_t b, unsigned char value) {
  unsigned char saved = f->at[b];
  if (saved == value)
    return 0;
  uint64_t before = descriptor_field_value(f);
  f->at[b] = value;
  if (f->shrink_only && descriptor_field_value(f) >= before) {
    f->at[b] = saved;
    return 0;
  }
  return 1;
}

#endif /* KILN_TEST_E2E_DESCRIPTOR_COPY_H */
