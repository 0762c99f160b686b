/*===- onednn_primitives.c - each kind's oneDNN primitive -----------------===*
 *
 * Creates the oneDNN primitive of a library call for one batch (matmul:
 * one set of operand dims): convolutions, matmuls, pools and concats, with
 * their post-ops, the reorders between the operands' layouts and the
 * primitive's, and constant weights packed once per layout. onednn.c keeps
 * the primitives per call and runs them.
 *
 *===----------------------------------------------------------------------===*/

#include "onednn_state.h"

#include <stdlib.h>
#include <string.h>

static int ensure_staging(kiln_library_state *state, int which, size_t bytes) {
  return kiln_ensure_buffer(&state->staging[which], &state->staging_bytes[which], bytes);
}

/* The primitive descriptor's scratchpad: a memory object bound at every
 * run to the session's one scratchpad, grown to fit. */
static int make_scratchpad(kiln_library_state *state, variant *v,
                           const_dnnl_primitive_desc_t pd) {
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  size_t bytes = md ? dnnl_memory_desc_get_size(md) : 0;
  if (!bytes)
    return 0;
  return kiln_ensure_buffer(&state->scratch, &state->scratch_bytes, bytes) ||
         dnnl_memory_create(&v->scratchpad, md, state->engine, DNNL_MEMORY_NONE);
}

/* When finish_primitive takes its `fallback` operation instead of `op`. */
typedef enum {
  /* `op` has only a reference kernel and `fallback` has a better one. */
  FALLBACK_IF_REFERENCE,
  /* oneDNN runs `op` with its gemm-based kernel (no brgemm for the host). */
  FALLBACK_IF_GEMM,
} fallback_rule;

static int finish_primitive(kiln_library_state *state, prepared_call *c, variant *v,
                            const_dnnl_op_desc_t preferred, const_dnnl_op_desc_t op,
                            const_dnnl_op_desc_t fallback, fallback_rule rule,
                            const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *w_md,
                            const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *bias_md);

/* Prepacked weights: their bytes are laid out as the descriptor says,
 * not as `plain` (which must have the same dims). */
static int use_weights_layout(const call_view *d, dnnl_memory_desc_t *plain) {
  if (!d->weights_layout)
    return 0;
  const dnnl_memory_desc_t *layout = d->weights_layout;
  if (layout->ndims != plain->ndims ||
      memcmp(layout->dims, plain->dims, sizeof(plain->dims[0]) * (size_t)plain->ndims) != 0)
    return 1;
  *plain = *layout;
  return 0;
}

/* Whether dims [N,C,H,W] have H and W 1. */
static int is_point(const int64_t *dims) {
  return dims[2] == 1 && dims[3] == 1;
}

/* oneDNN's tag of a 4-d activation that is channels-last or not. */
static dnnl_format_tag_t tag_of(int channels_last) {
  return channels_last ? dnnl_nhwc : dnnl_nchw;
}

/* Whether the convolution with output dims `out` may run by Winograd's
 * algorithm: 3x3, stride 1, not dilated, not grouped, at least 64 input
 * channels and at most 128 x 128 channels in all, a batch of 2 or more, an
 * output image of at least 14x14, and the session does not refuse it
 * (KILN_ONEDNN_WINOGRAD=0). oneDNN's transformed weights are 16/9 of the
 * plain ones with 4x4 tiles, 36/9 with the 6x6 tiles it takes at larger
 * batches, and its scratchpad grows with the channels: 256 x 256 channels at
 * batch 8 hold 9 + 24 MiB, 512 x 512 36 + 46 MiB (resnet50 at batch 8
 * without the limit: 10% faster for 161 MiB more, with it 6% for 50 MiB).
 * With fewer input channels the tiles' transforms outweigh the products
 * (squeezenet1_1's expand convolutions, 16 and 32 channels in, at batch 8:
 * 31.5 -> 33.8 ms). On small images reading the weights costs more than the
 * multiplications saved (resnet50's 7x7 layers at batch 1: 0.97 -> 1.19 ms
 * each). Batch 1 keeps the direct kernel and the weights the compiler
 * prepacked for it (kiln_cpu_prepack_weights prepares batch 1): oneDNN
 * transforms weights only from plain ones, so the session would pack them
 * when it is made (resnet50: +60 ms to the first result) for a run 5%
 * faster. */
