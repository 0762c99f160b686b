/*===- cublaslt_stand_in.c - cuBLASLt without a GPU, for tests --------------===*
 *
 * The cuBLASLt entry points Kiln's runtime loads (runtime/src/devices/
 * cublaslt_api.h), computing on host memory what cuBLASLt documents:
 * column-major matrices with leading dims, strided batches, D = epilogue(
 * alpha op(A) op(B) + beta C) with op a transpose or not, a per-row bias,
 * ReLU or tanh-GELU. With the CUDA
 * driver stand-in (host memory) a model whose work is all matmul calls
 * runs through the CUDA device and its numbers can be checked, so the
 * runtime's row-major-to-column-major mapping is tested without a GPU.
 * Counts the matmuls it ran (dlsym "kiln_cublaslt_stand_in_matmuls") and
 * the heuristic's queries ("kiln_cublaslt_stand_in_heuristics").
 *
 * Alignment, as cuBLASLt documents it: the heuristic assumes each of A,
 * B, C, D is as aligned as the preference's CUBLASLT_MATMUL_PREF_MIN_
 * ALIGNMENT_*_BYTES say (256 unless set) and the bias as its pointer in
 * the descriptor at that time, and may return an algorithm that needs
 * all of that alignment the leading dims and batch strides allow; the
 * stand-in's always does, and its cublasLtMatmul refuses a pointer less
 * aligned than its algorithm needs (on a GPU: a refusal, a fault or a
 * wrong result).
 *
 *===----------------------------------------------------------------------===*/
#define KILN_STAND_IN_LIBRARY
#include "cuda_stand_in.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define OK 0
#define INVALID 7

typedef struct {
  int epilogue;
  int trans_a, trans_b; /* op(A) = A^T, op(B) = B^T */
  const float *bias;
} desc;
typedef struct {
  uint64_t rows, cols;
  int64_t ld, stride;
  int batch;
} layout;
typedef struct {
  uint32_t align[5]; /* bytes the algorithm needs of A, B, C, D, the bias */
  uint32_t unused[11];
} algo;
typedef struct {
  uint32_t align[4]; /* CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES */
} preference;
typedef struct {
  algo a;
  size_t workspace;
  int state;
  float waves;
  int reserved[4];
} heuristic;

static unsigned long long matmuls, heuristics;
EXPORT unsigned long long kiln_cublaslt_stand_in_matmuls(void) { return matmuls; }
EXPORT unsigned long long kiln_cublaslt_stand_in_heuristics(void) { return heuristics; }

EXPORT int cublasLtCreate(void **handle) {
  static int the_handle;
  *handle = &the_handle;
  return OK;
}
EXPORT int cublasLtDestroy(void *handle) { (void)handle; return OK; }
EXPORT int cublasLtMatmulDescCreate(desc **d, int compute, int scale) {
  if (compute != 68 || scale != 0) /* float compute, float scale: no TF32 */
    return INVALID;
  *d = calloc(1, sizeof **d);
  (*d)->epilogue = 1;
  return OK;
}
EXPORT int cublasLtMatmulDescDestroy(desc *d) { free(d); return OK; }
EXPORT int cublasLtMatmulDescSetAttribute(desc *d, int attribute, const void *value,
                                          size_t bytes) {
  if ((attribute == 3 || attribute == 4) && bytes == 4 &&
      (*(const int *)value == 0 || *(const int *)value == 1)) {
    *(attribute == 3 ? &d->trans_a : &d->trans_b) = *(const int *)value;
    return OK; /* CUBLAS_OP_N or CUBLAS_OP_T */
  }
  if (attribute == 7 && bytes == 4) {
    d->epilogue = *(const int *)value;
    return OK;
  }
  if (attribute == 8 && bytes == sizeof(void *)) {
    memcpy(&d->bias, value, sizeof d->bias);
    return OK;
  }
  return INVALID;
}
EXPORT int cublasLtMatrixLayoutCreate(layout **l, int type, uint64_t rows, uint64_t cols,
                                      int64_t ld) {
  if (type != 0 || ld < (int64_t)rows)
    return INVALID;
  *l = calloc(1, sizeof **l);
  (*l)->rows = rows;
  (*l)->cols = cols;
  (*l)->ld = ld;
  (*l)->batch = 1;
  return OK;
}
EXPORT int cublasLtMatrixLayoutDestroy(layout *l) { free(l); return OK; }
EXPORT int cublasLtMatrixLayoutSetAttribute(layout *l, int attribute, const void *value,
                                            size_t bytes) {
  if (attribute == 5 && bytes == 4)
    l->batch = *(const int *)value;
  else if (attribute == 6 && bytes == 8)
    l->stride = *(const int64_t *)value;
  else
    return INVALID;
  return OK;
}
EXPORT int cublasLtMatmulPreferenceCreate(preference **p) {
  *p = malloc(sizeof **p);
  for (int i = 0; i < 4; ++i)
    (*p)->align[i] = 256;
  return OK;
}
EXPORT int cublasLtMatmulPreferenceDestroy(preference *p) {
  free(p);
  return OK;
}
EXPORT int cublasLtMatmulPreferenceSetAttribute(preference *p, int attribute, const void *value,
                                                size_t bytes) {
  if (attribute == 1 && bytes == 8)
    return OK; /* the workspace */
  if (attribute >= 5 && attribute <= 8 && bytes == 4) {
    uint32_t a = *(const uint32_t *)value;
    if (a == 0 || (a & (a - 1)))
      return INVALID;
    p->align[attribute - 5] = a;
    return OK;
  }
  return INVALID;
}

