/*===- library_calls.h - the runtime's oneDNN library calls ----------------===*/
#ifndef KILN_RUNTIME_LIBRARY_CALLS_H
#define KILN_RUNTIME_LIBRARY_CALLS_H

#include "kiln/kiln.h"

/* The prepared library calls of one session. */
typedef struct kiln_library_state kiln_library_state;

/* Prepares every call whose shapes are static (oneDNN primitives). */
kiln_status kiln_library_state_create(const kiln_model_v1 *abi, kiln_library_state **state);
void kiln_library_state_free(kiln_library_state *state);
/* Executes call `id` on `operands`; 0 on success. */
int kiln_library_execute(kiln_library_state *state, uint32_t id, void *const *operands,
                         const int64_t *const *dims);

#endif
