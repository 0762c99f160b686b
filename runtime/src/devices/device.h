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
} kiln_device;

const kiln_device *kiln_cpu_device(void);

#endif
