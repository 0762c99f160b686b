/*===- cudnn_graph.h - a convolution call as a cuDNN operation graph ---------===*
 *
 * A KILN_LIBRARY_CONV call and its epilogue as one graph of cuDNN 9's graph
 * API: the convolution (pre- and post-paddings, strides, dilations; groups
 * from the weight's channels), then pointwise operations on virtual
 * tensors, in the epilogue's order: + bias (broadcast over the channels),
 * + the residual (the output buffer's own contents, a second tensor on the
 * same memory), then ReLU, a clip (ReLU with lower and upper clips),
 * sigmoid or tanh. Float32 everywhere. The engine is the first of
 * cuDNN's heuristic (mode A) whose numerical notes allow float accuracy
 * (no tensor cores: that is TF32 on float data; no down-converted inputs),
 * deterministic unless allowed otherwise, that finalises into an
 * execution plan whose workspace fits the session's. cuDNN decides
 * whether an engine runs the fused graph ("where it offers it"); when none
 * does, the caller falls back to the convolution API (cudnn.c).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_CUDNN_GRAPH_H
#define KILN_RUNTIME_DEVICES_CUDNN_GRAPH_H

#include "cudnn_api.h"

#include "kiln/kiln_model_abi.h"

#include <stddef.h>
#include <stdint.h>

#define KILN_CUDNN_GRAPH_MAX_DESCRIPTORS 64

/* The graph's non-virtual tensors, by unique id. */
enum { KILN_CUDNN_UID_X = 1, KILN_CUDNN_UID_W, KILN_CUDNN_UID_Y, KILN_CUDNN_UID_BIAS,
       KILN_CUDNN_UID_RESIDUAL };

typedef struct kiln_cudnn_graph {
  const kiln_cudnn_api *api;
  cudnnBackendDescriptor_t ops[4];
  int num_ops;
  cudnnBackendDescriptor_t plan; /* NULL until kiln_cudnn_graph_plan */
  int64_t workspace_bytes;
  int engine; /* the heuristic's rank of the engine taken */
  int64_t uids[5];
  int operands[5]; /* the call operand each uid's memory is */
  int num_uids;
  cudnnBackendDescriptor_t owned[KILN_CUDNN_GRAPH_MAX_DESCRIPTORS];
  int num_owned;
} kiln_cudnn_graph;

/* Whether the graph takes the epilogue's activation (before any engine
 * is asked). */
int kiln_cudnn_graph_takes(const kiln_library_epilogue *epilogue);

/* Builds and finalises the operations of `call` at `dims` (x, w, y)
 * into a new graph; needs no handle (no GPU). NULL with `why` set when
 * cuDNN refuses a descriptor. */
kiln_cudnn_graph *kiln_cudnn_graph_build(const kiln_cudnn_api *api,
                                         const kiln_library_call *call,
                                         const int64_t *const *dims, char *why, size_t why_bytes);

/* Finalises the operation graph on `handle` and the first engine allowed
 * into an execution plan; 0, else -1 with `why` set. */
int kiln_cudnn_graph_plan(kiln_cudnn_graph *graph, cudnnHandle_t handle, int nondeterministic,
                          size_t workspace_bytes, char *why, size_t why_bytes);

/* Enqueues the plan on the handle's stream; cuDNN's status. */
cudnnStatus_t kiln_cudnn_graph_execute(kiln_cudnn_graph *graph, cudnnHandle_t handle,
                                       void *const *operands, void *workspace);

void kiln_cudnn_graph_free(kiln_cudnn_graph *graph);

#endif
