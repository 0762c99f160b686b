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
 * Counts the matmuls it ran (dlsym "kiln_cublaslt_stand_in_matmuls").
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
  uint64_t data[8];
} algo;
typedef struct {
  algo a;
  size_t workspace;
  int state;
  float waves;
  int reserved[4];
} heuristic;

static unsigned long long matmuls;
EXPORT unsigned long long kiln_cublaslt_stand_in_matmuls(void) { return matmuls; }

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
EXPORT int cublasLtMatmulPreferenceCreate(void **p) {
  static int the_preference;
  *p = &the_preference;
  return OK;
}
EXPORT int cublasLtMatmulPreferenceDestroy(void *p) { (void)p; return OK; }
EXPORT int cublasLtMatmulPreferenceSetAttribute(void *p, int attribute, const void *value,
                                                size_t bytes) {
  (void)p, (void)value;
  return attribute == 1 && bytes == 8 ? OK : INVALID;
}
/* op(X)'s rows and cols: X's, or swapped when read transposed. */
static uint64_t op_rows(const layout *x, int trans) { return trans ? x->cols : x->rows; }
static uint64_t op_cols(const layout *x, int trans) { return trans ? x->rows : x->cols; }

EXPORT int cublasLtMatmulAlgoGetHeuristic(void *handle, desc *d, layout *a, layout *b,
                                          layout *c, layout *dl, void *preference, int requested,
                                          heuristic *results, int *returned) {
  (void)handle, (void)c, (void)preference;
  *returned = 0;
  /* op(A) and op(B) must chain into D. */
  if (requested < 1 || op_cols(a, d->trans_a) != op_rows(b, d->trans_b) ||
      dl->rows != op_rows(a, d->trans_a) || dl->cols != op_cols(b, d->trans_b))
    return INVALID;
  memset(&results[0], 0, sizeof results[0]);
  *returned = 1;
  return OK;
}
EXPORT int cublasLtMatmul(void *handle, desc *d, const float *alpha, const float *a,
                          layout *al, const float *b, layout *bl, const float *beta,
                          const float *c, layout *cl, float *out, layout *dl, const algo *algo,
                          void *workspace, size_t workspace_bytes, void *stream) {
  (void)handle, (void)algo, (void)workspace, (void)workspace_bytes, (void)stream;
  kiln_stand_in_wait_for_copies();
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
