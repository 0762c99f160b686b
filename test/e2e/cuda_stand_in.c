/*===- cuda_stand_in.c - a CUDA driver without a GPU, for tests --------------===*
 *
 * The driver entry points Kiln's runtime loads (runtime/src/devices/
 * cuda_api.h), on host memory: allocations are malloc, copies memcpy,
 * kernels are checked (known function, a non-empty grid, at most 1024
 * threads a block) and counted but not run, a capture records the launches
 * into a graph that cuGraphLaunch counts (and its device-to-device copies,
 * which cuGraphLaunch does). Environment: KILN_STAND_IN_CC
 * (the GPU's compute capability times 10, default 90),
 * KILN_STAND_IN_FAIL_CAPTURE=1 (cuStreamEndCapture fails as a real driver
 * does when a capture was invalidated). What is illegal during a capture
 * on a real driver (allocating, synchronising) fails here too, and is
 * counted.
 *
 *===----------------------------------------------------------------------===*/
#include "cuda_stand_in.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define OK 0
#define INVALID_VALUE 1
#define NOT_FOUND 500
#define CAPTURE_UNSUPPORTED 900
#define CAPTURE_INVALIDATED 901
#define EXPORT __attribute__((visibility("default")))

static kiln_stand_in_counters counters;
/* Captures are thread-local (CU_STREAM_CAPTURE_MODE_THREAD_LOCAL): only
 * the capturing thread is refused what is unsafe during a capture. */
static __thread int capturing;
/* Called once when a capture begins (the threads test runs another
 * session then). */
static void (*capture_hook)(void);
EXPORT void kiln_stand_in_set_capture_hook(void (*hook)(void)) { capture_hook = hook; }
static int cc = 90;

struct module {
  const char *image;
  int format;
};
struct function {
  int magic;
};
/* A captured copy, done at each launch of its graph. */
enum copy_kind { TO_DEVICE, TO_HOST, ON_DEVICE };
struct copy_node {
  void *to;
  const void *from;
  size_t bytes;
  enum copy_kind kind;
};
#define MAX_COPY_NODES 4096
struct graph {
  unsigned long long nodes;
  unsigned copies;
  struct copy_node copy[MAX_COPY_NODES];
};
static struct function known_function = {0x4b465554};

EXPORT const kiln_stand_in_counters *kiln_stand_in_get_counters(void) { return &counters; }

