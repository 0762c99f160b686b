/*===- host_env.h - the host's clock and environment, for the runtime -----===*
 *
 * What several of the runtime's files read from the host: the monotonic
 * clock (a run's time for the thread policy, a CUDA Graph replay's host
 * overhead) and environment switches (KILN_HUGE_PAGES=0,
 * KILN_ADAPTIVE_THREADS=1, KILN_ONEDNN_WINOGRAD=0, KILN_CUDA_GRAPHS=0,
 * KILN_CUDNN_GRAPH=0).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_HOST_ENV_H
#define KILN_RUNTIME_HOST_ENV_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
static inline uint64_t kiln_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Whether environment variable `name` is set to exactly `value`. */
static inline int kiln_env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

#endif
