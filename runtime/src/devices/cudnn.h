/*===- cudnn.h - a CUDA session's convolution calls in cuDNN -----------------===*
 *
 * The CUDA device's convolution calls (KILN_LIBRARY_CONV: 2-D, float32,
 * channels-first, symmetric pads) run in cuDNN 9, loaded with dlopen
 * ($KILN_CUDNN_LIBRARY, else libcudnn.so.9) when a model with such calls
 * is loaded. First as one fused graph of its graph API (cudnn_graph.h:
 * the convolution, + bias, + residual, then ReLU, a clip, sigmoid or tanh)
 * when an engine of float accuracy runs it; else through its convolution
 * API: cudnnConvolutionForward (a residual: beta = 1) or, with a bias,
 * cudnnConvolutionBiasActivationForward (ReLU or identity; the residual as
 * z), then cudnnActivationForward in place for an activation the fused
 * call lacks (ReLU without a bias, a clip to [0, b], sigmoid, tanh). FMA
 * math (no TF32): graph engines with the tensor-core note are skipped.
 * Deterministic engines and algorithms only unless the artifact was
 * compiled with --allow-nondeterministic; each fits the session's
 * workspace. A call's plans are made when the session is created, one for
 * each batch the artifact declares (1 when it declares none); another
 * batch's the first time it is seen (never inside a capture); 8 batches a
 * call are kept. $KILN_CUDNN_GRAPH=0 skips the graph API.
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
/* Makes the convolution API's descriptors a plan of convolution call
 * `call` at `dims` (no -1) has -- the filter, the convolution (pads,
 * strides, dilations, groups, FMA math), the bias, the activations and
 * the input and output tensors -- with the cuDNN that kiln_cudnn_check
 * loaded, asks cuDNN what output they make, and frees them: 0 when cuDNN
 * accepts them all and its output is the call's, else -1 and `why`. Needs
 * no handle and no GPU (ctest cudnn-graph); a session makes each plan so. */
int kiln_cudnn_describe(const kiln_library_call *call, const int64_t *const *dims, char *why,
                        size_t why_bytes);
/* Enqueues convolution call `id`; 0 on success, else -1 with the thread's
 * last error set. */
int kiln_cudnn_execute(kiln_cudnn *dnn, uint32_t id, void *const *operands,
                       const int64_t *const *dims);
/* How many plans went each way so far, and why the first that left the
 * graph API did (NULL if none did). */
void kiln_cudnn_plans(const kiln_cudnn *dnn, uint32_t *graph_plans, uint32_t *api_plans,
                      const char **fallback_reason);

#endif
