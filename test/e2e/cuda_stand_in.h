/*===- cuda_stand_in.h - what the CUDA driver stand-in counts ---------------===*
 *
 * test/e2e/cuda_stand_in.c implements the CUDA driver entry points Kiln's
 * runtime uses (runtime/src/devices/cuda_api.h) on host memory, without a
 * GPU: kernels are recorded, not run. Tests load it as the driver
 * (KILN_CUDA_DRIVER) and read these counters to check what the runtime
 * asked of the driver.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_TEST_CUDA_STAND_IN_H
#define KILN_TEST_CUDA_STAND_IN_H

typedef struct kiln_stand_in_counters {
  unsigned long long allocations;          /* cuMemAlloc */
  unsigned long long allocations_in_capture;
  unsigned long long synchronizations;     /* cuStreamSynchronize */
  unsigned long long synchronizations_in_capture;
  unsigned long long copies_in_capture;    /* cuMemcpy*, cuMemset* */
  unsigned long long launches;             /* cuLaunchKernel outside a capture */
  unsigned long long launches_in_capture;  /* recorded into a graph */
  unsigned long long captures;             /* cuStreamBeginCapture */
  unsigned long long graph_launches;       /* cuGraphLaunch */
  unsigned long long graph_nodes_launched; /* kernels of the graphs launched */
  unsigned long long module_loads;
  int module_format;                       /* of the last module: 1 cubin (ELF), 2 PTX */
  unsigned long long bad_launches;         /* unknown function, empty grid, > 1024 threads */
  /* Bytes copied by cuMemcpyHtoDAsync, cuMemcpyDtoHAsync and
   * cuMemcpyDtoDAsync: on the stream, or by graph launches (a copy
   * captured is recorded into the graph and done at each launch). */
  unsigned long long bytes_to_device;
  unsigned long long bytes_to_host;
  unsigned long long bytes_device_to_device;
  /* Calls that enqueue work on a stream or wait for it, outside a capture
   * (copies, memsets, kernel and graph launches, synchronisations). */
  unsigned long long stream_calls;
  /* Copies to or from pinned host memory, done later (asynchronous). */
  unsigned long long copies_deferred;
} kiln_stand_in_counters;

/* Does the copies the driver stand-in has enqueued and not done yet
 * (dlsym "kiln_stand_in_flush_copies"): the cuBLASLt and cuDNN stand-ins
 * call it before they compute, as a library call on a stream runs after
 * the copies enqueued before it. */
typedef void (*kiln_stand_in_flush_copies_fn)(void);

/* The library's counters (dlsym "kiln_stand_in_get_counters"). */
typedef const kiln_stand_in_counters *(*kiln_stand_in_counters_fn)(void);
/* A function run once, on the capturing thread, when the next capture
 * begins (dlsym "kiln_stand_in_set_capture_hook"). */
typedef void (*kiln_stand_in_set_capture_hook_fn)(void (*hook)(void));

#ifdef KILN_STAND_IN_LIBRARY
#include <dlfcn.h>
#include <stdlib.h>
/* For the library stand-ins: the driver stand-in's pending copies done, if
 * the driver ($KILN_CUDA_DRIVER, loaded by the runtime) is the stand-in. */
static inline void kiln_stand_in_wait_for_copies(void) {
  static kiln_stand_in_flush_copies_fn flush;
  static int looked;
  if (!looked) {
    const char *path = getenv("KILN_CUDA_DRIVER");
    void *driver = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    flush = driver ? (kiln_stand_in_flush_copies_fn)dlsym(driver, "kiln_stand_in_flush_copies")
                   : NULL;
    looked = 1;
  }
  if (flush)
    flush();
}
#endif

#endif
