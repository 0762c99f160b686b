/*===- onednn_state.h - the CPU device's oneDNN state and primitives -----===*
 *
 * Shared by onednn.c (the session's state, the primitives kept per call,
 * running a call) and onednn_primitives.c (creating each kind's oneDNN
 * primitive, its reorders and its packed weights).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_ONEDNN_STATE_H
#define KILN_RUNTIME_DEVICES_ONEDNN_STATE_H

#include "onednn.h"
#include "onednn_api.h"
#include "onednn_call.h"
#include "onednn_reorder.h"

/* Constant weights packed into a layout a primitive wants, shared by the
 * call's primitives that want the same layout. */
typedef struct packing {
  dnnl_memory_desc_t md;
  void *data;
  int users; /* variants that run on it; freed at 0 */
} packing;

/* The primitives kept per call (at least KILN_MAX_BATCH_BUCKETS): a run
 * whose batch (convolution and pool: input dims; matmul: operand dims)
 * has one runs it; another is made and replaces the least recently used. */
#define KILN_VARIANTS KILN_MAX_BATCH_BUCKETS

/* One primitive of a call, for one batch (convolution and pool: one
 * input shape; concat: one output shape; matmul: one pair of operand
 * dims), with the memory objects its operands are bound to. */
typedef struct variant {
  int64_t batch; /* the batch it was made for, -1 when unused */
  /* The OpenMP thread count it was made under: oneDNN fixes some
   * primitives' work split then (a session's reduced runs,
   * thread_policy.h, use primitives of their own). */
  int threads;
  /* convolution, pool and scale: [0] the input dims (scale: and [1][0]
   * the scale's batch); concat: [0] the output dims; matmul: the lhs and
   * rhs dims */
  int64_t shape[2][KILN_MAX_RANK];
  uint64_t last_used;
  dnnl_primitive_t primitive;
  dnnl_memory_t src, weights, dst, bias;
  dnnl_memory_t *sources;  /* concat: one per input */
  dnnl_memory_t scratchpad; /* bound to the session's shared scratchpad */
  /* Where the primitive's layout differs from the operand's: the source
   * and destination go through the state's staging buffers; constant
   * weights are read from `pack`, varying ones reordered at every run
   * into `run_weights`. */
  reorder src_in, dst_in, dst_out, weights_pack;
  /* Prepacked weights to plain ones, before `weights_pack`, where oneDNN
   * reorders into the primitive's layout only from plain weights
   * (Winograd's). */
  reorder weights_unpack;
  size_t unpacked_bytes; /* the plain weights' size, with weights_unpack */
  packing *pack;
  void *run_weights;
  /* oneDNN's name of the kernel that runs `primitive`
   * ("brgconv:avx512_core"; "jit_wino_4x3:avx512_core" for Winograd's
   * algorithm, whose weights' packing depends on the batch: they are not
   * prepacked into the artifact), cut to fit. */
  char implementation[KILN_IMPLEMENTATION_CHARS];
} variant;

typedef struct prepared_call {
  call_view desc; /* what the call computes, read from the descriptor */
  variant variants[KILN_VARIANTS];
  packing packings[KILN_VARIANTS];
  variant *last; /* the variant of the call's last run, or NULL */
} prepared_call;

struct kiln_library_state {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  uint32_t num_calls;
  prepared_call *calls;
  uint64_t clock; /* counts runs of calls, for least-recently-used */
  /* Staging for sources and destinations in a primitive's layout and the
   * primitives' scratchpad; calls run one at a time, so one set serves
   * them all. */
  void *staging[2];
  size_t staging_bytes[2];
  void *scratch;
  size_t scratch_bytes;
  /* KILN_ONEDNN_WINOGRAD=0 in the environment when the session was made:
   * every convolution by the direct algorithm (less memory at batches of
   * 2 and more, docs/UserGuide.md). */
  int no_winograd;
};

/* Build the primitive of call `c` into `v` for batch `batch` (convolution
 * and pool: for input dims `in` and output dims `out`; matmul: for
 * operand dims `lhs`, `rhs` and `out`); 0 on success
 * (onednn_primitives.c). */
int kiln_onednn_prepare_conv(kiln_library_state *state, prepared_call *c, variant *v,
                             const int64_t *in, const int64_t *out);
int kiln_onednn_prepare_matmul(kiln_library_state *state, prepared_call *c, variant *v,
                               const int64_t *lhs, const int64_t *rhs, const int64_t *out);
int kiln_onednn_prepare_pool(kiln_library_state *state, prepared_call *c, variant *v,
                             const int64_t *in, const int64_t *out);
/* A concat for output dims `out` (its inputs: the output's batch and
 * spatial dims, their own channels). */
int kiln_onednn_prepare_concat(kiln_library_state *state, prepared_call *c, variant *v,
                               const int64_t *out);
/* A scale for input dims `in` and a scale of batch `scale_batch` (1 or
 * the input's). */
int kiln_onednn_prepare_scale(kiln_library_state *state, prepared_call *c, variant *v,
                              const int64_t *in, int64_t scale_batch);

#endif
