/*===- host_memory.c - large host buffers on huge pages ---------------------===*/

#include "host_memory.h"
#include "host_env.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KILN_HUGE_PAGE ((size_t)2 << 20)

/* 1 unless KILN_HUGE_PAGES=0; read at the first large buffer. */
static int huge_pages_wanted(void) {
  static int wanted = -1;
  if (wanted < 0) {
    wanted = !kiln_env_is("KILN_HUGE_PAGES", "0");
  }
  return wanted;
}

void *kiln_host_alloc(size_t bytes, size_t alignment) {
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  if (!rounded)
    rounded = alignment;
  if (rounded < KILN_HUGE_PAGE || !huge_pages_wanted())
    return aligned_alloc(alignment, rounded);
  /* posix_memalign: C11's aligned_alloc wants the size a multiple of the
   * alignment, which would round a buffer up to whole huge pages. */
  void *p = NULL;
  if (posix_memalign(&p, KILN_HUGE_PAGE, rounded) != 0)
    return NULL;
  /* Advice only: a kernel without transparent huge pages refuses it and
   * the buffer stays on small pages. */
  (void)madvise(p, rounded / KILN_HUGE_PAGE * KILN_HUGE_PAGE, MADV_HUGEPAGE);
  return p;
}

void *kiln_host_allocate(const kiln_allocator *allocator, size_t bytes, size_t alignment) {
  if (allocator && allocator->allocate)
    return allocator->allocate(allocator->context, bytes, alignment);
  return kiln_host_alloc(bytes, alignment);
}

void kiln_host_release(const kiln_allocator *allocator, void *ptr) {
  if (!ptr)
    return;
  if (allocator && allocator->allocate)
    allocator->release(allocator->context, ptr);
  else
    free(ptr);
}
