/*===- onednn_call.h - a library call's description, read and checked ----===*
 *
 * The CPU device reads each kiln_library_call of a descriptor into a
 * call_view (its kind's parameters by name) and checks every field and
 * their consistency (onednn_call.c) before anything uses them: at model
 * load, and again when a session prepares the calls. Nothing here calls
 * oneDNN.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_ONEDNN_CALL_H
#define KILN_RUNTIME_DEVICES_ONEDNN_CALL_H

#include "kiln/kiln.h"

#include <oneapi/dnnl/dnnl_types.h>

/* A call of the descriptor, read in its kind's layout (kiln_model_abi.h). */
typedef struct call_view {
  int32_t kind;
  int32_t rank; /* of the output */
  int32_t input_rank, weight_rank;
  const int64_t *input_dims, *weight_dims, *output_dims; /* -1 dynamic */
  const int64_t *strides, *dilations, *pads;             /* convolution */
  int64_t groups;
  int64_t algorithm;     /* pooling: kiln_library_pooling */
  const int64_t *kernel; /* pooling: the window */
  int64_t layouts[2]; /* convolution: input's and output's, kiln_library_layout */
  /* matmul: whether the lhs's (rhs's) buffer holds it with its last two
   * dims swapped (input_dims / weight_dims are the buffer's) */
  int32_t transposes[2];
  int32_t num_inputs;               /* concat: k inputs, then the output */
  const int64_t *const *concat_dims; /* concat: the k + 1 operands' dims */
  const int64_t *concat_layouts;     /* concat: k + 1 layouts, or NULL */
  int32_t has_bias, has_residual, activation;
  float alpha, beta;
  const void *weights; /* constant weights, or NULL */
  const dnnl_memory_desc_t *weights_layout; /* prepacked: how; NULL: plain */
} call_view;

/* Reads `call` into `view`: 0 when it is a call this device runs, 2 when
 * its weights were prepacked by another oneDNN version, 1 otherwise. */
int kiln_read_call(const kiln_library_call *call, call_view *view);

/* Whether a convolution's or pool's window is consistent with input dims
 * `in` and output dims `out` (those of a run, where the description has
 * spatial dims known only at run time): 1 when it is. */
int kiln_call_window_fits(const call_view *view, const int64_t *in, const int64_t *out);

/* A pool's window for input dims `in`: its own, or where it is -1 (a
 * global pool over a spatial dim known only at run time) the input's. */
void kiln_pool_kernel(const call_view *view, const int64_t *in, int64_t kernel[2]);

/* Whether a concat's operand dims at a run (`dims`: the inputs, then the
 * output) agree: each input has the output's batch and spatial dims and
 * its declared channels, the output its declared channels, every dim
 * within KILN_MAX_CALL_DIM (spatial dims known only at run time are
 * checked here). */
int kiln_concat_dims_agree(const call_view *view, const int64_t *const *dims);

#endif
