/*===- pool.c - the runtime's pooled allocator ------------------------------===*/

#include "pool.h"

#include <stdlib.h>
#include <string.h>

#define KILN_POOL_ALIGN 64
#define KILN_POOL_CLASSES 48 /* 64 B << 47 covers any real size */

/* Every block starts with this header, one alignment unit before the
 * pointer handed out. */
typedef struct block {
  struct block *next; /* in its class's free list */
  uint32_t size_class;
  uint32_t magic;
  uint32_t in_use; /* handed out and not yet freed */
  /* While handed out: the list of every block in use. */
  struct block *live_prev, *live_next;
  /* What the caller gets: right after the header, or (a device whose
   * memory the host cannot touch) the device's memory, the header on the
   * host. */
  void *data;
} block;

#define KILN_BLOCK_MAGIC 0x6b626c6bu

struct kiln_pool {
  block *free_lists[KILN_POOL_CLASSES];
  block *live; /* the blocks handed out and not yet freed */
  kiln_memory_stats stats;
  const kiln_device *device;
  kiln_allocator allocator;
  int has_allocator;
};

kiln_pool *kiln_pool_create(const kiln_device *device, const kiln_allocator *allocator) {
  kiln_pool *pool = calloc(1, sizeof(kiln_pool));
  if (!pool)
    return NULL;
  pool->device = device;
  if (allocator) {
    pool->allocator = *allocator;
    pool->has_allocator = 1;
  }
  return pool;
}

static const kiln_allocator *hook(const kiln_pool *pool) {
  return pool->has_allocator ? &pool->allocator : NULL;
}

void kiln_pool_destroy(kiln_pool *pool) {
  if (!pool)
    return;
  kiln_pool_free_all(pool);
  for (int c = 0; c < KILN_POOL_CLASSES; ++c) {
    block *b = pool->free_lists[c];
    while (b) {
      block *next = b->next;
      if (pool->device->memory_is_host) {
        pool->device->release(hook(pool), b);
      } else {
        pool->device->release(hook(pool), b->data);
        free(b);
      }
      b = next;
    }
  }
  free(pool);
}

static uint32_t size_class(size_t size) {
  uint32_t c = 0;
  size_t capacity = KILN_POOL_ALIGN;
  while (capacity < size && c + 1 < KILN_POOL_CLASSES) {
    capacity <<= 1;
    ++c;
  }
  return c;
}

static size_t class_bytes(uint32_t c) { return (size_t)KILN_POOL_ALIGN << c; }

void *kiln_pool_alloc(kiln_pool *pool, size_t size) {
  uint32_t c = size_class(size ? size : 1);
  size_t bytes = class_bytes(c);
  if (bytes < size)
    return NULL;
  block *b = pool->free_lists[c];
  if (b) {
    pool->free_lists[c] = b->next;
  } else {
    if (pool->device->memory_is_host) {
      b = pool->device->allocate(hook(pool), KILN_POOL_ALIGN + bytes, KILN_POOL_ALIGN);
      if (!b)
        return NULL;
      b->data = (char *)b + KILN_POOL_ALIGN;
    } else {
      b = calloc(1, sizeof(block));
      if (!b)
        return NULL;
      b->data = pool->device->allocate(hook(pool), bytes, KILN_POOL_ALIGN);
      if (!b->data) {
        free(b);
        return NULL;
      }
    }
    b->size_class = c;
    b->magic = KILN_BLOCK_MAGIC;
    pool->stats.reserved_bytes += bytes;
    pool->stats.heap_allocations += 1;
  }
  b->next = NULL;
  b->in_use = 1;
  b->live_prev = NULL;
  b->live_next = pool->live;
  if (pool->live)
    pool->live->live_prev = b;
  pool->live = b;
  pool->stats.requests += 1;
  pool->stats.in_use_bytes += bytes;
  if (pool->stats.in_use_bytes > pool->stats.peak_bytes)
    pool->stats.peak_bytes = pool->stats.in_use_bytes;
  return b->data;
}

void kiln_pool_free(kiln_pool *pool, void *ptr) {
  if (!ptr)
    return;
  block *b = NULL;
  if (pool->device->memory_is_host) {
    b = (block *)((char *)ptr - KILN_POOL_ALIGN);
  } else {
    /* Device memory: the header is found among the blocks in use. */
    for (block *live = pool->live; live; live = live->live_next)
      if (live->data == ptr) {
        b = live;
        break;
      }
    if (!b)
      return;
  }
  if (b->magic != KILN_BLOCK_MAGIC || b->size_class >= KILN_POOL_CLASSES || !b->in_use)
    return; /* not ours, or freed already: never free it (again) */
  b->in_use = 0;
  pool->stats.in_use_bytes -= class_bytes(b->size_class);
  if (b->live_prev)
    b->live_prev->live_next = b->live_next;
  else
    pool->live = b->live_next;
  if (b->live_next)
    b->live_next->live_prev = b->live_prev;
  b->live_prev = b->live_next = NULL;
  b->next = pool->free_lists[b->size_class];
  pool->free_lists[b->size_class] = b;
}

void kiln_pool_free_all(kiln_pool *pool) {
  while (pool->live)
    kiln_pool_free(pool, pool->live->data);
}

void kiln_pool_stats(const kiln_pool *pool, kiln_memory_stats *stats) { *stats = pool->stats; }
