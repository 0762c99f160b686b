/*===- kiln_toolchain.h - runtime functions for Kiln's compiler ------------===*
 *
 * Not for services: what the compiler asks of the runtime's devices while
 * it writes an artifact, so that work a session would do at creation is
 * done once, at compile time, by the same code.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_TOOLCHAIN_H
#define KILN_TOOLCHAIN_H

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Packs the constant weights of `call` (call->weights) into the layout
 * the CPU device's library (oneDNN) picks for the call on this host, as a
 * session would when it is created (dynamic dims taken as 1), with
 * `num_threads` threads (0: the default). On success `*packed` (packed
 * bytes) and `*layout` (the layout, for kiln_library_call.weights_layout)
 * are malloc'd and the caller frees them; both stay NULL when the library
 * takes the weights as they are. */
kiln_status kiln_cpu_prepack_weights(const kiln_library_call *call, int32_t num_threads,
                                     void **packed, size_t *packed_bytes, void **layout,
                                     size_t *layout_bytes);

#ifdef __cplusplus
}
#endif

#endif /* KILN_TOOLCHAIN_H */
