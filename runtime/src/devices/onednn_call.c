/*===- onednn_call.c - a library call's description, read and checked ----===*
 *
 * See onednn_call.h.
 *
 *===----------------------------------------------------------------------===*/

#include "onednn_call.h"
#include "onednn.h"
#include "device.h"

#include <string.h>

/* The largest dim and element count of a library call's operand: far above
 * real models, far below where oneDNN's size arithmetic would wrap or its
 * preparation would run for hours. */
#define KILN_MAX_CALL_DIM ((int64_t)1 << 31)
#define KILN_MAX_CALL_ELEMENTS ((int64_t)1 << 40)

/* Every operand of `call`: its rank in [1, KILN_MAX_RANK] (exactly `rank`
 * when that is not 0), its dims present, each -1 (dynamic) or in
 * [1, KILN_MAX_CALL_DIM], and at most KILN_MAX_CALL_ELEMENTS elements (a
 * dynamic dim counted as 1). 0 when they are. */
static int check_operands(const kiln_library_call *call, int32_t rank) {
  if (!call->operand_ranks || !call->operand_dims)
    return 1;
  for (int32_t k = 0; k < call->num_operands; ++k) {
    int32_t r = call->operand_ranks[k];
    const int64_t *dims = call->operand_dims[k];
    if (r < 1 || r > KILN_MAX_RANK || (rank && r != rank) || !dims)
      return 1;
    int64_t elements = 1;
    for (int32_t d = 0; d < r; ++d) {
      if (dims[d] != -1 && (dims[d] < 1 || dims[d] > KILN_MAX_CALL_DIM))
        return 1;
      elements *= dims[d] > 0 ? dims[d] : 1;
      if (elements > KILN_MAX_CALL_ELEMENTS)
        return 1;
    }
  }
  return 0;
}

/* Window parameters: each of `n` values in [lo, KILN_MAX_CALL_DIM]. */
static int in_range(const int64_t *values, int n, int64_t lo) {
  for (int i = 0; i < n; ++i)
    if (values[i] < lo || values[i] > KILN_MAX_CALL_DIM)
      return 0;
  return 1;
}

/* A window over two spatial dims (convolution or pool) is consistent with
 * its input and output sizes: sizes of at least 1 (a dim known only at
 * run time, -1 on either side, is checked at each run with the run's
 * sizes: kiln_call_window_fits), and the high padding that
 * gives the output's size (negative when the last stride drops input) is
 * in [-stride, input + extent]; the stored high padding is that one to
 * within a stride (floor or ceil mode), so that no parameter (a dilation
 * of 2^29, say) can grow the window apart from the others. */
static int window_fits(const int64_t *in, const int64_t *out, const int64_t *kernel,
                       const int64_t *strides, const int64_t *dilations, const int64_t *pads) {
  for (int i = 0; i < 2; ++i) {
    if (in[2 + i] == -1 || out[2 + i] == -1)
      continue;
    if (in[2 + i] < 1 || out[2 + i] < 1)
      return 0;
    int64_t extent = (kernel[i] - 1) * (dilations ? dilations[i] : 1) + 1;
    int64_t high = (out[2 + i] - 1) * strides[i] + extent - in[2 + i] - pads[i];
    if (high < -strides[i] || high > in[2 + i] + extent || pads[2 + i] < 0 ||
        pads[2 + i] < high - strides[i] + 1 || pads[2 + i] > high + strides[i] - 1)
      return 0;
  }
  return 1;
}

void kiln_pool_kernel(const call_view *view, const int64_t *in, int64_t kernel[2]) {
  for (int i = 0; i < 2; ++i)
    kernel[i] = view->kernel[i] == -1 ? in[2 + i] : view->kernel[i];
}

int kiln_call_window_fits(const call_view *view, const int64_t *in, const int64_t *out) {
  int pool = view->kind == KILN_LIBRARY_POOL;
  int64_t kernel[2] = {pool ? 0 : view->weight_dims[2], pool ? 0 : view->weight_dims[3]};
  if (pool)
    kiln_pool_kernel(view, in, kernel);
  return in[2] > 0 && in[3] > 0 && out[2] > 0 && out[3] > 0 &&
         in[2] <= KILN_MAX_CALL_DIM && in[3] <= KILN_MAX_CALL_DIM &&
         window_fits(in, out, kernel, view->strides, pool ? NULL : view->dilations, view->pads);
}

/* The input's and output's layouts: the last two of 11 parameters of a
 * convolution or pool, channels-first when the call has 9. */
