/*===- onednn_reorder.c - reorders and aligned buffers for oneDNN calls ---===*
 *
 * See onednn_reorder.h.
 *
 *===----------------------------------------------------------------------===*/

#include "onednn_reorder.h"

#include "onednn_api.h"
#include "../host_memory.h"

#include <stdlib.h>
#include <string.h>

void kiln_release_reorder(reorder *r) {
  if (r->primitive) dnnl_primitive_destroy(r->primitive);
  if (r->from) dnnl_memory_destroy(r->from);
  if (r->to) dnnl_memory_destroy(r->to);
  memset(r, 0, sizeof *r);
}

int kiln_make_reorder(dnnl_engine_t engine, reorder *r, const dnnl_memory_desc_t *from,
                      const dnnl_memory_desc_t *to) {
  dnnl_primitive_desc_t pd;
  if (dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine, NULL))
    return 1;
  int rc = dnnl_primitive_create(&r->primitive, pd) != dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  return rc || dnnl_memory_create(&r->from, from, engine, DNNL_MEMORY_NONE) ||
         dnnl_memory_create(&r->to, to, engine, DNNL_MEMORY_NONE);
}

int kiln_run_reorder(dnnl_stream_t stream, reorder *r, void *from, void *to) {
  if (dnnl_memory_set_data_handle(r->from, from) ||
      dnnl_memory_set_data_handle(r->to, to))
    return 1;
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, r->from}, {DNNL_ARG_TO, r->to}};
  return dnnl_primitive_execute(r->primitive, stream, 2, args) != dnnl_success;
}

void *kiln_aligned_zeroed(size_t bytes) {
  void *p = kiln_host_alloc(bytes, 64);
  if (p)
    memset(p, 0, (bytes + 63) / 64 * 64);
  return p;
}

int kiln_ensure_buffer(void **buffer, size_t *have, size_t bytes) {
  if (*have >= bytes)
    return 0;
  free(*buffer);
  *buffer = kiln_aligned_zeroed(bytes);
  *have = *buffer ? bytes : 0;
  return *buffer == NULL;
}
