/*===- cpu.c - the CPU device ----------------------------------------------===*/

#include "device.h"

#include <stdlib.h>

static void *cpu_allocate(const kiln_allocator *allocator, size_t bytes, size_t alignment) {
  if (allocator && allocator->allocate)
    return allocator->allocate(allocator->context, bytes, alignment);
  return aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
}

static void cpu_release(const kiln_allocator *allocator, void *ptr) {
  if (allocator && allocator->release)
    allocator->release(allocator->context, ptr);
  else
    free(ptr);
}

static const kiln_device cpu_device = {"cpu", cpu_allocate, cpu_release};

const kiln_device *kiln_cpu_device(void) { return &cpu_device; }
