/*===- inputs.h - synthetic inputs for the C API tests ---------------------===*
 *
 * make_inputs fills a model's inputs for a batch (dynamic dims take it):
 * float inputs a sine, integer inputs small values (valid token ids);
 * free_inputs releases them.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_TEST_E2E_INPUTS_H
#define KILN_TEST_E2E_INPUTS_H

#include "kiln/kiln.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

enum { MAX_TEST_INPUTS = 8 };

static size_t test_count_of(const int64_t *dims, int rank) {
  size_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= (size_t)dims[d];
  return n;
}

/* The number of inputs filled (0 when the model has more than
 * MAX_TEST_INPUTS or memory runs out). */
static uint32_t make_inputs(const kiln_model *model, int64_t batch,
                            kiln_tensor inputs[MAX_TEST_INPUTS]) {
  uint32_t n = kiln_model_num_inputs(model);
  if (n > MAX_TEST_INPUTS)
    return 0;
  for (uint32_t i = 0; i < n; ++i) {
    const kiln_model_tensor *t = kiln_model_input(model, i);
    inputs[i].dtype = t->dtype;
    inputs[i].rank = t->rank;
    for (int d = 0; d < t->rank; ++d)
      inputs[i].dims[d] = t->dims[d] < 0 ? batch : t->dims[d];
    size_t count = test_count_of(inputs[i].dims, t->rank);
    inputs[i].data = calloc(count ? count : 1, 8);
    if (!inputs[i].data)
      return 0;
    for (size_t e = 0; e < count; ++e) {
      if (t->dtype == KILN_DTYPE_F32)
        ((float *)inputs[i].data)[e] = (float)sin(0.001 * (double)e);
      else if (t->dtype == KILN_DTYPE_I64)
        ((int64_t *)inputs[i].data)[e] = (int64_t)(e % 97);
    }
  }
  return n;
}

static void free_inputs(kiln_tensor *inputs, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    free(inputs[i].data);
}

#endif
