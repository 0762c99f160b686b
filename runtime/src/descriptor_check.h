/*===- descriptor_check.h - an artifact's descriptor, checked before use ---===*/
#ifndef KILN_RUNTIME_DESCRIPTOR_CHECK_H
#define KILN_RUNTIME_DESCRIPTOR_CHECK_H

#include "kiln/kiln.h"

#include <stddef.h>

/* The largest tensor, in bytes, the runtime accepts: far above any memory,
 * far below where the compiled code's int64 index arithmetic wraps. */
#define KILN_MAX_BYTES_LOG2 48

/* Whether a tensor of these dims and element size has at most
 * 2^KILN_MAX_BYTES_LOG2 bytes (no product of the dims wraps); a negative
 * (dynamic) dim counts as 1. */
int kiln_fits_in_memory(int32_t rank, const int64_t *dims, size_t element_bytes);

/* KILN_OK, or KILN_ERROR_FORMAT naming `what` and the first problem: bad
 * magic or version, missing tables, counts past the limits, invalid
 * tensors, arena, batch buckets or session-owned tensors. */
kiln_status kiln_check_descriptor(const kiln_model_v1 *abi, const char *what);

#endif /* KILN_RUNTIME_DESCRIPTOR_CHECK_H */
