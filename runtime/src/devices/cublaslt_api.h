/*===- cublaslt_api.h - the cuBLASLt entry points Kiln uses ----------------===*
 *
 * Declared here (not from cublasLt.h) because the library is loaded with
 * dlopen when a CUDA model with matmul calls is loaded; the values are
 * cuBLASLt 13's (cublasLt.h, cublas_api.h, library_types.h).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_CUBLASLT_API_H
#define KILN_RUNTIME_DEVICES_CUBLASLT_API_H

#include <stddef.h>
#include <stdint.h>

typedef int cublasStatus_t;
typedef struct cublasLtContext *cublasLtHandle_t;
typedef struct cublasLtMatmulDescOpaque *cublasLtMatmulDesc_t;
typedef struct cublasLtMatrixLayoutOpaque *cublasLtMatrixLayout_t;
typedef struct cublasLtMatmulPreferenceOpaque *cublasLtMatmulPreference_t;
typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

#define KILN_CUBLAS_SUCCESS 0
#define KILN_CUBLAS_COMPUTE_32F 68 /* no TF32: float accuracy */
#define KILN_CUDA_R_32F 0
#define KILN_CUBLASLT_DESC_TRANSA 3
#define KILN_CUBLASLT_DESC_TRANSB 4
#define KILN_CUBLASLT_DESC_EPILOGUE 7
#define KILN_CUBLASLT_DESC_BIAS_POINTER 8
#define KILN_CUBLASLT_LAYOUT_BATCH_COUNT 5
#define KILN_CUBLASLT_LAYOUT_STRIDED_BATCH_OFFSET 6
#define KILN_CUBLASLT_PREF_MAX_WORKSPACE_BYTES 1
#define KILN_CUBLASLT_PREF_MIN_ALIGNMENT_A_BYTES 5 /* B, C, D: 6, 7, 8 */
#define KILN_CUBLASLT_EPILOGUE_DEFAULT 1
#define KILN_CUBLASLT_EPILOGUE_RELU 2
#define KILN_CUBLASLT_EPILOGUE_BIAS 4
#define KILN_CUBLASLT_EPILOGUE_GELU 32
#define KILN_CUBLAS_OP_N 0
#define KILN_CUBLAS_OP_T 1

#define KILN_CUBLASLT_ENTRY_POINTS(X)                                                          \
  X(cublasLtCreate, (cublasLtHandle_t * handle))                                              \
  X(cublasLtDestroy, (cublasLtHandle_t handle))                                               \
  X(cublasLtMatmulDescCreate, (cublasLtMatmulDesc_t * desc, int compute, int scale))          \
  X(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc))                                   \
  X(cublasLtMatmulDescSetAttribute,                                                           \
    (cublasLtMatmulDesc_t desc, int attribute, const void *value, size_t bytes))              \
  X(cublasLtMatrixLayoutCreate,                                                               \
    (cublasLtMatrixLayout_t * layout, int type, uint64_t rows, uint64_t cols, int64_t ld))    \
  X(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout))                             \
  X(cublasLtMatrixLayoutSetAttribute,                                                         \
    (cublasLtMatrixLayout_t layout, int attribute, const void *value, size_t bytes))          \
  X(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * preference))                \
  X(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t preference))                 \
  X(cublasLtMatmulPreferenceSetAttribute,                                                     \
    (cublasLtMatmulPreference_t preference, int attribute, const void *value, size_t bytes))  \
  X(cublasLtMatmulAlgoGetHeuristic,                                                           \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,            \
     cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,            \
     cublasLtMatmulPreference_t preference, int requested,                                    \
     cublasLtMatmulHeuristicResult_t *results, int *returned))                                \
  X(cublasLtMatmul,                                                                           \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *a,    \
     cublasLtMatrixLayout_t a_layout, const void *b, cublasLtMatrixLayout_t b_layout,         \
     const void *beta, const void *c, cublasLtMatrixLayout_t c_layout, void *d,               \
     cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t *algo, void *workspace,      \
     size_t workspace_bytes, void *stream))

typedef struct kiln_cublaslt_api {
#define KILN_CUBLASLT_FIELD(name, parameters) cublasStatus_t(*name) parameters;
  KILN_CUBLASLT_ENTRY_POINTS(KILN_CUBLASLT_FIELD)
#undef KILN_CUBLASLT_FIELD
} kiln_cublaslt_api;

#endif