static int read_layouts(const kiln_library_call *call, call_view *view) {
  for (int k = 0; k < 2; ++k) {
    int64_t layout = call->num_params == 11 ? call->params[9 + k] : KILN_LAYOUT_CHANNELS_FIRST;
    if (layout != KILN_LAYOUT_CHANNELS_FIRST && layout != KILN_LAYOUT_CHANNELS_LAST)
      return 1;
    view->layouts[k] = layout;
  }
  return 0;
}

/* Reads a pooling call (operands input, output) into `view`. */
static int read_pool(const kiln_library_call *call, call_view *view) {
  if (call->num_operands != 2 || check_operands(call, 4) ||
      (call->num_params != 9 && call->num_params != 11) || !call->params)
    return 1;
  view->kind = call->kind;
  view->rank = view->input_rank = 4;
  view->input_dims = call->operand_dims[0];
  view->output_dims = call->operand_dims[1];
  view->algorithm = call->params[0];
  view->kernel = call->params + 1;
  view->strides = call->params + 3;
  view->pads = call->params + 5;
  if (view->algorithm < KILN_POOLING_MAX || view->algorithm > KILN_POOLING_AVERAGE_EXCLUDE_PAD)
    return 1;
  /* Same batch and channels; a window inside the padded input. A window
   * dim of -1 is the input's, known only at run time (a global average
   * pool): stride 1, no padding, an output dim of 1. */
  const int64_t *in = view->input_dims, *out = view->output_dims;
  int64_t kernel[2];
  kiln_pool_kernel(view, in, kernel);
  for (int i = 0; i < 2; ++i)
    if (view->kernel[i] == -1 &&
        (view->algorithm == KILN_POOLING_MAX || in[2 + i] != -1 || out[2 + i] != 1 ||
         view->strides[i] != 1 || view->pads[i] || view->pads[2 + i]))
      return 1;
  if (in[0] != out[0] || in[1] != out[1] ||
      !in_range(view->strides, 2, 1) || !in_range(view->pads, 4, 0) ||
      (kernel[0] != -1 && (!in_range(kernel, 1, 1) || view->pads[0] >= kernel[0])) ||
      (kernel[1] != -1 && (!in_range(kernel + 1, 1, 1) || view->pads[1] >= kernel[1])) ||
      !window_fits(in, out, kernel, view->strides, NULL, view->pads))
    return 1;
  return read_layouts(call, view);
}

/* Reads a concat call (k >= 2 inputs, the output; rank 4, joined along
 * the channels) into `view`: the inputs agree with the output on every
 * dim but the channels, whose sum they are (static; the batch and the
 * spatial dims may be known only at run time). */
static int read_concat(const kiln_library_call *call, call_view *view) {
  int32_t n = call->num_operands;
  if (n < 3 || n > KILN_LIBRARY_MAX_CONCAT_INPUTS + 1 || check_operands(call, 4) ||
      !call->params || (call->num_params != 1 && call->num_params != 1 + n) ||
      call->params[0] != 1)
    return 1;
  const int64_t *out = call->operand_dims[n - 1];
  int64_t channels = 0;
  for (int32_t k = 0; k < n; ++k) {
    const int64_t *dims = call->operand_dims[k];
    if (call->operand_ranks[k] != 4 || !dims)
      return 1;
    /* Static channels; spatial dims known only at run time (-1) are
     * those of every operand, checked at each run
     * (kiln_concat_dims_agree). */
    if (dims[1] < 1)
      return 1;
    if (dims[0] != out[0] || dims[2] != out[2] || dims[3] != out[3])
      return 1;
    if (k < n - 1)
      channels += dims[1];
    if (call->num_params > 1 && call->params[1 + k] != KILN_LAYOUT_CHANNELS_FIRST &&
        call->params[1 + k] != KILN_LAYOUT_CHANNELS_LAST)
      return 1;
  }
  if (channels != out[1])
    return 1;
  view->kind = call->kind;
  view->rank = view->input_rank = 4;
  view->num_inputs = n - 1;
  view->concat_dims = call->operand_dims;
  view->input_dims = call->operand_dims[0];
  view->output_dims = out;
  view->concat_layouts = call->num_params > 1 ? call->params + 1 : NULL;
  return 0;
}

