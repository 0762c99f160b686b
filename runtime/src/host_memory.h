/*===- host_memory.h - large host buffers on huge pages ---------------------===*
 *
 * The runtime's own host buffers (the pool's blocks, weights packed at
 * session creation, staging for reorders, a session's input buffers) when
 * the embedding program gave no allocator. A buffer of 2 MiB or more
 * starts on a 2 MiB boundary and asks the kernel for transparent huge
 * pages over its whole 2 MiB pages (madvise; the tail stays on small
 * pages): a model's activations and weights are read in sweeps of
 * megabytes, where small pages cost TLB misses. A touched huge page is
 * resident whole (a few MiB more at batch 8: docs/Performance.md).
 * KILN_HUGE_PAGES=0 in the environment turns it off (read once).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_HOST_MEMORY_H
#define KILN_RUNTIME_HOST_MEMORY_H

#include "kiln/kiln.h"

#include <stddef.h>

/* Aligned to `alignment` (a power of two, at most 2 MiB) or more; release
 * with free(). NULL when the heap is exhausted. */
void *kiln_host_alloc(size_t bytes, size_t alignment);

/* Host memory from `allocator` (the program's, given in
 * kiln_session_options) when it has one, else kiln_host_alloc's; and its
 * release (NULL is nothing). */
void *kiln_host_allocate(const kiln_allocator *allocator, size_t bytes, size_t alignment);
void kiln_host_release(const kiln_allocator *allocator, void *ptr);

#endif
