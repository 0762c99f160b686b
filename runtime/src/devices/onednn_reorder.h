/*===- onednn_reorder.h - reorders and aligned buffers for oneDNN calls ---===*
 *
 * A reorder between a buffer in the compiled code's layout and one in the
 * layout a oneDNN primitive chose (a staging buffer, packed weights), and
 * the zeroed, 64-byte aligned buffers they fill (onednn_reorder.c).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_ONEDNN_REORDER_H
#define KILN_RUNTIME_DEVICES_ONEDNN_REORDER_H

#include <oneapi/dnnl/dnnl_types.h>

#include <stddef.h>

/* The pointers are bound when it runs. */
typedef struct reorder {
  dnnl_primitive_t primitive;
  dnnl_memory_t from, to;
} reorder;

/* 0 on success. */
int kiln_make_reorder(dnnl_engine_t engine, reorder *r, const dnnl_memory_desc_t *from,
                      const dnnl_memory_desc_t *to);
int kiln_run_reorder(dnnl_stream_t stream, reorder *r, void *from, void *to);
void kiln_release_reorder(reorder *r);

/* 64-byte aligned memory of at least `bytes`, zeroed (a blocked layout's
 * padding must read as zeros). */
void *kiln_aligned_zeroed(size_t bytes);
/* Grows `*buffer` (holding `*have` bytes) to at least `bytes`; 0 on
 * success. */
int kiln_ensure_buffer(void **buffer, size_t *have, size_t bytes);

#endif
