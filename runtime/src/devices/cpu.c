/*===- cpu.c - the CPU device ----------------------------------------------===*
 *
 * Generated code runs on the process's GNU OpenMP threads (the pool oneDNN
 * uses, so there is one set of threads); convolutions and matmuls run in
 * oneDNN, loaded on first use (onednn.c). Before a model is accepted, its
 * code's machine and processor features are checked against this host, so
 * a mismatch is an error naming what is missing rather than SIGILL.
 *
 *===----------------------------------------------------------------------===*/

#include "../host_memory.h"
#include "device.h"
#include "onednn.h"

#include <elf.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#define KILN_HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define KILN_HOST_MACHINE EM_AARCH64
#else
#define KILN_HOST_MACHINE 0
#endif

/* Whether the host has processor feature `name` (LLVM's name); -1 when the
 * runtime does not know the feature. */
static int host_has_feature(const char *name) {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  unsigned ecx1 = 0, ebx7 = 0, ecx7 = 0, edx7 = 0, eax71 = 0;
  if (__get_cpuid(1, &a, &b, &c, &d))
    ecx1 = c;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    ebx7 = b;
    ecx7 = c;
    edx7 = d;
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d))
    eax71 = a;
  /* Register state the operating system saves (XCR0): AVX needs the ymm
   * state, AVX-512 the opmask and zmm states, AMX the tile states. */
  unsigned long long xcr0 = 0;
  if (ecx1 & (1u << 27)) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = ((unsigned long long)hi << 32) | lo;
  }
  int avx_os = (xcr0 & 0x6) == 0x6, avx512_os = (xcr0 & 0xe6) == 0xe6;
  int amx_os = (xcr0 & 0x60000) == 0x60000;
  static const struct {
    const char *name;
    int which; /* 0: cpuid 1 ecx, 1: cpuid 7 ebx, 2: 7 ecx, 3: 7 edx, 4: 7.1 eax */
    int bit;
    int state; /* 0: none, 1: AVX, 2: AVX-512, 3: AMX */
  } table[] = {
      {"sse4.1", 0, 19, 0},      {"sse4.2", 0, 20, 0},     {"popcnt", 0, 23, 0},
      {"movbe", 0, 22, 0},       {"avx", 0, 28, 1},        {"fma", 0, 12, 1},
      {"f16c", 0, 29, 1},        {"avx2", 1, 5, 1},        {"bmi", 1, 3, 0},
      {"bmi2", 1, 8, 0},         {"avx512f", 1, 16, 2},    {"avx512dq", 1, 17, 2},
      {"avx512cd", 1, 28, 2},    {"avx512bw", 1, 30, 2},   {"avx512vl", 1, 31, 2},
      {"avx512vnni", 2, 11, 2},  {"avx512fp16", 3, 23, 2}, {"amx-bf16", 3, 22, 3},
      {"amx-tile", 3, 24, 3},    {"amx-int8", 3, 25, 3},   {"avxvnni", 4, 4, 1},
      {"avx512bf16", 4, 5, 2},
  };
  unsigned words[5] = {ecx1, ebx7, ecx7, edx7, eax71};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (strcmp(table[i].name, name) != 0)
      continue;
    int state = table[i].state == 0 || (table[i].state == 1 && avx_os) ||
                (table[i].state == 2 && avx512_os) || (table[i].state == 3 && amx_os);
    return ((words[table[i].which] >> table[i].bit) & 1u) && state;
  }
#endif
  (void)name;
  return -1;
}

