/*===- device.h - the runtime's device table --------------------------------===*
 *
 * Where a session's memory lives and how it is obtained, behind a small
 * table of functions. The CPU device is the only one today; a CUDA device
 * (with its libraries loaded at run time) joins by providing the same
 * table.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_DEVICE_H
#define KILN_RUNTIME_DEVICES_DEVICE_H

#include "kiln/kiln.h"

typedef struct kiln_device {
  const char *name;
  /* Memory for a session's pool; `allocator` may route it to the caller. */
  void *(*allocate)(const kiln_allocator *allocator, size_t bytes, size_t alignment);
  void (*release)(const kiln_allocator *allocator, void *ptr);
  /* Runs the compiled code's chunk over [begin, end) on `num_threads`
   * threads (0: the default count), as kiln_runtime_services.parallel_for. */
  void (*parallel_for)(int32_t num_threads, void (*chunk)(void *, int64_t, int64_t),
                       void *context, int64_t begin, int64_t end);
} kiln_device;

const kiln_device *kiln_cpu_device(void);

#endif