static int winograd_fits(const kiln_library_state *state, const call_view *d,
                         const int64_t *out) {
  return !state->no_winograd && d->groups == 1 && d->weight_dims[2] == 3 &&
         d->weight_dims[3] == 3 && d->strides[0] == 1 && d->strides[1] == 1 &&
         d->dilations[0] == 1 && d->dilations[1] == 1 && out[0] >= 2 &&
         out[2] * out[3] >= 14 * 14 && d->weight_dims[1] >= 64 &&
         d->weight_dims[0] * d->weight_dims[1] <= 128 * 128;
}

/* A convolution by `alg` whose activations' layouts oneDNN picks; 0 on
 * success. */
static int free_layout_conv(dnnl_convolution_desc_t *conv, dnnl_alg_kind_t alg,
                            const int64_t *src_dims, const int64_t *dst_dims,
                            const dnnl_memory_desc_t *weights_any,
                            const dnnl_memory_desc_t *bias_md, const int64_t *strides,
                            const int64_t *dilates, const int64_t *pad_l, const int64_t *pad_r) {
  dnnl_memory_desc_t src_any, dst_any;
  return dnnl_memory_desc_init_by_tag(&src_any, 4, src_dims, dnnl_f32, dnnl_format_tag_any) ||
         dnnl_memory_desc_init_by_tag(&dst_any, 4, dst_dims, dnnl_f32, dnnl_format_tag_any) ||
         dnnl_dilated_convolution_forward_desc_init(conv, dnnl_forward_inference, alg, &src_any,
                                                    weights_any, bias_md, &dst_any, strides,
                                                    dilates, pad_l, pad_r);
}

/* Builds the convolution primitive of `c` for input dims `in` and output
 * dims `out` (a run's: the description's dynamic dims known) into `v`. A
 * channels-last operand is bound as it is (the compiler kept it in the
 * layout oneDNN runs in), unless oneDNN has only its reference kernel
 * for it; for a channels-first one oneDNN picks its layout and the operand
 * is reordered to and from it. The weights are always in the layout oneDNN
 * picks, packed once. */
