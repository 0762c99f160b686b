/*===- onednn.h - the CPU device's library calls through oneDNN ------------===*/
#ifndef KILN_RUNTIME_DEVICES_ONEDNN_H
#define KILN_RUNTIME_DEVICES_ONEDNN_H

#include "kiln/kiln.h"

/* Loads oneDNN (libdnnl.so.2, or the file KILN_ONEDNN_LIBRARY names) the
 * first time it is needed; KILN_OK, or KILN_ERROR_LOAD with a message
 * naming the library (for `what`, the model). Thread-safe. */
kiln_status kiln_onednn_load(const char *what);

/* The prepared library calls of one session. */
typedef struct kiln_library_state kiln_library_state;

/* The most library calls an artifact has. */
#define KILN_MAX_LIBRARY_CALLS (1u << 20)

/* Checks every library call's description (kinds, operand ranks and
 * dims, parameters, and their consistency) without loading oneDNN;
 * KILN_ERROR_FORMAT naming the first invalid call. */
kiln_status kiln_onednn_check_calls(const kiln_model_v1 *abi, const char *what);

/* Prepares every call (oneDNN primitives; dynamic dims taken as 1) and
 * packs constant weights the compiler did not prepack. */
kiln_status kiln_onednn_create(const kiln_model_v1 *abi, void **state);
void kiln_onednn_free(void *state);
/* Executes call `id` on `operands`; 0 on success. */
int kiln_onednn_execute(void *state, uint32_t id, void *const *operands,
                        const int64_t *const *dims);
/* oneDNN's name of the kernel that ran call `id` last, or NULL. */
const char *kiln_onednn_implementation(void *state, uint32_t id);

#endif
