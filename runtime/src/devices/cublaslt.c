/*===- cublaslt.c - a CUDA session's matmul calls in cuBLASLt ----------------===*
 *
 * Row-major C = A . B (A [M, K], B [K, N]) is, read column-major, C^T =
 * B^T . A^T: cuBLASLt's "A" is Kiln's rhs (N x K, leading dim N), its "B"
 * Kiln's lhs (K x M, leading dim K) and D is N x M (leading dim N); the
 * bias (one value per N) is then cuBLASLt's per-row bias, and a residual
 * is C = D with beta = 1. An lhs with leading dims over a matrix rhs folds
 * them into M; an rhs with the same batch dims is a strided batch.
 *
 * cuBLASLt's heuristic takes every matrix to be 256-byte aligned unless
 * told otherwise, and the bias as aligned as the pointer in the descriptor
 * when it is asked; Kiln's buffers are 64-byte aligned (the arena, the
 * pool). A plan is therefore made for the alignment of the pointers of the
 * call it first serves, and serves the calls whose pointers are as aligned
 * or more; a call with less aligned ones gets another.
 *
 *===----------------------------------------------------------------------===*/
#include "cublaslt.h"
#include "cublaslt_api.h"
#include "vendor_load.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
  pthread_once_t once;
  int ready;
  char error[512];
  kiln_cublaslt_api api;
} lib = {PTHREAD_ONCE_INIT};

static void load_library(void) {
  static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  static const char *const symbols[] = {
#define KILN_CUBLASLT_NAME(name, parameters) #name,
      KILN_CUBLASLT_ENTRY_POINTS(KILN_CUBLASLT_NAME)
#undef KILN_CUBLASLT_NAME
  };
  const char *file = NULL;
  void *handle = kiln_vendor_open(
      "cuBLASLt", "KILN_CUBLASLT_LIBRARY", names, sizeof names / sizeof *names,
      "the model's matmuls run in it (install cuBLAS, or compile with --no-libraries)", &file,
      lib.error, sizeof lib.error);
  if (handle && kiln_vendor_resolve(handle, "cuBLASLt", file, symbols, &lib.api,
                                    sizeof symbols / sizeof *symbols, lib.error,
                                    sizeof lib.error) == 0)
    lib.ready = 1;
}

/* Whether call `call` reads its lhs (operand 0) or rhs (1) transposed: the
 * buffer holds the operand's last two dims swapped (its `transposes`). */
static int transposed(const kiln_library_call *call, int operand) {
  return call->num_params == 2 && call->params[operand] != 0;
}

kiln_status kiln_cublaslt_check(const kiln_model_v1 *abi, const char *what) {
  int any = 0;
  for (uint32_t i = 0; i < abi->num_library_calls; ++i) {
    const kiln_library_call *call = &abi->library_calls[i];
    if (call->kind != KILN_LIBRARY_MATMUL)
      continue; /* cudnn.c's */
    any = 1;
    /* lhs, rhs, output (the bias is passed after them, not counted); no
     * parameters, or whether lhs and rhs are read transposed (0 or 1). */
    if (call->num_operands != 3 || (call->num_params != 0 && call->num_params != 2) ||
        !call->operand_ranks || !call->operand_dims ||
        (call->num_params == 2 && (!call->params || (uint64_t)call->params[0] > 1 ||
                                   (uint64_t)call->params[1] > 1)))
      return kiln_fail(KILN_ERROR_LOAD,
                       "%s: library call %u is not a matmul this runtime's CUDA device runs", what,
                       i);
    int32_t rank = call->operand_ranks[0], rhs = call->operand_ranks[1];
    if (rank < 2 || rank > 4 || call->operand_ranks[2] != rank || (rhs != 2 && rhs != rank))
      return kiln_fail(KILN_ERROR_LOAD, "%s: library call %u has operands of ranks %d, %d, %d",
                       what, i, rank, rhs, call->operand_ranks[2]);
    if (transposed(call, 0) && rank > 2 && rhs == 2)
      return kiln_fail(KILN_ERROR_LOAD,
                       "%s: library call %u reads a batched lhs transposed over a matrix", what,
                       i);
    int32_t act = call->epilogue.activation;
    if (act != KILN_ACTIVATION_NONE && act != KILN_ACTIVATION_RELU &&
        act != KILN_ACTIVATION_GELU_TANH)
      return kiln_fail(KILN_ERROR_LOAD, "%s: library call %u has an epilogue cuBLASLt lacks",
                       what, i);
  }
  if (!any)
    return KILN_OK;
  pthread_once(&lib.once, load_library);
  if (!lib.ready)
    return kiln_fail(KILN_ERROR_LOAD, "%s: %s", what, lib.error);
  return KILN_OK;
}