/* The bytes an address or a byte count is a multiple of, up to 256 (256
 * for 0). */
static uint32_t alignment_of(uint64_t bytes) {
  uint32_t a = 1;
  while (a < 256 && !(bytes & a))
    a <<= 1;
  return a;
}
/* The most an algorithm may need of a matrix the preference says is
 * `assumed` aligned: that, as far as its leading dim and its batch stride
 * keep it. */
static uint32_t needs(uint32_t assumed, const layout *l) {
  uint32_t a = assumed, ld = alignment_of((uint64_t)l->ld * 4);
  uint32_t stride = alignment_of((uint64_t)l->stride * 4);
  if (ld < a)
    a = ld;
  if (l->batch > 1 && stride < a)
    a = stride;
  return a;
}
/* op(X)'s rows and cols: X's, or swapped when read transposed. */
static uint64_t op_rows(const layout *x, int trans) { return trans ? x->cols : x->rows; }
static uint64_t op_cols(const layout *x, int trans) { return trans ? x->rows : x->cols; }

EXPORT int cublasLtMatmulAlgoGetHeuristic(void *handle, desc *d, layout *a, layout *b,
                                          layout *c, layout *dl, const preference *pref,
                                          int requested, heuristic *results, int *returned) {
  (void)handle;
  *returned = 0;
  ++heuristics;
  /* op(A) and op(B) must chain into D. */
  if (requested < 1 || op_cols(a, d->trans_a) != op_rows(b, d->trans_b) ||
      dl->rows != op_rows(a, d->trans_a) || dl->cols != op_cols(b, d->trans_b))
    return INVALID;
  memset(&results[0], 0, sizeof results[0]);
  const layout *ls[4] = {a, b, c, dl};
  for (int i = 0; i < 4; ++i)
    results[0].a.align[i] = needs(pref->align[i], ls[i]);
  results[0].a.align[4] = alignment_of((uintptr_t)d->bias);
  *returned = 1;
  return OK;
}
EXPORT int cublasLtMatmul(void *handle, desc *d, const float *alpha, const float *a,
                          layout *al, const float *b, layout *bl, const float *beta,
                          const float *c, layout *cl, float *out, layout *dl, const algo *algo,
                          void *workspace, size_t workspace_bytes, void *stream) {
  (void)handle, (void)workspace, (void)workspace_bytes, (void)stream;
  kiln_stand_in_wait_for_copies();
  const void *pointers[5] = {a, b, c, out, d->bias};
  for (int i = 0; i < 5; ++i)
    if ((i < 4 || (d->epilogue & 4)) && alignment_of((uintptr_t)pointers[i]) < algo->align[i])
      return INVALID;
  int ta = d->trans_a, tb = d->trans_b;
  if (op_cols(al, ta) != op_rows(bl, tb) || dl->rows != op_rows(al, ta) ||
      dl->cols != op_cols(bl, tb) || cl->rows != dl->rows || dl->batch != bl->batch ||
      al->batch != dl->batch)
    return INVALID;
  int relu = (d->epilogue & 2) != 0, gelu = (d->epilogue & 32) != 0, bias = (d->epilogue & 4) != 0;
  if (bias && !d->bias)
    return INVALID;
  for (int batch = 0; batch < dl->batch; ++batch)
    for (uint64_t col = 0; col < dl->cols; ++col)
      for (uint64_t row = 0; row < dl->rows; ++row) {
        double sum = 0;
        for (uint64_t k = 0; k < op_cols(al, ta); ++k)
          sum += (double)a[batch * al->stride + (ta ? k + row * al->ld : row + k * al->ld)] *
                 b[batch * bl->stride + (tb ? col + k * bl->ld : k + col * bl->ld)];
        double v = *alpha * sum;
        if (*beta != 0)
          v += *beta * c[batch * cl->stride + row + col * cl->ld];
        if (bias)
          v += d->bias[row];
        if (relu && v < 0)
          v = 0;
        if (gelu)
          v = 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        out[batch * dl->stride + row + col * dl->ld] = (float)v;
      }
  ++matmuls;
  return OK;
}
