/*===- cpu.c - the CPU device ----------------------------------------------===*/

#include "device.h"

#include <omp.h>
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

/* One static range per thread of the shared OpenMP pool (the one oneDNN
 * uses), so generated loops and library calls share one set of threads.
 * Inside another parallel region (a caller's own OpenMP threads) the chunk
 * runs on the calling thread rather than nesting teams. */
static void cpu_parallel_for(int32_t num_threads, void (*chunk)(void *, int64_t, int64_t),
                             void *context, int64_t begin, int64_t end) {
  int64_t n = end - begin;
  if (n <= 0)
    return;
  int64_t threads = num_threads > 0 ? num_threads : omp_get_max_threads();
  if (threads > n)
    threads = n;
  if (threads <= 1 || omp_in_parallel()) {
    chunk(context, begin, end);
    return;
  }
#pragma omp parallel num_threads((int)threads)
  {
    int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    int64_t lo = begin + n * t / team, hi = begin + n * (t + 1) / team;
    if (lo < hi)
      chunk(context, lo, hi);
  }
}

static const kiln_device cpu_device = {"cpu", cpu_allocate, cpu_release, cpu_parallel_for};

const kiln_device *kiln_cpu_device(void) { return &cpu_device; }
