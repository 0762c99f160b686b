/*===- peak.c - the machine's limits: FMA peak and memory bandwidth ---------===*
 *
 *   peak THREADS   prints `fma_avx512_gflops`, `fma_avx2_gflops` (single
 *   precision, independent FMA chains on every thread) and `triad_gbs`
 *   (a[i] = b[i] + s * c[i] over arrays far larger than the caches).
 * A model's "% of limit" in docs/Performance.md is its FLOP rate over the
 * FMA peak of the widest vectors the host has.
 *
 *===----------------------------------------------------------------------===*/

#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define CHAINS 12

__attribute__((target("avx512f"))) static double fma512(long iterations) {
  __m512 acc[CHAINS];
  for (int i = 0; i < CHAINS; ++i)
    acc[i] = _mm512_set1_ps((float)i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < CHAINS; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  float sum = 0;
  for (int i = 0; i < CHAINS; ++i)
    sum += _mm512_reduce_add_ps(acc[i]);
  return sum;
}

__attribute__((target("avx2,fma"))) static double fma256(long iterations) {
  __m256 acc[CHAINS];
  for (int i = 0; i < CHAINS; ++i)
    acc[i] = _mm256_set1_ps((float)i);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < CHAINS; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  float lanes[8], sum = 0;
  for (int i = 0; i < CHAINS; ++i) {
    _mm256_storeu_ps(lanes, acc[i]);
    for (int k = 0; k < 8; ++k)
      sum += lanes[k];
  }
  return sum;
}

/* GFLOP/s of `kernel` (width floats per FMA) on `threads` threads; best of 5. */
static double measure(double (*kernel)(long), int width, int threads) {
  const long iterations = 20000000;
  double best = 0, sink = 0;
  for (int r = 0; r < 5; ++r) {
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += kernel(iterations);
    double seconds = omp_get_wtime() - start;
    double gflops = 2.0 * width * CHAINS * (double)iterations * threads / seconds / 1e9;
    if (gflops > best)
      best = gflops;
  }
  if (sink == 12345.0)
    printf("#\n");
  return best;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : omp_get_max_threads();
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    printf("fma_avx512_gflops %.1f\n", measure(fma512, 16, threads));
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    printf("fma_avx2_gflops %.1f\n", measure(fma256, 8, threads));
  const long n = 16L << 20; /* 64 MiB per array */
  float *a = aligned_alloc(64, n * 4), *b = aligned_alloc(64, n * 4), *c = aligned_alloc(64, n * 4);
#pragma omp parallel for num_threads(threads)
  for (long i = 0; i < n; ++i) {
    a[i] = 0;
    b[i] = 1;
    c[i] = 2;
  }
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    double start = omp_get_wtime();
#pragma omp parallel for num_threads(threads)
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + 3.0f * c[i];
    double gbs = 3.0 * n * 4 / (omp_get_wtime() - start) / 1e9;
    if (gbs > best)
      best = gbs;
  }
  printf("triad_gbs %.1f\n", best);
  free(a);
  free(b);
  free(c);
  return a == b;
}