#define KILN_CUBLASLT_PLANS 8

/* The pointers' alignments a plan was made for: cuBLASLt's A, B, C (= D)
 * and the bias, in bytes up to 256. */
typedef struct alignments {
  uint32_t a, b, c, bias;
} alignments;

typedef struct plan {
  int used;
  uint64_t m, batch, last_use;
  alignments align;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, d;
  cublasLtMatmulAlgo_t algo;
} plan;

struct kiln_cublaslt {
  const kiln_model_v1 *abi;
  cublasLtHandle_t handle;
  cublasLtMatmulPreference_t preference;
  void *workspace;
  size_t workspace_bytes;
  plan (*plans)[KILN_CUBLASLT_PLANS];
  uint64_t clock;
};

static void free_plan(plan *p) {
  if (p->desc)
    lib.api.cublasLtMatmulDescDestroy(p->desc);
  if (p->a)
    lib.api.cublasLtMatrixLayoutDestroy(p->a);
  if (p->b)
    lib.api.cublasLtMatrixLayoutDestroy(p->b);
  if (p->d)
    lib.api.cublasLtMatrixLayoutDestroy(p->d);
  memset(p, 0, sizeof *p);
}

void kiln_cublaslt_free(kiln_cublaslt *blas) {
  if (!blas)
    return;
  for (uint32_t i = 0; blas->plans && i < blas->abi->num_library_calls; ++i)
    for (int k = 0; k < KILN_CUBLASLT_PLANS; ++k)
      free_plan(&blas->plans[i][k]);
  if (blas->preference)
    lib.api.cublasLtMatmulPreferenceDestroy(blas->preference);
  if (blas->handle)
    lib.api.cublasLtDestroy(blas->handle);
  free(blas->plans);
  free(blas);
}

static kiln_status prepare(kiln_cublaslt *blas);

kiln_status kiln_cublaslt_create(const kiln_model_v1 *abi, void *workspace,
                                 size_t workspace_bytes, kiln_cublaslt **out) {
  *out = NULL;
  int any = 0;
  for (uint32_t i = 0; i < abi->num_library_calls; ++i)
    any |= abi->library_calls[i].kind == KILN_LIBRARY_MATMUL;
  if (!any)
    return KILN_OK; /* no matmul call: no state */
  kiln_cublaslt *blas = calloc(1, sizeof *blas);
  if (!blas)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  blas->abi = abi;
  blas->workspace = workspace;
  blas->workspace_bytes = workspace_bytes;
  blas->plans = calloc(abi->num_library_calls + 1, sizeof *blas->plans);
  uint64_t max_bytes = workspace_bytes;
  if (!blas->plans || lib.api.cublasLtCreate(&blas->handle) != KILN_CUBLAS_SUCCESS ||
      lib.api.cublasLtMatmulPreferenceCreate(&blas->preference) != KILN_CUBLAS_SUCCESS ||
      lib.api.cublasLtMatmulPreferenceSetAttribute(blas->preference,
                                                   KILN_CUBLASLT_PREF_MAX_WORKSPACE_BYTES,
                                                   &max_bytes, sizeof max_bytes) !=
          KILN_CUBLAS_SUCCESS) {
    kiln_cublaslt_free(blas);
    return kiln_fail(KILN_ERROR_LOAD, "cuBLASLt cannot be initialised");
  }
  kiln_status prepared = prepare(blas);
  if (prepared != KILN_OK) {
    kiln_cublaslt_free(blas);
    return prepared;
  }
  *out = blas;
  return KILN_OK;
}

/* A column-major rows x cols float matrix, `batch` of them `stride` apart. */
static int make_layout(cublasLtMatrixLayout_t *layout, uint64_t rows, uint64_t cols,
                       uint64_t batch, int64_t stride) {
  if (lib.api.cublasLtMatrixLayoutCreate(layout, KILN_CUDA_R_32F, rows, cols, (int64_t)rows) !=
      KILN_CUBLAS_SUCCESS)
    return -1;
  if (batch > 1) {
    int32_t count = (int32_t)batch;
    if (lib.api.cublasLtMatrixLayoutSetAttribute(*layout, KILN_CUBLASLT_LAYOUT_BATCH_COUNT,
                                                 &count, sizeof count) != KILN_CUBLAS_SUCCESS ||
        lib.api.cublasLtMatrixLayoutSetAttribute(*layout,
                                                 KILN_CUBLASLT_LAYOUT_STRIDED_BATCH_OFFSET,
                                                 &stride, sizeof stride) != KILN_CUBLAS_SUCCESS)
      return -1;
  }
  return 0;
}