EXPORT CUresult cuInit(unsigned flags) {
  (void)flags;
  const char *value = getenv("KILN_STAND_IN_CC");
  if (value && *value)
    cc = atoi(value);
  return OK;
}
EXPORT CUresult cuDriverGetVersion(int *version) { *version = 13000; return OK; }
EXPORT CUresult cuDeviceGetCount(int *count) { *count = 1; return OK; }
EXPORT CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return OK; }
EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  if (attribute == 75) *value = cc / 10;
  else if (attribute == 76) *value = cc % 10;
  else return INVALID_VALUE;
  return OK;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  static int the_context;
  *context = &the_context;
  return OK;
}
EXPORT CUresult cuCtxPushCurrent_v2(void *context) { (void)context; return OK; }
EXPORT CUresult cuCtxPopCurrent_v2(void **context) { if (context) *context = NULL; return OK; }
EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case OK: *name = "CUDA_SUCCESS"; break;
  case NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; break;
  case CAPTURE_UNSUPPORTED: *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; break;
  case CAPTURE_INVALIDATED: *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; break;
  default: *name = "CUDA_ERROR_INVALID_VALUE"; break;
  }
  return OK;
}
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  if (capturing) {
    counters.allocations_in_capture++;
    return CAPTURE_UNSUPPORTED;
  }
  void *p = calloc(1, bytes);
  if (!p)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  counters.allocations++;
  *pointer = (CUdeviceptr)(uintptr_t)p;
  return OK;
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) { free((void *)(uintptr_t)pointer); return OK; }
EXPORT CUresult cuMemAllocHost_v2(void **pointer, size_t bytes) {
  *pointer = malloc(bytes ? bytes : 1);
  return *pointer ? OK : 2;
}
EXPORT CUresult cuMemFreeHost(void *pointer) { free(pointer); return OK; }
static __thread struct graph *recording;
/* A copy: done now, or recorded into the graph being captured. */
static CUresult copy(void *to, const void *from, size_t bytes, enum copy_kind kind) {
  if (capturing) {
    counters.copies_in_capture++;
    if (!recording || recording->copies == MAX_COPY_NODES)
      return CAPTURE_UNSUPPORTED;
    struct copy_node *c = &recording->copy[recording->copies++];
    c->to = to;
    c->from = from;
    c->bytes = bytes;
    c->kind = kind;
    recording->nodes++;
    return OK;
  }
  counters.stream_calls++;
  *(kind == TO_DEVICE  ? &counters.bytes_to_device
    : kind == TO_HOST ? &counters.bytes_to_host
                      : &counters.bytes_device_to_device) += bytes;
  memmove(to, from, bytes);
  return OK;
}
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void *from, size_t bytes, void *s) {
  (void)s;
  return copy((void *)(uintptr_t)to, from, bytes, TO_DEVICE);
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *to, CUdeviceptr from, size_t bytes, void *s) {
  (void)s;
  return copy(to, (const void *)(uintptr_t)from, bytes, TO_HOST);
}
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes, void *s) {
  (void)s;
  return copy((void *)(uintptr_t)to, (const void *)(uintptr_t)from, bytes, ON_DEVICE);
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr to, unsigned char value, size_t bytes, void *s) {
  (void)s;
  if (capturing)
    counters.copies_in_capture++; /* done now: no run the tests capture has one */
  else
    counters.stream_calls++;
  memset((void *)(uintptr_t)to, value, bytes);
  return OK;
}
EXPORT CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  static int the_stream;
  *stream = &the_stream;
  return OK;
}
EXPORT CUresult cuStreamDestroy_v2(void *stream) { (void)stream; return OK; }
EXPORT CUresult cuStreamSynchronize(void *stream) {
  (void)stream;
  if (capturing) {
    counters.synchronizations_in_capture++;
    return CAPTURE_UNSUPPORTED;
  }
  counters.synchronizations++;
  counters.stream_calls++;
  return OK;
}
EXPORT CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)stream, (void)mode;
  if (capturing)
    return INVALID_VALUE;
  capturing = 1;
  counters.captures++;
  recording = calloc(1, sizeof *recording);
  if (capture_hook) {
    void (*hook)(void) = capture_hook;
    capture_hook = NULL;
    hook();
  }
  return recording ? OK : 2;
}
EXPORT CUresult cuStreamEndCapture(void *stream, struct graph **graph) {
  (void)stream;
  capturing = 0;
  const char *fail = getenv("KILN_STAND_IN_FAIL_CAPTURE");
  if (fail && strcmp(fail, "1") == 0) {
    free(recording);
    recording = NULL;
    *graph = NULL;
    return CAPTURE_INVALIDATED;
  }
  *graph = recording;
  recording = NULL;
  return OK;
}
EXPORT CUresult cuGraphInstantiateWithFlags(struct graph **exec, struct graph *graph,
                                            unsigned long long flags) {
  (void)flags;
  struct graph *copy = malloc(sizeof *copy);
  if (!copy)
    return 2;
  *copy = *graph;
  *exec = copy;
  return OK;
}
EXPORT CUresult cuGraphLaunch(struct graph *exec, void *stream) {
  (void)stream;
  counters.graph_launches++;
  counters.stream_calls++;
  counters.graph_nodes_launched += exec->nodes;
  for (unsigned k = 0; k < exec->copies; ++k) {
    const struct copy_node *c = &exec->copy[k];
    memmove(c->to, c->from, c->bytes);
    *(c->kind == TO_DEVICE  ? &counters.bytes_to_device
      : c->kind == TO_HOST ? &counters.bytes_to_host
                           : &counters.bytes_device_to_device) += c->bytes;
  }
  return OK;
}
EXPORT CUresult cuGraphExecDestroy(struct graph *exec) { free(exec); return OK; }
EXPORT CUresult cuGraphDestroy(struct graph *graph) { free(graph); return OK; }
EXPORT CUresult cuModuleLoadData(struct module **module, const void *image) {
  struct module *m = malloc(sizeof *m);
  if (!m)
    return 2;
  m->image = image;
  m->format = memcmp(image, "\177ELF", 4) == 0 ? 1 : strstr(image, ".version") ? 2 : 0;
  if (!m->format) {
    free(m);
    return 200; /* CUDA_ERROR_INVALID_IMAGE */
  }
  counters.module_loads++;
  counters.module_format = m->format;
  *module = m;
  return OK;
}
EXPORT CUresult cuModuleUnload(struct module *module) { free(module); return OK; }
EXPORT CUresult cuModuleGetFunction(struct function **function, struct module *module,
                                    const char *name) {
  /* PTX names its entries ".entry NAME("; a cubin's string table holds
   * them NUL-terminated. */
  if (module->format == 2) {
    char pattern[256];
    snprintf(pattern, sizeof pattern, ".entry %s(", name);
    if (!strstr(module->image, pattern))
      return NOT_FOUND;
  } else {
    /* Search the file (its section headers end it) for \0NAME\0. */
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, module->image + 0x28, 8);
    memcpy(&shentsize, module->image + 0x3a, 2);
    memcpy(&shnum, module->image + 0x3c, 2);
    size_t n = strlen(name);
    const char *p = module->image, *end = p + shoff + (uint64_t)shentsize * shnum;
    int found = 0;
    for (; p + n + 1 < end && !found; ++p)
      found = p[0] == '\0' && memcmp(p + 1, name, n) == 0 && p[n + 1] == '\0';
    if (!found)
      return NOT_FOUND;
  }
  *function = &known_function;
  return OK;
}
EXPORT CUresult cuLaunchKernel(struct function *f, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz, unsigned shared,
                               void *stream, void **params, void **extra) {
  (void)shared, (void)stream, (void)extra;
  if (f != &known_function || !gx || !gy || !gz || !bx || !by || !bz ||
      (unsigned long long)bx * by * bz > 1024 || !params) {
    counters.bad_launches++;
    return INVALID_VALUE;
  }
  if (capturing) {
    counters.launches_in_capture++;
    recording->nodes++;
  } else {
    counters.launches++;
    counters.stream_calls++;
  }
  return OK;
}