int kiln_onednn_prepare_conv(kiln_library_state *state, prepared_call *c, variant *v,
                             const int64_t *in, const int64_t *out) {
  const call_view *d = &c->desc;
  if (!kiln_call_window_fits(d, in, out))
    return 1;
  dnnl_dims_t src_dims = {in[0], in[1], in[2], in[3]};
  dnnl_dims_t dst_dims = {out[0], out[1], out[2], out[3]};
  dnnl_memory_desc_t src_md, weights_md, dst_md, src_any, weights_any, dst_any;
  int64_t g = d->groups;
  /* An operand of [N,C,1,1] has the same bytes in either layout. */
  int src_last = d->layouts[0] == KILN_LAYOUT_CHANNELS_LAST || is_point(d->input_dims);
  int dst_last = d->layouts[1] == KILN_LAYOUT_CHANNELS_LAST || is_point(d->output_dims);
  /* With one side channels-last, the primitive runs channels-last on both
   * and the other side is reordered straight from or to channels-first:
   * oneDNN 2.6 has no optimised kernel for NHWC on one side and its own
   * choice on the other (the reference kernel, whereupon both sides would
   * be reordered into its blocked layout, two reorders instead of one). */
  dnnl_format_tag_t runs = src_last || dst_last ? dnnl_nhwc : dnnl_format_tag_any;
  if (dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, tag_of(src_last)) ||
      dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, tag_of(dst_last)) ||
      dnnl_memory_desc_init_by_tag(&src_any, 4, src_dims, dnnl_f32, runs) ||
      dnnl_memory_desc_init_by_tag(&dst_any, 4, dst_dims, dnnl_f32, runs))
    return 1;
  if (g == 1) {
    dnnl_dims_t w_dims = {d->weight_dims[0], d->weight_dims[1], d->weight_dims[2], d->weight_dims[3]};
    if (dnnl_memory_desc_init_by_tag(&weights_md, 4, w_dims, dnnl_f32, dnnl_oihw) ||
        dnnl_memory_desc_init_by_tag(&weights_any, 4, w_dims, dnnl_f32, dnnl_format_tag_any))
      return 1;
  } else {
    dnnl_dims_t w_dims = {g, d->weight_dims[0] / g, d->weight_dims[1], d->weight_dims[2],
                          d->weight_dims[3]};
    if (dnnl_memory_desc_init_by_tag(&weights_md, 5, w_dims, dnnl_f32, dnnl_goihw) ||
        dnnl_memory_desc_init_by_tag(&weights_any, 5, w_dims, dnnl_f32, dnnl_format_tag_any))
      return 1;
  }
  dnnl_dims_t strides = {d->strides[0], d->strides[1]};
  dnnl_dims_t dilates = {d->dilations[0] - 1, d->dilations[1] - 1};
  dnnl_dims_t pad_l = {d->pads[0], d->pads[1]};
  dnnl_dims_t pad_r = {d->pads[2], d->pads[3]};
  /* oneDNN wants the high padding that makes its output size match. */
  for (int i = 0; i < 2; ++i) {
    int64_t k = (d->weight_dims[2 + i] - 1) * d->dilations[i] + 1;
    pad_r[i] = (out[2 + i] - 1) * d->strides[i] + k - in[2 + i] - pad_l[i];
  }
  if (use_weights_layout(d, &weights_md))
    return 1;
  dnnl_memory_desc_t bias_md;
  dnnl_dims_t bias_dims = {d->output_dims[1]};
  if (d->has_bias && dnnl_memory_desc_init_by_tag(&bias_md, 1, bias_dims, dnnl_f32, dnnl_a))
    return 1;
  /* `free_layouts`: the same convolution with oneDNN choosing the
   * activations' layouts too, for when it has no fast kernel for the
   * channels-last ones (oneDNN 2.6 on AVX2 runs a stem convolution of 3
   * input channels from NHWC in its reference kernel: 586 ms against 3 ms
   * for resnet18's). */
  dnnl_convolution_desc_t conv, free_layouts;
  if (dnnl_dilated_convolution_forward_desc_init(&conv, dnnl_forward_inference,
                                                 dnnl_convolution_direct, &src_any, &weights_any,
                                                 d->has_bias ? &bias_md : NULL, &dst_any, strides,
                                                 dilates, pad_l, pad_r))
    return 1;
  int has_fallback = src_last || dst_last;
  /* Winograd's algorithm, where oneDNN has it for the host (AVX-512: F(2x2,
   * 3x3) tiles at small batches, F(4x4, 3x3) at larger ones), in oneDNN's
   * blocked layouts: the activations are reordered to and from them. Its
   * error is of the direct kernel's order (docs/Performance.md). */
  dnnl_convolution_desc_t winograd;
  const dnnl_memory_desc_t *bias = d->has_bias ? &bias_md : NULL;
  int by_winograd = winograd_fits(state, d, out);
  if ((by_winograd &&
       free_layout_conv(&winograd, dnnl_convolution_winograd, src_dims, dst_dims, &weights_any,
                        bias, strides, dilates, pad_l, pad_r)) ||
      (has_fallback && free_layout_conv(&free_layouts, dnnl_convolution_direct, src_dims,
                                        dst_dims, &weights_any, bias, strides, dilates, pad_l,
                                        pad_r)))
    return 1;
  if (finish_primitive(state, c, v, by_winograd ? &winograd : NULL, &conv,
                       has_fallback ? &free_layouts : NULL, FALLBACK_IF_REFERENCE, &src_md,
                       &weights_md, &dst_md, bias))
    return 1;
  v->batch = in[0];
  memcpy(v->shape[0], in, 4 * sizeof(int64_t));
  return 0;
}

/* The oneDNN eltwise algorithm of an activation (0 for none). */
static dnnl_alg_kind_t eltwise_of(int32_t activation) {
  switch (activation) {
  case KILN_ACTIVATION_RELU: return dnnl_eltwise_relu;
  case KILN_ACTIVATION_CLIP: return dnnl_eltwise_clip;
  case KILN_ACTIVATION_SIGMOID: return dnnl_eltwise_logistic;
  case KILN_ACTIVATION_TANH: return dnnl_eltwise_tanh;
  case KILN_ACTIVATION_GELU_ERF: return dnnl_eltwise_gelu_erf;
  case KILN_ACTIVATION_GELU_TANH: return dnnl_eltwise_gelu_tanh;
  case KILN_ACTIVATION_SILU: return dnnl_eltwise_swish; /* alpha 1 */
  case KILN_ACTIVATION_HARDSWISH: return dnnl_eltwise_hardswish; /* 1/6, 1/2 */
  case KILN_ACTIVATION_HARDSIGMOID: return dnnl_eltwise_linear; /* then a clip */
  }
  return dnnl_alg_kind_undef;
}