/* Makes `p`'s matmul descriptor (its transposes, epilogue and `bias`,
 * NULL if none) and its layouts of A, B and D (C is D) for call `call` at
 * M `m`, K `k`, N `n` in `batch` batches: NULL, or what cuBLASLt refused
 * (the caller frees `p` either way). */
static const char *describe(plan *p, const kiln_library_call *call, uint64_t m, uint64_t k,
                            uint64_t n, uint64_t batch, const void *bias) {
  int32_t epilogue = 0;
  if (call->epilogue.activation == KILN_ACTIVATION_RELU)
    epilogue |= KILN_CUBLASLT_EPILOGUE_RELU;
  else if (call->epilogue.activation == KILN_ACTIVATION_GELU_TANH)
    epilogue |= KILN_CUBLASLT_EPILOGUE_GELU;
  if (call->epilogue.has_bias)
    epilogue |= KILN_CUBLASLT_EPILOGUE_BIAS;
  if (!epilogue)
    epilogue = KILN_CUBLASLT_EPILOGUE_DEFAULT;
  /* cuBLASLt's A is Kiln's rhs: column-major n x k (row-major k x n), or
   * stored k x n and read transposed; its B is Kiln's lhs: k x m, or
   * stored m x k and read transposed. */
  int ta = transposed(call, 1), tb = transposed(call, 0);
  int32_t op_a = ta ? KILN_CUBLAS_OP_T : KILN_CUBLAS_OP_N;
  int32_t op_b = tb ? KILN_CUBLAS_OP_T : KILN_CUBLAS_OP_N;
  int rhs_batched = call->operand_ranks[1] > 2;
  if (lib.api.cublasLtMatmulDescCreate(&p->desc, KILN_CUBLAS_COMPUTE_32F, KILN_CUDA_R_32F) !=
      KILN_CUBLAS_SUCCESS)
    return "matmul descriptor (float compute and scale)";
  if (lib.api.cublasLtMatmulDescSetAttribute(p->desc, KILN_CUBLASLT_DESC_TRANSA, &op_a,
                                             sizeof op_a) != KILN_CUBLAS_SUCCESS ||
      lib.api.cublasLtMatmulDescSetAttribute(p->desc, KILN_CUBLASLT_DESC_TRANSB, &op_b,
                                             sizeof op_b) != KILN_CUBLAS_SUCCESS)
    return "transpose flags";
  if (lib.api.cublasLtMatmulDescSetAttribute(p->desc, KILN_CUBLASLT_DESC_EPILOGUE, &epilogue,
                                             sizeof epilogue) != KILN_CUBLAS_SUCCESS)
    return "epilogue";
  if (bias && lib.api.cublasLtMatmulDescSetAttribute(p->desc, KILN_CUBLASLT_DESC_BIAS_POINTER,
                                                     &bias, sizeof bias) != KILN_CUBLAS_SUCCESS)
    return "bias pointer";
  if (make_layout(&p->a, ta ? k : n, ta ? n : k, batch, rhs_batched ? (int64_t)(k * n) : 0) !=
          0 ||
      make_layout(&p->b, tb ? m : k, tb ? k : m, batch, (int64_t)(m * k)) != 0 ||
      make_layout(&p->d, n, m, batch, (int64_t)(m * n)) != 0)
    return "matrix layouts (sizes, leading dims, batch count and strides)";
  return NULL;
}

/* The bytes, up to 256, that `p`'s address is a multiple of. */
static uint32_t alignment_of(const void *p) {
  uintptr_t address = (uintptr_t)p;
  uint32_t a = 1;
  while (a < 256 && !(address & a))
    a <<= 1;
  return a;
}

/* Whether a plan made for pointers aligned as `made` serves ones aligned
 * as `call` (as aligned or more: a pool's blocks may be more aligned in
 * one run than in another). */
static int serves(const alignments *made, const alignments *call) {
  return made->a <= call->a && made->b <= call->b && made->c <= call->c &&
         made->bias <= call->bias;
}

/* Tells the heuristic (`preference`) how aligned A, B, C and D are (D is
 * C). */
static int prefer_alignments(cublasLtMatmulPreference_t preference, const alignments *align) {
  const uint32_t values[4] = {align->a, align->b, align->c, align->c};
  for (int i = 0; i < 4; ++i)
    if (lib.api.cublasLtMatmulPreferenceSetAttribute(
            preference, KILN_CUBLASLT_PREF_MIN_ALIGNMENT_A_BYTES + i, &values[i],
            sizeof values[i]) != KILN_CUBLAS_SUCCESS)
      return -1;
  return 0;
}

