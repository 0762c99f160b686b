/*===- cudnn.h - a CUDA session's convolution calls in cuDNN -----------------===*
 *
 * The CUDA device's convolution calls (KILN_LIBRARY_CONV: 2-D, float32,
 * channels-first, symmetric pads) run in cuDNN 9's convolution API, loaded
 * with dlopen ($KILN_CUDNN_LIBRARY, else libcudnn.so.9) when a model with
 * such calls is loaded. A plain convolution (a residual: beta = 1) is
 * cudnnConvolutionForward; with a bias, and ReLU or none, it is
 * cudnnConvolutionBiasActivationForward (the residual as z). FMA math (no
 * TF32); the algorithm is the heuristic's first deterministic one that
 * fits the session's workspace (its first of any kind when the artifact
 * was compiled with --allow-nondeterministic), chosen the first time a
 * batch is seen (never inside a capture), kept for 8 batches a call.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_CUDNN_H
#define KILN_RUNTIME_DEVICES_CUDNN_H

#include "device.h"

typedef struct kiln_cudnn kiln_cudnn;

/* Whether the convolution calls of `abi` are ones cuDNN runs and the
 * library loads (only when there are some). */
kiln_status kiln_cudnn_check(const kiln_model_v1 *abi, const char *what);
/* A session's cuDNN state on `stream`, with `workspace` of
 * `workspace_bytes`; NULL state when the model has no convolution call. */
kiln_status kiln_cudnn_create(const kiln_model_v1 *abi, void *stream, void *workspace,
                              size_t workspace_bytes, kiln_cudnn **out);
void kiln_cudnn_free(kiln_cudnn *dnn);
/* Enqueues convolution call `id`; 0 on success, else -1 with the thread's
 * last error set. */
int kiln_cudnn_execute(kiln_cudnn *dnn, uint32_t id, void *const *operands,
                       const int64_t *const *dims);

#endif