/* The epilogue's post-ops: the residual (a sum with what the output
 * buffer holds) or a scale's bias (a binary addition of `bias_md`, per
 * channel), then the activation. */
static int set_post_ops(dnnl_primitive_attr_t attr, const call_view *d,
                        const dnnl_memory_desc_t *bias_md) {
  int add_bias = d->kind == KILN_LIBRARY_SCALE && d->has_bias;
  if (!d->has_residual && !add_bias && d->activation == KILN_ACTIVATION_NONE)
    return 0;
  dnnl_post_ops_t ops;
  if (dnnl_post_ops_create(&ops))
    return 1;
  int rc = 0;
  if (d->has_residual)
    rc |= dnnl_post_ops_append_sum(ops, 1.0f) != dnnl_success;
  if (add_bias)
    rc |= !bias_md || dnnl_post_ops_append_binary(ops, dnnl_binary_add, bias_md) != dnnl_success;
  if (d->activation != KILN_ACTIVATION_NONE)
    rc |= dnnl_post_ops_append_eltwise(ops, 1.0f, eltwise_of(d->activation), d->alpha,
                                       d->beta) != dnnl_success;
  /* A hard sigmoid is alpha * x + beta, then a clip to [0, 1]. */
  if (d->activation == KILN_ACTIVATION_HARDSIGMOID)
    rc |= dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_clip, 0.0f, 1.0f) != dnnl_success;
  rc |= dnnl_primitive_attr_set_post_ops(attr, ops) != dnnl_success;
  dnnl_post_ops_destroy(ops);
  return rc;
}

/* The call's constant weights packed as `md`: an existing packing of the
 * call in that layout, or a new one. */
static packing *pack_weights(kiln_library_state *state, prepared_call *c, variant *v,
                             const dnnl_memory_desc_t *md) {
  packing *free_slot = NULL;
  for (int i = 0; i < KILN_VARIANTS; ++i) {
    packing *p = &c->packings[i];
    if (p->users && dnnl_memory_desc_equal(&p->md, md)) {
      ++p->users;
      return p;
    }
    if (!p->users && !free_slot)
      free_slot = p;
  }
  /* Each variant holds at most one packing: a slot is always free. */
  if (!free_slot || !(free_slot->data = kiln_aligned_zeroed(dnnl_memory_desc_get_size(md))))
    return NULL;
  free_slot->md = *md;
  void *from = (void *)(uintptr_t)c->desc.weights, *plain = NULL;
  if (v->weights_unpack.primitive) {
    plain = kiln_aligned_zeroed(v->unpacked_bytes);
    if (!plain || kiln_run_reorder(state->stream, &v->weights_unpack, from, plain))
      from = NULL;
    else
      from = plain;
  }
  if (!from || kiln_run_reorder(state->stream, &v->weights_pack, from, free_slot->data) ||
      dnnl_stream_wait(state->stream)) {
    free(plain);
    free(free_slot->data);
    free_slot->data = NULL;
    return NULL;
  }
  free(plain);
  free_slot->users = 1;
  return free_slot;
}

/* Whether oneDNN's name of the kernel that implements `pd` starts with
 * `prefix`. */
static int impl_is(const_dnnl_primitive_desc_t pd, const char *prefix) {
  const char *impl = NULL;
  return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
         impl && strncmp(impl, prefix, strlen(prefix)) == 0;
}

/* Whether oneDNN implements `pd` with a reference (unoptimised) kernel. */
static int is_reference(const_dnnl_primitive_desc_t pd) {
  return impl_is(pd, "ref");
}

/* Creates the primitive of `op` into `v`. The operands' buffers are laid
 * out as `src_md`, `w_md` (NULL: the kind has no weights), `dst_md`;
 * where the primitive chose another layout, reorders to and from it are
 * prepared, and constant weights are packed (once per layout).
 * `preferred` (if given) is taken instead of `op` wherever oneDNN has an
 * optimised kernel for it; `fallback` (if given: the same operation with
 * other layouts left to oneDNN) is taken instead of `op` as `rule` says. */
