/*===- pool.h - the runtime's pooled allocator -----------------------------===*
 *
 * Serves a session's buffers (the compiled code's intermediates and
 * outputs) from free lists of power-of-two size classes, so that after the
 * first run of a shape no run touches the heap. Not thread-safe: a session
 * is used by one thread at a time.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_POOL_H
#define KILN_RUNTIME_POOL_H

#include "devices/device.h"
#include "kiln/kiln.h"

typedef struct kiln_pool kiln_pool;

/* Blocks come from `device` (through `allocator` when one is given; the
 * pool keeps its own copy of it). */
kiln_pool *kiln_pool_create(const kiln_device *device, const kiln_allocator *allocator);
void kiln_pool_destroy(kiln_pool *pool);
/* 64-byte aligned; NULL when the heap is exhausted. */
void *kiln_pool_alloc(kiln_pool *pool, size_t size);
void kiln_pool_free(kiln_pool *pool, void *ptr);
/* Takes back every block handed out (what a run that stopped half way
 * never freed); the blocks stay in the pool for the next run. */
void kiln_pool_free_all(kiln_pool *pool);
void kiln_pool_stats(const kiln_pool *pool, kiln_memory_stats *stats);

#endif
