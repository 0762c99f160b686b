/*===- onednn_api.h - the oneDNN functions the CPU device calls ------------===*
 *
 * oneDNN is loaded with dlopen (onednn_load.c); every function the runtime
 * calls is a pointer in one table, and after this header each dnnl_* name
 * goes through it. A new call adds its name to KILN_ONEDNN_FUNCTIONS and a
 * redirect below.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_ONEDNN_API_H
#define KILN_RUNTIME_DEVICES_ONEDNN_API_H

#include <oneapi/dnnl/dnnl.h>

/* Every oneDNN function the runtime calls. */
#define KILN_ONEDNN_FUNCTIONS(X) \
  X(dnnl_binary_desc_init) \
  X(dnnl_concat_primitive_desc_create) \
  X(dnnl_dilated_convolution_forward_desc_init) \
  X(dnnl_engine_create) \
  X(dnnl_engine_destroy) \
  X(dnnl_matmul_desc_init) \
  X(dnnl_memory_create) \
  X(dnnl_memory_desc_get_size) \
  X(dnnl_memory_desc_init_by_tag) \
  X(dnnl_memory_destroy) \
  X(dnnl_memory_set_data_handle) \
  X(dnnl_pooling_forward_desc_init) \
  X(dnnl_post_ops_append_binary) \
  X(dnnl_post_ops_append_eltwise) \
  X(dnnl_post_ops_append_sum) \
  X(dnnl_post_ops_create) \
  X(dnnl_post_ops_destroy) \
  X(dnnl_primitive_attr_create) \
  X(dnnl_primitive_attr_destroy) \
  X(dnnl_primitive_attr_set_post_ops) \
  X(dnnl_primitive_attr_set_scratchpad_mode) \
  X(dnnl_primitive_create) \
  X(dnnl_primitive_desc_create) \
  X(dnnl_primitive_desc_destroy) \
  X(dnnl_primitive_desc_query) \
  X(dnnl_primitive_desc_query_md) \
  X(dnnl_primitive_destroy) \
  X(dnnl_primitive_execute) \
  X(dnnl_primitive_get_primitive_desc) \
  X(dnnl_memory_desc_equal) \
  X(dnnl_reorder_primitive_desc_create) \
  X(dnnl_stream_create) \
  X(dnnl_stream_destroy) \
  X(dnnl_stream_wait)

typedef struct kiln_onednn_table {
#define KILN_ONEDNN_POINTER(name) __typeof__(&name) p_##name;
  KILN_ONEDNN_FUNCTIONS(KILN_ONEDNN_POINTER)
#undef KILN_ONEDNN_POINTER
} kiln_onednn_table;

/* Filled by kiln_onednn_load (onednn_load.c). */
extern kiln_onednn_table kiln_onednn;

/* From here on, each dnnl_* call goes through the loaded table. */
#define KILN_ONEDNN_REDIRECT(name) (kiln_onednn.p_##name)
#define dnnl_binary_desc_init KILN_ONEDNN_REDIRECT(dnnl_binary_desc_init)
#define dnnl_concat_primitive_desc_create KILN_ONEDNN_REDIRECT(dnnl_concat_primitive_desc_create)
#define dnnl_dilated_convolution_forward_desc_init KILN_ONEDNN_REDIRECT(dnnl_dilated_convolution_forward_desc_init)
#define dnnl_engine_create KILN_ONEDNN_REDIRECT(dnnl_engine_create)
#define dnnl_engine_destroy KILN_ONEDNN_REDIRECT(dnnl_engine_destroy)
#define dnnl_matmul_desc_init KILN_ONEDNN_REDIRECT(dnnl_matmul_desc_init)
#define dnnl_memory_create KILN_ONEDNN_REDIRECT(dnnl_memory_create)
#define dnnl_memory_desc_get_size KILN_ONEDNN_REDIRECT(dnnl_memory_desc_get_size)
#define dnnl_memory_desc_init_by_tag KILN_ONEDNN_REDIRECT(dnnl_memory_desc_init_by_tag)
#define dnnl_memory_destroy KILN_ONEDNN_REDIRECT(dnnl_memory_destroy)
#define dnnl_memory_set_data_handle KILN_ONEDNN_REDIRECT(dnnl_memory_set_data_handle)
#define dnnl_pooling_forward_desc_init KILN_ONEDNN_REDIRECT(dnnl_pooling_forward_desc_init)
#define dnnl_post_ops_append_binary KILN_ONEDNN_REDIRECT(dnnl_post_ops_append_binary)
#define dnnl_post_ops_append_eltwise KILN_ONEDNN_REDIRECT(dnnl_post_ops_append_eltwise)
#define dnnl_post_ops_append_sum KILN_ONEDNN_REDIRECT(dnnl_post_ops_append_sum)
#define dnnl_post_ops_create KILN_ONEDNN_REDIRECT(dnnl_post_ops_create)
#define dnnl_post_ops_destroy KILN_ONEDNN_REDIRECT(dnnl_post_ops_destroy)
#define dnnl_primitive_attr_create KILN_ONEDNN_REDIRECT(dnnl_primitive_attr_create)
#define dnnl_primitive_attr_destroy KILN_ONEDNN_REDIRECT(dnnl_primitive_attr_destroy)
#define dnnl_primitive_attr_set_post_ops KILN_ONEDNN_REDIRECT(dnnl_primitive_attr_set_post_ops)
#define dnnl_primitive_attr_set_scratchpad_mode KILN_ONEDNN_REDIRECT(dnnl_primitive_attr_set_scratchpad_mode)
#define dnnl_primitive_create KILN_ONEDNN_REDIRECT(dnnl_primitive_create)
#define dnnl_primitive_desc_create KILN_ONEDNN_REDIRECT(dnnl_primitive_desc_create)
#define dnnl_primitive_desc_destroy KILN_ONEDNN_REDIRECT(dnnl_primitive_desc_destroy)
#define dnnl_primitive_desc_query KILN_ONEDNN_REDIRECT(dnnl_primitive_desc_query)
#define dnnl_primitive_desc_query_md KILN_ONEDNN_REDIRECT(dnnl_primitive_desc_query_md)
#define dnnl_primitive_destroy KILN_ONEDNN_REDIRECT(dnnl_primitive_destroy)
#define dnnl_primitive_execute KILN_ONEDNN_REDIRECT(dnnl_primitive_execute)
#define dnnl_primitive_get_primitive_desc KILN_ONEDNN_REDIRECT(dnnl_primitive_get_primitive_desc)
#define dnnl_memory_desc_equal KILN_ONEDNN_REDIRECT(dnnl_memory_desc_equal)
#define dnnl_reorder_primitive_desc_create KILN_ONEDNN_REDIRECT(dnnl_reorder_primitive_desc_create)
#define dnnl_stream_create KILN_ONEDNN_REDIRECT(dnnl_stream_create)
#define dnnl_stream_destroy KILN_ONEDNN_REDIRECT(dnnl_stream_destroy)
#define dnnl_stream_wait KILN_ONEDNN_REDIRECT(dnnl_stream_wait)

#endif