static int finish_primitive(kiln_library_state *state, prepared_call *c, variant *v,
                            const_dnnl_op_desc_t preferred, const_dnnl_op_desc_t op,
                            const_dnnl_op_desc_t fallback, fallback_rule rule,
                            const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *w_md,
                            const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *bias_md) {
  dnnl_primitive_attr_t attr;
  if (dnnl_primitive_attr_create(&attr))
    return 1;
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  if (set_post_ops(attr, &c->desc, bias_md)) {
    dnnl_primitive_attr_destroy(attr);
    return 1;
  }
  dnnl_primitive_desc_t pd;
  int rc = 1;
  if (preferred && dnnl_primitive_desc_create(&pd, preferred, attr, state->engine, NULL) ==
                       dnnl_success) {
    if (is_reference(pd))
      dnnl_primitive_desc_destroy(pd);
    else
      rc = 0, fallback = NULL;
  }
  if (rc)
    rc = dnnl_primitive_desc_create(&pd, op, attr, state->engine, NULL);
  dnnl_primitive_desc_t other;
  if (!rc && fallback &&
      (rule == FALLBACK_IF_REFERENCE ? is_reference(pd) : impl_is(pd, "gemm")) &&
      dnnl_primitive_desc_create(&other, fallback, attr, state->engine, NULL) == dnnl_success) {
    if (rule == FALLBACK_IF_REFERENCE && is_reference(other)) {
      dnnl_primitive_desc_destroy(other);
    } else {
      dnnl_primitive_desc_destroy(pd);
      pd = other;
    }
  }
  dnnl_primitive_attr_destroy(attr);
  if (rc)
    return 1;
  if (make_scratchpad(state, v, pd)) {
    dnnl_primitive_desc_destroy(pd);
    return 1;
  }
  dnnl_memory_desc_t op_src = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  dnnl_memory_desc_t op_w;
  /* A binary primitive's (a scale's) second source is in the weights'
   * place. */
  if (w_md)
    op_w = *(c->desc.kind == KILN_LIBRARY_SCALE
                 ? dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 1)
                 : dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
  dnnl_memory_desc_t op_dst = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  rc = dnnl_primitive_create(&v->primitive, pd);
  dnnl_primitive_desc_destroy(pd);
  if (rc || dnnl_memory_create(&v->src, &op_src, state->engine, DNNL_MEMORY_NONE) ||
      (w_md && dnnl_memory_create(&v->weights, &op_w, state->engine, DNNL_MEMORY_NONE)) ||
      dnnl_memory_create(&v->dst, &op_dst, state->engine, DNNL_MEMORY_NONE) ||
      (bias_md && dnnl_memory_create(&v->bias, bias_md, state->engine, DNNL_MEMORY_NONE)))
    return 1;
  if (!dnnl_memory_desc_equal(src_md, &op_src) &&
      (kiln_make_reorder(state->engine, &v->src_in, src_md, &op_src) ||
       ensure_staging(state, 0, dnnl_memory_desc_get_size(&op_src))))
    return 1;
  if (!dnnl_memory_desc_equal(dst_md, &op_dst) &&
      (kiln_make_reorder(state->engine, &v->dst_out, &op_dst, dst_md) ||
       (c->desc.has_residual && kiln_make_reorder(state->engine, &v->dst_in, dst_md, &op_dst)) ||
       ensure_staging(state, 1, dnnl_memory_desc_get_size(&op_dst))))
    return 1;
  if (!w_md || dnnl_memory_desc_equal(w_md, &op_w))
    return 0;
  /* Weights in another layout: constant ones are packed now (shared with
   * the call's other primitives that want the same layout), varying ones
   * at every run. oneDNN reorders into Winograd's layout only from plain
   * weights: prepacked ones go through their plain (row-major) layout. */
  if (kiln_make_reorder(state->engine, &v->weights_pack, w_md, &op_w)) {
    static const dnnl_format_tag_t row_major[] = {dnnl_format_tag_undef, dnnl_a, dnnl_ab,
                                                  dnnl_abc, dnnl_abcd, dnnl_abcde};
    dnnl_memory_desc_t plain;
    if (!c->desc.weights_layout || w_md->ndims < 1 || w_md->ndims > 5 ||
        dnnl_memory_desc_init_by_tag(&plain, w_md->ndims, w_md->dims, dnnl_f32,
                                     row_major[w_md->ndims]) ||
        kiln_make_reorder(state->engine, &v->weights_unpack, w_md, &plain) ||
        kiln_make_reorder(state->engine, &v->weights_pack, &plain, &op_w))
      return 1;
    v->unpacked_bytes = dnnl_memory_desc_get_size(&plain);
  }
  if (c->desc.weights)
    return !(v->pack = pack_weights(state, c, v, &op_w));
  return !(v->run_weights = kiln_aligned_zeroed(dnnl_memory_desc_get_size(&op_w)));
}