/* The plan of call `id` for `m` rows in `batch` batches and pointers as
 * aligned as `align`, made if new (`bias`: the call's, NULL if none) but
 * not while `capturing` (a CUDA Graph: that capture fails, and its bucket
 * runs on the stream). */
static plan *plan_for(kiln_cublaslt *blas, uint32_t id, uint64_t m, uint64_t k, uint64_t n,
                      uint64_t batch, const alignments *align, const void *bias,
                      int capturing) {
  plan *plans = blas->plans[id], *slot = &plans[0];
  for (int i = 0; i < KILN_CUBLASLT_PLANS; ++i) {
    if (plans[i].used && plans[i].m == m && plans[i].batch == batch &&
        serves(&plans[i].align, align)) {
      plans[i].last_use = ++blas->clock;
      return &plans[i];
    }
    if (!plans[i].used || (slot->used && plans[i].last_use < slot->last_use))
      slot = &plans[i];
  }
  if (capturing) {
    kiln_fail(KILN_ERROR_RUN,
              "cuBLASLt call %u needs a new plan (M %llu, batch %llu; lhs, rhs, output aligned "
              "to %u, %u, %u bytes), which is not made inside a CUDA Graph capture",
              id, (unsigned long long)m, (unsigned long long)batch, align->b, align->a,
              align->c);
    return NULL;
  }
  free_plan(slot);
  const char *refused = describe(slot, &blas->abi->library_calls[id], m, k, n, batch, bias);
  if (refused) {
    free_plan(slot);
    kiln_fail(KILN_ERROR_RUN, "cuBLASLt refused the %s of call %u", refused, id);
    return NULL;
  }
  cublasLtMatmulHeuristicResult_t result;
  int returned = 0;
  if (prefer_alignments(blas->preference, align) != 0 ||
      lib.api.cublasLtMatmulAlgoGetHeuristic(blas->handle, slot->desc, slot->a, slot->b, slot->d,
                                             slot->d, blas->preference, 1, &result, &returned) !=
          KILN_CUBLAS_SUCCESS ||
      returned < 1 || result.workspaceSize > blas->workspace_bytes) {
    free_plan(slot);
    kiln_fail(KILN_ERROR_RUN,
              "cuBLASLt has no algorithm for call %u (M %llu, K %llu, N %llu, batch %llu; "
              "lhs, rhs, output aligned to %u, %u, %u bytes)",
              id, (unsigned long long)m, (unsigned long long)k, (unsigned long long)n,
              (unsigned long long)batch, align->b, align->a, align->c);
    return NULL;
  }
  slot->algo = result.algo;
  slot->used = 1;
  slot->m = m;
  slot->batch = batch;
  slot->align = *align;
  slot->last_use = ++blas->clock;
  return slot;
}

/* M, K, N and the batch of call `call` at `dims`; -1 for a batched lhs
 * read transposed over a matrix (the compiler makes none). */
static int shape_of(const kiln_library_call *call, const int64_t *const *dims, uint64_t *m,
                    uint64_t *k, uint64_t *n, uint64_t *batch) {
  int32_t rank = call->operand_ranks[0], rhs_rank = call->operand_ranks[1];
  *batch = 1;
  for (int32_t d = 0; d + 2 < rank; ++d)
    *batch *= (uint64_t)dims[0][d];
  /* An operand read transposed holds its last two dims swapped. */
  int tl = transposed(call, 0), tr = transposed(call, 1);
  *m = (uint64_t)dims[0][rank - 2 + tl];
  *k = (uint64_t)dims[0][rank - 1 - tl];
  *n = (uint64_t)dims[1][rhs_rank - 1 - tr];
  if (rhs_rank == 2) { /* leading dims fold into M */
    if (tl && *batch > 1)
      return -1;
    *m *= *batch;
    *batch = 1;
  }
  return 0;
}