int kiln_concat_dims_agree(const call_view *view, const int64_t *const *dims) {
  const int64_t *out = dims[view->num_inputs];
  if (out[1] != view->output_dims[1])
    return 0;
  for (int d = 0; d < 4; ++d)
    if (out[d] < 0 || out[d] > KILN_MAX_CALL_DIM)
      return 0;
  for (int32_t k = 0; k < view->num_inputs; ++k) {
    const int64_t *in = dims[k];
    if (in[0] != out[0] || in[1] != view->concat_dims[k][1] || in[2] != out[2] ||
        in[3] != out[3])
      return 0;
  }
  return 1;
}

/* Reads a channel scale (operands input, scale, output, then a bias of C
 * values when the epilogue has one; no residual, no constant weights)
 * into `view`: the output is the input's dims, the scale [N or 1,C,1,1]
 * (a dynamic batch of the scale goes with a dynamic one of the input,
 * and is checked at run time); the bias and the activation are post-ops.
 * A batch norm before a convolution is such a call: x * s + t, then its
 * ReLU. */
static int read_scale(const kiln_library_call *call, call_view *view) {
  const kiln_library_epilogue *e = &call->epilogue;
  if (call->num_operands != 3 || check_operands(call, 4) ||
      (call->num_params != 0 && call->num_params != 2) || (call->num_params && !call->params) ||
      call->weights || call->weights_layout || e->has_residual ||
      (e->has_bias != 0 && e->has_bias != 1) || e->activation < KILN_ACTIVATION_NONE ||
      e->activation > KILN_ACTIVATION_HARDSWISH ||
      (e->activation == KILN_ACTIVATION_HARDSWISH && (e->alpha != 1.0f / 6.0f || e->beta != 0.5f)))
    return 1;
  const int64_t *in = call->operand_dims[0], *scale = call->operand_dims[1];
  const int64_t *out = call->operand_dims[2];
  /* Static channels; the batch and the spatial dims may be known only at
   * run time (the input's and the output's, checked at each run). */
  for (int d = 0; d < 4; ++d)
    if (in[d] != out[d] || (d == 1 && in[d] < 1))
      return 1;
  if (scale[1] != in[1] || scale[2] != 1 || scale[3] != 1 ||
      (scale[0] != 1 && scale[0] != in[0]))
    return 1;
  view->kind = call->kind;
  view->rank = view->input_rank = view->weight_rank = 4;
  view->input_dims = in;
  view->weight_dims = scale;
  view->output_dims = out;
  view->has_bias = e->has_bias;
  view->activation = e->activation;
  view->alpha = e->alpha;
  view->beta = e->beta;
  for (int k = 0; k < 2; ++k) {
    int64_t layout = call->num_params ? call->params[k] : KILN_LAYOUT_CHANNELS_FIRST;
    if (layout != KILN_LAYOUT_CHANNELS_FIRST && layout != KILN_LAYOUT_CHANNELS_LAST)
      return 1;
    view->layouts[k] = layout;
  }
  return 0;
}