/* Memory descriptor of `dims` padded with leading 1s to `rank`: row-major,
 * or with `transposed` the buffer holds it with its last two dims swapped
 * (row-major in those), as a matmul reads a transpose's input. */
static int strided_md(dnnl_memory_desc_t *md, const int64_t *dims, int dims_rank, int rank,
                      int transposed) {
  dnnl_dims_t full = {0};
  for (int d = 0; d < rank; ++d)
    full[d] = d < rank - dims_rank ? 1 : dims[d - (rank - dims_rank)];
  static const dnnl_format_tag_t tags[] = {dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc,
                                           dnnl_abcd};
  static const dnnl_format_tag_t swapped[] = {dnnl_format_tag_undef, dnnl_a, dnnl_ba, dnnl_acb,
                                              dnnl_abdc};
  return dnnl_memory_desc_init_by_tag(md, rank, full, dnnl_f32,
                                      transposed ? swapped[rank] : tags[rank]) != dnnl_success;
}

/* Row-major memory descriptor of `dims` padded with leading 1s to `rank`. */
static int plain_md(dnnl_memory_desc_t *md, const int64_t *dims, int dims_rank, int rank) {
  return strided_md(md, dims, dims_rank, rank, 0);
}

/* Builds the matmul primitive of `c` into `v` for operand dims `lhs`,
 * `rhs` (the rhs is a constant or, in attention, an activation) and
 * `out`: the buffers' dims (an operand read transposed has its last two
 * swapped). */
int kiln_onednn_prepare_matmul(kiln_library_state *state, prepared_call *c, variant *v,
                          const int64_t *lhs, const int64_t *rhs, const int64_t *out) {
  const call_view *d = &c->desc;
  for (int i = 0; i < d->input_rank; ++i)
    v->shape[0][i] = lhs[i];
  for (int i = 0; i < d->weight_rank; ++i)
    v->shape[1][i] = rhs[i];
  /* The operands' logical dims. */
  int64_t logical[2][KILN_MAX_RANK];
  const int64_t *given[2] = {lhs, rhs};
  int ranks[2] = {d->input_rank, d->weight_rank};
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < ranks[k]; ++i)
      logical[k][i] = given[k][i];
    if (d->transposes[k]) {
      logical[k][ranks[k] - 1] = given[k][ranks[k] - 2];
      logical[k][ranks[k] - 2] = given[k][ranks[k] - 1];
    }
  }
  lhs = logical[0];
  rhs = logical[1];
  /* A rhs without batch dims (a linear layer's weights) is shared by
   * every row of the lhs: the lhs's leading dims fold into M, one GEMM
   * rather than a batch of matrix-vector products (attention's
   * [seq, batch, d] activations have M = 1); a transposed lhs's rows are
   * not contiguous, so it does not fold. */
  int rank = d->rank;
  int64_t folded_lhs[2], folded_rhs[2], folded_out[2];
  int rhs_batched = 0;
  for (int i = 0; i < d->weight_rank - 2; ++i)
    rhs_batched |= rhs[i] != 1;
  if (rank > 2 && !rhs_batched && !d->transposes[0]) {
    folded_lhs[0] = 1;
    for (int i = 0; i < d->input_rank - 1; ++i)
      folded_lhs[0] *= lhs[i];
    folded_lhs[1] = lhs[d->input_rank - 1];
    folded_rhs[0] = rhs[d->weight_rank - 2];
    folded_rhs[1] = rhs[d->weight_rank - 1];
    folded_out[0] = folded_lhs[0];
    folded_out[1] = out[rank - 1];
    lhs = folded_lhs;
    rhs = folded_rhs;
    out = folded_out;
    rank = 2;
  }
  int lhs_rank = rank == 2 ? 2 : d->input_rank, rhs_rank = rank == 2 ? 2 : d->weight_rank;
  dnnl_memory_desc_t src_md, w_md, dst_md;
  if (strided_md(&src_md, lhs, lhs_rank, rank, d->transposes[0]) ||
      strided_md(&w_md, rhs, rhs_rank, rank, d->transposes[1]) ||
      plain_md(&dst_md, out, rank, rank))
    return 1;
  /* The bias broadcasts over every dim but the last. */
  dnnl_memory_desc_t bias_md;
  int64_t bias_dims[1] = {d->output_dims[d->rank - 1]};
  if (d->has_bias && plain_md(&bias_md, bias_dims, 1, rank))
    return 1;
  /* Constant weights in the layout oneDNN picks, packed once: with
   * AVX-512, brgemm's blocked layout (BA16a64b), which it runs as fast as
   * column by column for 128 rows and faster for a few (2 AVX-512
   * threads: 1x784 by 784x256 4.9 against 17.4 us, 1x1280 by 1280x1000
   * 64 against 128 us: brgemm copies a plain matrix into its blocks on
   * every run). oneDNN 2.6's gemm:jit, its only f32 matmul without
   * AVX-512, picks the row-major [K,N] and runs a matrix [K,N] stored
   * column by column (ba: each output column's K values contiguous)
   * faster (128x768 by 768x3072 on 2 AVX2 threads: 3.4 against 7.0 ms;
   * 128x3072 by 3072x768: 3.55 against 3.85), so for it `by_column`. */
  dnnl_memory_desc_t w_any = w_md, w_by_column = w_md;
  if (d->weights &&
      (dnnl_memory_desc_init_by_tag(&w_any, rank, w_md.dims, dnnl_f32, dnnl_format_tag_any) ||
       (rank == 2 &&
        dnnl_memory_desc_init_by_tag(&w_by_column, rank, w_md.dims, dnnl_f32, dnnl_ba))))
    return 1;
  if (use_weights_layout(d, &w_md))
    return 1;
  dnnl_matmul_desc_t matmul, by_column;
  const dnnl_memory_desc_t *bias = d->has_bias ? &bias_md : NULL;
  int has_fallback = d->weights && rank == 2;
  if (dnnl_matmul_desc_init(&matmul, &src_md, &w_any, bias, &dst_md) ||
      (has_fallback && dnnl_matmul_desc_init(&by_column, &src_md, &w_by_column, bias, &dst_md)))
    return 1;
  if (finish_primitive(state, c, v, NULL, &matmul, has_fallback ? &by_column : NULL,
                       FALLBACK_IF_GEMM, &src_md, &w_md, &dst_md, bias))
    return 1;
  v->batch = 0;
  return 0;
}

