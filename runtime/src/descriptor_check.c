/*===- descriptor_check.c - an artifact's descriptor, checked before use ---===*
 *
 * Every count, index, dim and pointer of a kiln_model_v1 the runtime reads
 * is checked here when a model is loaded (docs/Security.md); what passes
 * is safe to use as it is.
 *
 *===----------------------------------------------------------------------===*/
#include "descriptor_check.h"
#include "devices/device.h"

#include <stdint.h>

int kiln_fits_in_memory(int32_t rank, const int64_t *dims, size_t element_bytes) {
  uint64_t bytes = element_bytes ? element_bytes : 1;
  const uint64_t limit = (uint64_t)1 << KILN_MAX_BYTES_LOG2;
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] == 0)
      return 1;
    if (dims[d] < 0)
      continue; /* dynamic (a descriptor's -1): known at run time */
    if ((uint64_t)dims[d] > limit / bytes)
      return 0;
    bytes *= (uint64_t)dims[d];
  }
  return bytes <= limit;
}

/* The most inputs or outputs a model has. */
#define KILN_MAX_MODEL_TENSORS 4096u

kiln_status kiln_check_descriptor(const kiln_model_v1 *abi, const char *what) {
  if (abi->magic != KILN_MODEL_MAGIC)
    return kiln_fail(KILN_ERROR_FORMAT, "%s: not a Kiln model (bad magic 0x%08x)", what, abi->magic);
  if (abi->abi_version != KILN_MODEL_ABI_VERSION)
    return kiln_fail(KILN_ERROR_FORMAT,
                "%s: artifact format version %u, this runtime reads version %u; "
                "recompile the model with a matching kiln",
                what, abi->abi_version, KILN_MODEL_ABI_VERSION);
  if (!abi->run || (abi->num_inputs && !abi->inputs) || (abi->num_outputs && !abi->outputs) ||
      (abi->num_library_calls && !abi->library_calls))
    return kiln_fail(KILN_ERROR_FORMAT, "%s: incomplete model descriptor", what);
  if (abi->num_outputs == 0)
    return kiln_fail(KILN_ERROR_FORMAT, "%s: the model has no outputs", what);
  if (abi->num_inputs > KILN_MAX_MODEL_TENSORS || abi->num_outputs > KILN_MAX_MODEL_TENSORS)
    return kiln_fail(KILN_ERROR_FORMAT, "%s: %u inputs and %u outputs (at most %u each)", what,
                     abi->num_inputs, abi->num_outputs, (unsigned)KILN_MAX_MODEL_TENSORS);
  const kiln_model_tensor *lists[2] = {abi->inputs, abi->outputs};
  uint32_t counts[2] = {abi->num_inputs, abi->num_outputs};
  for (int l = 0; l < 2; ++l)
    for (uint32_t i = 0; i < counts[l]; ++i) {
      const kiln_model_tensor *t = &lists[l][i];
      if (t->rank < 0 || t->rank > KILN_MAX_RANK || kiln_dtype_size(t->dtype) == 0 ||
          !t->name || (t->rank > 0 && !t->dims))
        return kiln_fail(KILN_ERROR_FORMAT, "%s: %s %u has an invalid rank, dtype or name",
                         what, l ? "output" : "input", i);
      for (int32_t d = 0; d < t->rank; ++d)
        if (t->dims[d] < -1)
          return kiln_fail(KILN_ERROR_FORMAT, "%s: %s '%s' has dim %d = %lld", what,
                           l ? "output" : "input", t->name, d, (long long)t->dims[d]);
      if (!kiln_fits_in_memory(t->rank, t->dims, kiln_dtype_size(t->dtype)))
        return kiln_fail(KILN_ERROR_FORMAT, "%s: %s '%s' is larger than 2^%d bytes", what,
                         l ? "output" : "input", t->name, KILN_MAX_BYTES_LOG2);
    }
  if (abi->arena_bytes > ((uint64_t)1 << KILN_MAX_BYTES_LOG2) ||
      abi->max_batch > (uint64_t)INT32_MAX)
    return kiln_fail(KILN_ERROR_FORMAT, "%s: invalid arena (%llu bytes) or max batch (%llu)",
                     what, (unsigned long long)abi->arena_bytes,
                     (unsigned long long)abi->max_batch);
  if (abi->num_batch_buckets > KILN_MAX_BATCH_BUCKETS ||
      (abi->num_batch_buckets && !abi->batch_buckets))
    return kiln_fail(KILN_ERROR_FORMAT, "%s: invalid batch buckets (%u)", what,
                     abi->num_batch_buckets);
  for (uint32_t i = 0; i < abi->num_batch_buckets; ++i)
    if (abi->batch_buckets[i] == 0 || abi->batch_buckets[i] > (uint64_t)INT64_MAX ||
        (abi->max_batch && abi->batch_buckets[i] > abi->max_batch))
      return kiln_fail(KILN_ERROR_FORMAT, "%s: batch bucket %u (%llu) is invalid", what, i,
                       (unsigned long long)abi->batch_buckets[i]);
  /* Session-owned tensors: distinct inputs and outputs of the same static
   * dims and dtype, with their initial bytes. */
  if (abi->num_state > abi->num_inputs || (abi->num_state && !abi->state))
    return kiln_fail(KILN_ERROR_FORMAT, "%s: invalid session-owned tensors (%u)", what,
                     abi->num_state);
  for (uint32_t k = 0; k < abi->num_state; ++k) {
    const kiln_model_state *st = &abi->state[k];
    int read_only = st->output == KILN_STATE_READ_ONLY;
    if (st->input >= abi->num_inputs || (!read_only && st->output >= abi->num_outputs) ||
        !st->initial)
      return kiln_fail(KILN_ERROR_FORMAT, "%s: session-owned tensor %u is invalid", what, k);
    const kiln_model_tensor *in = &abi->inputs[st->input];
    const kiln_model_tensor *out = read_only ? in : &abi->outputs[st->output];
    int same = in->dtype == out->dtype && in->rank == out->rank;
    for (int32_t d = 0; same && d < in->rank; ++d)
      same = in->dims[d] >= 0 && in->dims[d] == out->dims[d];
    if (!same)
      return kiln_fail(KILN_ERROR_FORMAT,
                       "%s: session-owned input '%s' and its update '%s' differ or are not "
                       "static", what, in->name, out->name);
    for (uint32_t j = 0; j < k; ++j)
      if (abi->state[j].input == st->input ||
          (!read_only && abi->state[j].output == st->output))
        return kiln_fail(KILN_ERROR_FORMAT, "%s: input '%s' is session-owned twice", what,
                         in->name);
  }
  /* A training step's inference entry: a descriptor of its own, on the
   * same device, without an entry of its own. */
  if (abi->inference) {
    const kiln_model_v1 *entry = abi->inference;
    if (entry == abi || entry->inference || entry->device != abi->device)
      return kiln_fail(KILN_ERROR_FORMAT, "%s: invalid inference entry", what);
    kiln_status status = kiln_check_descriptor(entry, what);
    if (status != KILN_OK)
      return status;
  }
  return KILN_OK;
}