int kiln_cublaslt_describe(const kiln_library_call *call, const int64_t *const *dims,
                           uint32_t alignment, size_t workspace_bytes, char *why,
                           size_t why_bytes) {
  uint64_t m, k, n, batch;
  if (call->kind != KILN_LIBRARY_MATMUL || shape_of(call, dims, &m, &k, &n, &batch) != 0) {
    snprintf(why, why_bytes, "not a matmul call cuBLASLt runs");
    return -1;
  }
  plan p;
  memset(&p, 0, sizeof p);
  const void *bias = call->epilogue.has_bias ? (const void *)(uintptr_t)alignment : NULL;
  const char *refused = describe(&p, call, m, k, n, batch, bias);
  cublasLtMatmulPreference_t preference = NULL;
  uint64_t max_bytes = workspace_bytes;
  alignments align = {alignment, alignment, alignment, alignment};
  if (!refused && (lib.api.cublasLtMatmulPreferenceCreate(&preference) != KILN_CUBLAS_SUCCESS ||
                   lib.api.cublasLtMatmulPreferenceSetAttribute(
                       preference, KILN_CUBLASLT_PREF_MAX_WORKSPACE_BYTES, &max_bytes,
                       sizeof max_bytes) != KILN_CUBLAS_SUCCESS))
    refused = "preference (the workspace)";
  if (!refused && prefer_alignments(preference, &align) != 0)
    refused = "preference (the pointers' alignment)";
  if (preference)
    lib.api.cublasLtMatmulPreferenceDestroy(preference);
  free_plan(&p);
  if (refused)
    snprintf(why, why_bytes, "cuBLASLt refused the %s (M %llu, K %llu, N %llu, batch %llu)",
             refused, (unsigned long long)m, (unsigned long long)k, (unsigned long long)n,
             (unsigned long long)batch);
  return refused ? -1 : 0;
}

/* Makes each call's plan, when the session is created, for each batch
 * the artifact declares (1 when it declares none), for pointers of the
 * alignment Kiln's buffers have at least (64 bytes; more aligned ones are
 * served too). A plan for guessed dims (a dynamic dim need not be the
 * batch) that cuBLASLt refuses is left to the first run of its shape. */
static int prepare_call(void *context, uint32_t id, const int64_t *const *dims, int guessed) {
  kiln_cublaslt *blas = context;
  const kiln_library_call *call = &blas->abi->library_calls[id];
  uint64_t m, k, n, batch;
  if (shape_of(call, dims, &m, &k, &n, &batch) != 0 || !m || !n || !batch)
    return 0;
  /* The heuristic reads the bias pointer for its alignment only. */
  const void *bias = call->epilogue.has_bias ? (const void *)(uintptr_t)64 : NULL;
  alignments align = {64, 64, 64, bias ? 64 : 0};
  return !plan_for(blas, id, m, k, n, batch, &align, bias, 0) && !guessed;
}

static kiln_status prepare(kiln_cublaslt *blas) {
  return kiln_prepare_calls(blas->abi, KILN_LIBRARY_MATMUL, prepare_call, blas)
             ? KILN_ERROR_RUN /* its message */
             : KILN_OK;
}

int kiln_cublaslt_execute(kiln_cublaslt *blas, uint32_t id, void *const *operands,
                          const int64_t *const *dims, void *stream, int capturing) {
  if (!blas || id >= blas->abi->num_library_calls ||
      blas->abi->library_calls[id].kind != KILN_LIBRARY_MATMUL)
    return -1;
  const kiln_library_call *call = &blas->abi->library_calls[id];
  uint64_t m, k, n, batch;
  if (shape_of(call, dims, &m, &k, &n, &batch) != 0)
    return -1; /* the compiler reads such an lhs transposed only unbatched */
  if (!m || !n || !batch)
    return 0;
  const void *bias = call->epilogue.has_bias ? operands[3] : NULL;
  /* cuBLASLt's A is Kiln's rhs, its B Kiln's lhs, its C and D the output. */
  alignments align = {alignment_of(operands[1]), alignment_of(operands[0]),
                      alignment_of(operands[2]), bias ? alignment_of(bias) : 0};
  plan *p = plan_for(blas, id, m, k, n, batch, &align, bias, capturing);
  if (!p)
    return -1;
  if (bias) {
    if (lib.api.cublasLtMatmulDescSetAttribute(p->desc, KILN_CUBLASLT_DESC_BIAS_POINTER, &bias,
                                               sizeof bias) != KILN_CUBLAS_SUCCESS) {
      kiln_fail(KILN_ERROR_RUN, "cuBLASLt refused the bias of call %u", id);
      return -1;
    }
  }
  float alpha = 1.0f, beta = call->epilogue.has_residual ? 1.0f : 0.0f;
  /* cuBLASLt's A is Kiln's rhs, its B Kiln's lhs; C is D (the residual). */
  cublasStatus_t status =
      lib.api.cublasLtMatmul(blas->handle, p->desc, &alpha, operands[1], p->a, operands[0], p->b,
                             &beta, operands[2], p->d, operands[2], p->d, &p->algo,
                             blas->workspace, blas->workspace_bytes, stream);
  if (status != KILN_CUBLAS_SUCCESS) {
    kiln_fail(KILN_ERROR_RUN, "cublasLtMatmul failed (status %d) in call %u", status, id);
    return -1;
  }
  return 0;
}