static kiln_status cpu_check_model(const kiln_model_v1 *abi, const char *what,
                                   unsigned elf_machine) {
  if (elf_machine && elf_machine != KILN_HOST_MACHINE)
    return kiln_fail(KILN_ERROR_LOAD,
                     "cannot load '%s': its code is for another machine (ELF machine %u, "
                     "this host is %u)",
                     what, elf_machine, (unsigned)KILN_HOST_MACHINE);
  /* Every feature the code needs; all the missing ones in one message. */
  const char *list = abi->required_features ? abi->required_features : "";
  char missing[512] = "", unknown[512] = "";
  while (*list) {
    const char *end = strchr(list, ',');
    size_t n = end ? (size_t)(end - list) : strlen(list);
    char feature[64];
    if (n > 0 && n < sizeof feature) {
      memcpy(feature, list, n);
      feature[n] = 0;
      int has = host_has_feature(feature);
      char *into = has < 0 ? unknown : has == 0 ? missing : NULL;
      if (into && strlen(into) + n + 3 < sizeof missing) {
        if (*into)
          strcat(into, ", ");
        strcat(into, feature);
      }
    }
    list += n + (end ? 1 : 0);
  }
  if (*unknown)
    return kiln_fail(KILN_ERROR_LOAD,
                     "cannot load '%s': it needs processor features this runtime does not "
                     "know (%s); recompile it for this CPU (kiln compile --cpu=host)",
                     what, unknown);
  if (*missing)
    return kiln_fail(KILN_ERROR_LOAD,
                     "cannot load '%s': it was compiled for '%s' and needs %s, which this "
                     "host's processor lacks; recompile it with kiln compile --cpu=host (or "
                     "an older --cpu)",
                     what, abi->target ? abi->target : "?", missing);
  if (abi->num_library_calls) {
    /* Every call's description first: nothing reads a field unchecked. */
    kiln_status calls = kiln_onednn_check_calls(abi, what);
    return calls != KILN_OK ? calls : kiln_onednn_load(what);
  }
  return KILN_OK;
}

/* The CPU's memory is the host's. */
static void *cpu_allocate(const kiln_allocator *allocator, size_t bytes, size_t alignment) {
  return kiln_host_allocate(allocator, bytes, alignment);
}

static void cpu_release(const kiln_allocator *allocator, void *ptr) {
  kiln_host_release(allocator, ptr);
}

/* Ranges handed out on demand to the threads of the shared OpenMP pool
 * (the one oneDNN uses, so generated loops and library calls share one
 * set of threads): four per thread, taken by whichever thread is free, so
 * a thread that loses its core to another process delays one range, not
 * a whole share. Each index still runs exactly once, so results do not
 * depend on the thread count or the schedule. Inside another parallel
 * region (a caller's own OpenMP threads) the chunk runs on the calling
 * thread rather than nesting teams. */
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
  int64_t pieces = threads * 4 < n ? threads * 4 : n;
#pragma omp parallel for num_threads((int)threads) schedule(dynamic, 1)
  for (int64_t p = 0; p < pieces; ++p) {
    int64_t lo = begin + n * p / pieces, hi = begin + n * (p + 1) / pieces;
    if (lo < hi)
      chunk(context, lo, hi);
  }
}

/* The session's thread count applies to the OpenMP regions started from
 * the calling thread while the runtime works for the session: oneDNN reads
 * it when it creates a primitive (its work split) and when it runs one.
 * The caller's own setting is restored afterwards. */
static int cpu_enter(int32_t num_threads) {
  int saved = omp_get_max_threads();
  if (num_threads > 0)
    omp_set_num_threads(num_threads);
  return saved;
}

static void cpu_leave(int32_t num_threads, int saved) {
  if (num_threads > 0)
    omp_set_num_threads(saved);
}

/* Library calls wait for oneDNN's stream; generated code is synchronous. */
static int cpu_synchronize(void *library_state) { return 0; }

static int32_t cpu_thread_count(int32_t num_threads) {
  return num_threads > 0 ? num_threads : omp_get_max_threads();
}

static const kiln_device cpu_device = {
    "cpu",           KILN_DEVICE_CPU,    cpu_check_model,     cpu_allocate,
    cpu_release,     kiln_onednn_create, kiln_onednn_free,    kiln_onednn_execute,
    cpu_parallel_for, cpu_enter,         cpu_leave,           cpu_synchronize,
    /* memory_is_host */ 1, NULL,        NULL,                NULL,
    NULL, NULL, NULL, NULL, NULL, kiln_onednn_implementation, cpu_thread_count};

const kiln_device *kiln_device_for(uint32_t kind) {
  switch (kind) {
  case KILN_DEVICE_CPU: return &cpu_device;
  case KILN_DEVICE_CUDA: return kiln_cuda_device();
  }
  return NULL;
}

const char *kiln_device_names(void) { return "cpu, cuda"; }