/* Builds the pooling primitive of `c` for input dims `in` and output dims
 * `out` into `v`, in the layout of its input; an output in another layout
 * is reordered from staging. */
int kiln_onednn_prepare_pool(kiln_library_state *state, prepared_call *c, variant *v,
                             const int64_t *in, const int64_t *out) {
  const call_view *d = &c->desc;
  if (!kiln_call_window_fits(d, in, out))
    return 1;
  dnnl_dims_t src_dims = {in[0], in[1], in[2], in[3]};
  dnnl_dims_t dst_dims = {out[0], out[1], out[2], out[3]};
  dnnl_format_tag_t src_tag = tag_of(d->layouts[0] == KILN_LAYOUT_CHANNELS_LAST);
  dnnl_format_tag_t dst_tag = tag_of(d->layouts[1] == KILN_LAYOUT_CHANNELS_LAST);
  /* A global pool's [N,C,1,1] output has the same bytes in either layout. */
  if (is_point(d->output_dims))
    dst_tag = src_tag;
  dnnl_memory_desc_t src_md, dst_md, op_dst;
  if (dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, src_tag) ||
      dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, dst_tag) ||
      dnnl_memory_desc_init_by_tag(&op_dst, 4, dst_dims, dnnl_f32, src_tag))
    return 1;
  dnnl_dims_t strides = {d->strides[0], d->strides[1]};
  int64_t window[2];
  kiln_pool_kernel(d, in, window);
  dnnl_dims_t kernel = {window[0], window[1]};
  dnnl_dims_t pad_l = {d->pads[0], d->pads[1]}, pad_r;
  /* The high padding that gives the output's size (ceil_mode included). */
  for (int i = 0; i < 2; ++i)
    pad_r[i] = (out[2 + i] - 1) * d->strides[i] + window[i] - in[2 + i] - pad_l[i];
  static const dnnl_alg_kind_t algorithms[] = {dnnl_pooling_max, dnnl_pooling_avg_include_padding,
                                               dnnl_pooling_avg_exclude_padding};
  dnnl_pooling_desc_t pool;
  if (dnnl_pooling_forward_desc_init(&pool, dnnl_forward_inference, algorithms[d->algorithm],
                                     &src_md, &op_dst, strides, kernel, pad_l, pad_r) ||
      finish_primitive(state, c, v, NULL, &pool, NULL, FALLBACK_IF_REFERENCE, &src_md, NULL,
                       &dst_md, NULL))
    return 1;
  v->batch = in[0];
  memcpy(v->shape[0], in, 4 * sizeof(int64_t));
  return 0;
}

