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
 * Copies between the device and pinned host memory (cuMemAllocHost) are
 * asynchronous, as a GPU's DMA is: one enqueued on the stream is done when
 * the stream next does other work or synchronises (or the memory is
 * freed), in order, so a host that rewrites pinned memory before its copy
 * to the device is done sends the new bytes, and one that reads pinned
 * memory before its copy from the device is done reads the old ones, as
 * on a GPU. Copies from or to pageable memory are done at once.
 *
 *===----------------------------------------------------------------------===*/
#include "cuda_stand_in.h"

#include <pthread.h>
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
/* Pinned host memory: the blocks cuMemAllocHost made, for every thread. */
struct pinned_block {
  const char *start;
  size_t bytes;
};
static struct pinned_block *pinned;
static size_t pinned_count, pinned_capacity;
static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;

static int remember_pinned(const void *p, size_t bytes) {
  pthread_mutex_lock(&pinned_lock);
  int ok = 1;
  if (pinned_count == pinned_capacity) {
    size_t grown = pinned_capacity ? 2 * pinned_capacity : 64;
    struct pinned_block *more = realloc(pinned, grown * sizeof *more);
    if (more) {
      pinned = more;
      pinned_capacity = grown;
    } else {
      ok = 0;
    }
  }
  if (ok)
    pinned[pinned_count++] = (struct pinned_block){p, bytes};
  pthread_mutex_unlock(&pinned_lock);
  return ok;
}

static void forget_pinned(const void *p) {
  pthread_mutex_lock(&pinned_lock);
  for (size_t i = 0; i < pinned_count; ++i)
    if (pinned[i].start == p) {
      pinned[i] = pinned[--pinned_count];
      break;
    }
  pthread_mutex_unlock(&pinned_lock);
}

static int is_pinned(const void *p, size_t bytes) {
  const char *c = p;
  int found = 0;
  pthread_mutex_lock(&pinned_lock);
  for (size_t i = 0; i < pinned_count && !found; ++i)
    found = c >= pinned[i].start && c + bytes <= pinned[i].start + pinned[i].bytes;
  pthread_mutex_unlock(&pinned_lock);
  return found;
}

/* The stream's copies to or from pinned memory not done yet, in order (a
 * session's stream is used by one thread at a time, and every run ends
 * synchronised). */
#define MAX_PENDING 4096
static __thread struct {
  void *to;
  const void *from;
  size_t bytes;
} pending[MAX_PENDING];
static __thread unsigned pending_count;

static void flush_copies(void) {
  for (unsigned k = 0; k < pending_count; ++k)
    memmove(pending[k].to, pending[k].from, pending[k].bytes);
  pending_count = 0;
}

EXPORT void kiln_stand_in_flush_copies(void) { flush_copies(); }

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  if (capturing) {
    counters.allocations_in_capture++;
    return CAPTURE_UNSUPPORTED;
  }
  /* 256-byte aligned, as the driver's allocations are (the CUDA
   * programming guide), zeroed. */
  size_t rounded = (bytes + 255) & ~(size_t)255;
  void *p = aligned_alloc(256, rounded ? rounded : 256);
  if (!p)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  memset(p, 0, rounded ? rounded : 256);
  counters.allocations++;
  *pointer = (CUdeviceptr)(uintptr_t)p;
  return OK;
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) { free((void *)(uintptr_t)pointer); return OK; }
EXPORT CUresult cuMemAllocHost_v2(void **pointer, size_t bytes) {
  *pointer = malloc(bytes ? bytes : 1);
  if (*pointer && !remember_pinned(*pointer, bytes ? bytes : 1)) {
    free(*pointer);
    *pointer = NULL;
  }
  return *pointer ? OK : 2;
}
EXPORT CUresult cuMemFreeHost(void *pointer) {
  flush_copies();
  forget_pinned(pointer);
  free(pointer);
  return OK;
}
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
  const void *host = kind == TO_DEVICE ? from : kind == TO_HOST ? to : NULL;
  if (host && is_pinned(host, bytes) && pending_count < MAX_PENDING) {
    pending[pending_count].to = to; /* done later, by DMA */
    pending[pending_count].from = from;
    pending[pending_count].bytes = bytes;
    pending_count++;
    counters.copies_deferred++;
    return OK;
  }
  flush_copies();
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
  flush_copies();
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
  flush_copies();
  return OK;
}
EXPORT CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)stream, (void)mode;
  if (capturing)
    return INVALID_VALUE;
  capturing = 1;
  counters.captures++;
  flush_copies(); /* the work before the capture */
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
  flush_copies();
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
    flush_copies();
  }
  return OK;
}
