/*===- cublaslt.h - a CUDA session's matmul calls in cuBLASLt ----------------===*
 *
 * The CUDA device's library calls (KILN_LIBRARY_MATMUL, with its bias,
 * ReLU / tanh-GELU and residual epilogue) run in cuBLASLt, loaded with
 * dlopen ($KILN_CUBLASLT_LIBRARY, else libcublasLt.so.13 / .12) when a
 * model with such calls is loaded. Float32 throughout (compute type 32F: no
 * TF32). A call's plans (descriptor, layouts, the heuristic's algorithm)
 * are made when the session is created, one for each batch the artifact
 * declares (1 when it declares none), for pointers 64-byte aligned or
 * more; another shape's, or less aligned pointers', the first time they
 * are seen (never inside a CUDA Graph capture); up to 8 a call are kept.
 * The workspace is the session's, allocated when it is created.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_CUBLASLT_H
#define KILN_RUNTIME_DEVICES_CUBLASLT_H

#include "device.h"

typedef struct kiln_cublaslt kiln_cublaslt;

/* Whether the matmul calls of `abi` are ones cuBLASLt runs and the library
 * loads (only when there are some); KILN_OK or an error naming `what` and
 * the library. */
kiln_status kiln_cublaslt_check(const kiln_model_v1 *abi, const char *what);
/* A session's cuBLASLt state, with `workspace` (device memory) of
 * `workspace_bytes`; NULL state when the model has no matmul call. */
kiln_status kiln_cublaslt_create(const kiln_model_v1 *abi, void *workspace,
                                 size_t workspace_bytes, kiln_cublaslt **out);
void kiln_cublaslt_free(kiln_cublaslt *blas);
/* Makes the descriptors a plan of matmul call `call` at `dims` (dims -1
 * not allowed) has -- the matmul descriptor with its transposes, epilogue
 * and a bias pointer of `alignment`, the layouts, a preference with a
 * workspace of `workspace_bytes` (a session's is KILN_CUDA_WORKSPACE_BYTES,
 * cuda_session.h) and pointers of `alignment` bytes -- with the cuBLASLt
 * that kiln_cublaslt_check loaded, and frees them: 0 when it accepts them all,
 * else -1 and `why`. Needs no handle and no GPU: the real library checks
 * each attribute's size without one (ctest cublaslt-descriptors); the
 * heuristic, which needs a GPU, is not asked. */
int kiln_cublaslt_describe(const kiln_library_call *call, const int64_t *const *dims,
                           uint32_t alignment, size_t workspace_bytes, char *why,
                           size_t why_bytes);
/* Enqueues call `id` on `stream` (a CUstream); 0 on success, else -1 with
 * the thread's last error set. While `capturing` (a CUDA Graph) no plan is
 * made: a call that needs a new one fails. */
int kiln_cublaslt_execute(kiln_cublaslt *blas, uint32_t id, void *const *operands,
                          const int64_t *const *dims, void *stream, int capturing);

#endif