/* Builds the scale of `c` (oneDNN's binary multiplication, the scale
 * broadcast over H and W; then the bias, a binary addition per channel,
 * and the activation as post-ops) for input dims `in` and a scale of
 * batch `scale_batch` into `v`, in the layout of its input; an output in
 * another layout is reordered from staging. */
int kiln_onednn_prepare_scale(kiln_library_state *state, prepared_call *c, variant *v,
                              const int64_t *in, int64_t scale_batch) {
  const call_view *d = &c->desc;
  dnnl_dims_t dims = {in[0], d->input_dims[1], in[2], in[3]};
  dnnl_dims_t scale_dims = {scale_batch, d->input_dims[1], 1, 1};
  dnnl_dims_t bias_dims = {1, d->input_dims[1], 1, 1};
  dnnl_format_tag_t src_tag = tag_of(d->layouts[0] == KILN_LAYOUT_CHANNELS_LAST);
  dnnl_format_tag_t dst_tag = tag_of(d->layouts[1] == KILN_LAYOUT_CHANNELS_LAST);
  dnnl_memory_desc_t src_md, scale_md, dst_md, op_dst, bias_md;
  dnnl_binary_desc_t binary;
  if (dnnl_memory_desc_init_by_tag(&src_md, 4, dims, dnnl_f32, src_tag) ||
      dnnl_memory_desc_init_by_tag(&scale_md, 4, scale_dims, dnnl_f32, dnnl_nchw) ||
      dnnl_memory_desc_init_by_tag(&dst_md, 4, dims, dnnl_f32, dst_tag) ||
      dnnl_memory_desc_init_by_tag(&op_dst, 4, dims, dnnl_f32, src_tag) ||
      (d->has_bias &&
       dnnl_memory_desc_init_by_tag(&bias_md, 4, bias_dims, dnnl_f32, dnnl_nchw)) ||
      dnnl_binary_desc_init(&binary, dnnl_binary_mul, &src_md, &scale_md, &op_dst) ||
      finish_primitive(state, c, v, NULL, &binary, NULL, FALLBACK_IF_REFERENCE, &src_md, &scale_md,
                       &dst_md, d->has_bias ? &bias_md : NULL))
    return 1;
  v->batch = in[0];
  memcpy(v->shape[0], in, 4 * sizeof(int64_t));
  v->shape[1][0] = scale_batch;
  return 0;
}

/* Builds the concat primitive of `c` for output dims `out` into `v`:
 * each input and the output in its own layout (oneDNN copies
 * channels-last inputs into a channels-last output as contiguous runs). */
int kiln_onednn_prepare_concat(kiln_library_state *state, prepared_call *c, variant *v,
                               const int64_t *out) {
  const call_view *d = &c->desc;
  int32_t n = d->num_inputs;
  dnnl_memory_desc_t mds[KILN_LIBRARY_MAX_CONCAT_INPUTS + 1];
  if (!(v->sources = calloc((size_t)n, sizeof(dnnl_memory_t))))
    return 1;
  for (int32_t k = 0; k <= n; ++k) {
    const int64_t *dims = d->concat_dims[k];
    dnnl_dims_t full = {out[0], dims[1], out[2], out[3]};
    int last = d->concat_layouts && d->concat_layouts[k] == KILN_LAYOUT_CHANNELS_LAST;
    if (dnnl_memory_desc_init_by_tag(&mds[k], 4, full, dnnl_f32, tag_of(last)))
      return 1;
  }
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  int failed = dnnl_primitive_attr_create(&attr) ||
               dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) ||
               dnnl_concat_primitive_desc_create(&pd, &mds[n], n, 1, mds, attr, state->engine);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  failed = failed || make_scratchpad(state, v, pd) || dnnl_primitive_create(&v->primitive, pd) ||
           dnnl_memory_create(&v->dst, &mds[n], state->engine, DNNL_MEMORY_NONE);
  for (int32_t k = 0; k < n && !failed; ++k)
    failed = dnnl_memory_create(&v->sources[k], &mds[k], state->engine, DNNL_MEMORY_NONE) !=
             dnnl_success;
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (failed)
    return 1;
  v->batch = out[0];
  memcpy(v->shape[0], out, 4 * sizeof(int64_t));
  return 0;
}