/* Reads `call` into `view`; 0 when it is a call this device runs. */
int kiln_read_call(const kiln_library_call *call, call_view *view) {
  memset(view, 0, sizeof *view);
  if (call->kind == KILN_LIBRARY_POOL)
    return read_pool(call, view);
  if (call->kind == KILN_LIBRARY_CONCAT)
    return read_concat(call, view);
  if (call->kind == KILN_LIBRARY_SCALE)
    return read_scale(call, view);
  if (call->num_operands != 3 || check_operands(call, 0) || call->num_params < 0 ||
      (call->num_params && !call->params))
    return 1;
  view->kind = call->kind;
  view->input_rank = call->operand_ranks[0];
  view->weight_rank = call->operand_ranks[1];
  view->rank = call->operand_ranks[2];
  view->input_dims = call->operand_dims[0];
  view->weight_dims = call->operand_dims[1];
  view->output_dims = call->operand_dims[2];
  view->has_bias = call->epilogue.has_bias;
  view->has_residual = call->epilogue.has_residual;
  view->activation = call->epilogue.activation;
  view->alpha = call->epilogue.alpha;
  view->beta = call->epilogue.beta;
  view->weights = call->weights;
  if (call->weights_layout) {
    /* Written by the oneDNN the compiler loaded: the same major version
     * has the same descriptor. */
    if (call->weights_layout_bytes != sizeof(dnnl_memory_desc_t) || !call->weights)
      return 2;
    view->weights_layout = call->weights_layout;
  }
  /* oneDNN's hardswish has no parameters: ONNX's alpha 1/6, beta 1/2. */
  if (view->activation == KILN_ACTIVATION_HARDSWISH &&
      (view->alpha != 1.0f / 6.0f || view->beta != 0.5f))
    return 1;
  if (view->activation < KILN_ACTIVATION_NONE || view->activation > KILN_ACTIVATION_HARDSWISH ||
      (view->has_bias != 0 && view->has_bias != 1) ||
      (view->has_residual != 0 && view->has_residual != 1))
    return 1;
  if (call->kind == KILN_LIBRARY_CONV) {
    /* groups, strides[2], dilations[2], pads[4] */
    if (view->rank != 4 || view->input_rank != 4 || view->weight_rank != 4 ||
        (call->num_params != 9 && call->num_params != 11) || !call->params ||
        call->params[0] < 1)
      return 1;
    view->groups = call->params[0];
    view->strides = call->params + 1;
    view->dilations = call->params + 3;
    view->pads = call->params + 5;
    /* Channels split evenly into the groups; the weight's dims agree with
     * the input's and the output's; the window fits. */
    const int64_t *in = view->input_dims, *w = view->weight_dims, *out = view->output_dims;
    int64_t g = view->groups;
    int64_t kernel[2] = {w[2], w[3]};
    if (g > KILN_MAX_CALL_DIM || in[0] != out[0] || in[1] < 1 || w[0] < 1 || w[1] < 1 ||
        in[1] % g != 0 || w[0] % g != 0 || w[1] * g != in[1] || w[0] != out[1] ||
        !in_range(kernel, 2, 1) || !in_range(view->strides, 2, 1) ||
        !in_range(view->dilations, 2, 1) || !in_range(view->pads, 4, 0) ||
        !window_fits(in, out, kernel, view->strides, view->dilations, view->pads))
      return 1;
    return read_layouts(call, view);
  }
  if (call->kind == KILN_LIBRARY_MATMUL) {
    if (!(view->rank >= 2 && view->rank <= 4 && view->input_rank >= 2 && view->weight_rank >= 2 &&
          view->input_rank <= view->rank && view->weight_rank <= view->rank &&
          (call->num_params == 0 || call->num_params == 2)))
      return 1;
    /* Operands read transposed: their buffers' last two dims swapped. */
    int64_t logical[2][KILN_MAX_RANK];
    const int64_t *given[2] = {view->input_dims, view->weight_dims};
    int ranks[2] = {view->input_rank, view->weight_rank};
    for (int k = 0; k < 2; ++k) {
      view->transposes[k] = call->num_params ? (int32_t)call->params[k] : 0;
      if (view->transposes[k] != 0 && view->transposes[k] != 1)
        return 1;
      for (int r = 0; r < ranks[k]; ++r)
        logical[k][r] = given[k][r];
      if (view->transposes[k]) {
        logical[k][ranks[k] - 1] = given[k][ranks[k] - 2];
        logical[k][ranks[k] - 2] = given[k][ranks[k] - 1];
      }
    }
    /* [..,M,K] x [..,K,N] -> [..,M,N], K and N static. */
    const int64_t *lhs = logical[0], *rhs = logical[1], *out = view->output_dims;
    int64_t k = lhs[view->input_rank - 1], n = rhs[view->weight_rank - 1];
    return k < 1 || n < 1 || rhs[view->weight_rank - 2] != k || out[view->rank - 1] != n ||
           out[view->rank - 2] != lhs[view->input_rank - 2];
  }
  return 1;
}

kiln_status kiln_onednn_check_calls(const kiln_model_v1 *abi, const char *what) {
  if (abi->num_library_calls > KILN_MAX_LIBRARY_CALLS)
    return kiln_fail(KILN_ERROR_FORMAT, "%s: %u library calls (at most %u)", what,
                     abi->num_library_calls, (unsigned)KILN_MAX_LIBRARY_CALLS);
  for (uint32_t i = 0; i < abi->num_library_calls; ++i) {
    call_view view;
    int invalid = kiln_read_call(&abi->library_calls[i], &view);
    if (invalid == 2)
      return kiln_fail(KILN_ERROR_FORMAT,
                       "%s: library call %u has weights prepacked by another oneDNN version "
                       "(layout of %u bytes, this oneDNN's is %zu); recompile the model",
                       what, i, abi->library_calls[i].weights_layout_bytes,
                       sizeof(dnnl_memory_desc_t));
    if (invalid)
      return kiln_fail(KILN_ERROR_FORMAT,
                       "%s: library call %u has an invalid description (kind %d)", what, i,
                       abi->library_calls[i].kind);
  }
  return KILN_OK;
}
