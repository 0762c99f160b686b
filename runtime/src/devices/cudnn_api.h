/*===- cudnn_api.h - the cuDNN entry points Kiln uses ----------------------===*
 *
 * Declared here (not from cudnn.h) because the library is loaded with
 * dlopen when a CUDA model with convolution calls is loaded; the values
 * are cuDNN 9's (cudnn_graph.h: the graph API; cudnn_ops.h, cudnn_cnn.h:
 * the convolution API, which cuDNN 9 keeps beside it and Kiln falls back
 * to when no engine runs a fused graph).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_CUDNN_API_H
#define KILN_RUNTIME_DEVICES_CUDNN_API_H

#include <stddef.h>
#include <stdint.h>

typedef int cudnnStatus_t;
typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
typedef struct cudnnActivationStruct *cudnnActivationDescriptor_t;
typedef void *cudnnBackendDescriptor_t;
typedef struct {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
} cudnnConvolutionFwdAlgoPerf_t;

#define KILN_CUDNN_SUCCESS 0
#define KILN_CUDNN_TENSOR_NCHW 0
#define KILN_CUDNN_DATA_FLOAT 0
#define KILN_CUDNN_CROSS_CORRELATION 1
#define KILN_CUDNN_FMA_MATH 3 /* no TF32: float accuracy */
#define KILN_CUDNN_DETERMINISTIC 1
#define KILN_CUDNN_ALGO_IMPLICIT_PRECOMP_GEMM 1
#define KILN_CUDNN_ACTIVATION_SIGMOID 0
#define KILN_CUDNN_ACTIVATION_RELU 1
#define KILN_CUDNN_ACTIVATION_TANH 2
#define KILN_CUDNN_ACTIVATION_CLIPPED_RELU 3 /* min(max(x, 0), coef) */
#define KILN_CUDNN_ACTIVATION_IDENTITY 5
#define KILN_CUDNN_NOT_PROPAGATE_NAN 0

/* The graph API (cudnn_graph.h): descriptor types, attribute types, the
 * attributes Kiln sets and reads, and their enumerated values. */
#define KILN_CUDNN_BACKEND_POINTWISE 0
#define KILN_CUDNN_BACKEND_CONVOLUTION 1
#define KILN_CUDNN_BACKEND_ENGINE 2
#define KILN_CUDNN_BACKEND_ENGINECFG 3
#define KILN_CUDNN_BACKEND_ENGINEHEUR 4
#define KILN_CUDNN_BACKEND_EXECUTION_PLAN 5
#define KILN_CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD 10
#define KILN_CUDNN_BACKEND_OPERATION_POINTWISE 13
#define KILN_CUDNN_BACKEND_OPERATIONGRAPH 15
#define KILN_CUDNN_BACKEND_VARIANT_PACK 16
#define KILN_CUDNN_BACKEND_TENSOR 17

#define KILN_CUDNN_TYPE_HANDLE 0
#define KILN_CUDNN_TYPE_DATA_TYPE 1
#define KILN_CUDNN_TYPE_BOOLEAN 2
#define KILN_CUDNN_TYPE_INT64 3
#define KILN_CUDNN_TYPE_FLOAT 4
#define KILN_CUDNN_TYPE_DOUBLE 5
#define KILN_CUDNN_TYPE_VOID_PTR 6
#define KILN_CUDNN_TYPE_CONVOLUTION_MODE 7
#define KILN_CUDNN_TYPE_HEUR_MODE 8
#define KILN_CUDNN_TYPE_NUMERICAL_NOTE 11
#define KILN_CUDNN_TYPE_POINTWISE_MODE 14
#define KILN_CUDNN_TYPE_BACKEND_DESCRIPTOR 15

#define KILN_CUDNN_ATTR_POINTWISE_MODE 0
#define KILN_CUDNN_ATTR_POINTWISE_MATH_PREC 1
#define KILN_CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP 3
#define KILN_CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP 4
#define KILN_CUDNN_ATTR_CONVOLUTION_COMP_TYPE 100
#define KILN_CUDNN_ATTR_CONVOLUTION_CONV_MODE 101
#define KILN_CUDNN_ATTR_CONVOLUTION_DILATIONS 102
#define KILN_CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES 103
#define KILN_CUDNN_ATTR_CONVOLUTION_POST_PADDINGS 104
#define KILN_CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS 105
#define KILN_CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS 106
#define KILN_CUDNN_ATTR_ENGINEHEUR_MODE 200
#define KILN_CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH 201
#define KILN_CUDNN_ATTR_ENGINEHEUR_RESULTS 202
#define KILN_CUDNN_ATTR_ENGINECFG_ENGINE 300
#define KILN_CUDNN_ATTR_EXECUTION_PLAN_HANDLE 400
#define KILN_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG 401
#define KILN_CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE 402
#define KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_ALPHA 700
#define KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_BETA 701
#define KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_CONV_DESC 702
#define KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_W 703
#define KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_X 704
#define KILN_CUDNN_ATTR_CONVOLUTION_FORWARD_Y 705
#define KILN_CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR 750
#define KILN_CUDNN_ATTR_OPERATION_POINTWISE_XDESC 751
#define KILN_CUDNN_ATTR_OPERATION_POINTWISE_BDESC 752
#define KILN_CUDNN_ATTR_OPERATION_POINTWISE_YDESC 753
#define KILN_CUDNN_ATTR_OPERATIONGRAPH_HANDLE 800
#define KILN_CUDNN_ATTR_OPERATIONGRAPH_OPS 801
#define KILN_CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT 900
#define KILN_CUDNN_ATTR_TENSOR_DATA_TYPE 901
#define KILN_CUDNN_ATTR_TENSOR_DIMENSIONS 902
#define KILN_CUDNN_ATTR_TENSOR_STRIDES 903
#define KILN_CUDNN_ATTR_TENSOR_UNIQUE_ID 906
#define KILN_CUDNN_ATTR_TENSOR_IS_VIRTUAL 907
#define KILN_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS 1000
#define KILN_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS 1001
#define KILN_CUDNN_ATTR_VARIANT_PACK_WORKSPACE 1003
#define KILN_CUDNN_ATTR_ENGINE_NUMERICAL_NOTE 1303

#define KILN_CUDNN_POINTWISE_ADD 0
#define KILN_CUDNN_POINTWISE_RELU_FWD 100
#define KILN_CUDNN_POINTWISE_TANH_FWD 101
#define KILN_CUDNN_POINTWISE_SIGMOID_FWD 102
#define KILN_CUDNN_HEUR_MODE_A 3
#define KILN_CUDNN_NUMERICAL_NOTE_TENSOR_CORE 0 /* float32 data: TF32 */
#define KILN_CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS 1
#define KILN_CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC 4
#define KILN_CUDNN_NUMERICAL_NOTE_COUNT 10

#define KILN_CUDNN_ENTRY_POINTS(X)                                                             \
  X(cudnnCreate, (cudnnHandle_t * handle))                                                    \
  X(cudnnDestroy, (cudnnHandle_t handle))                                                     \
  X(cudnnSetStream, (cudnnHandle_t handle, void *stream))                                     \
  X(cudnnCreateTensorDescriptor, (cudnnTensorDescriptor_t * desc))                            \
  X(cudnnDestroyTensorDescriptor, (cudnnTensorDescriptor_t desc))                             \
  X(cudnnSetTensor4dDescriptor,                                                               \
    (cudnnTensorDescriptor_t desc, int format, int type, int n, int c, int h, int w))         \
  X(cudnnSetTensor4dDescriptorEx,                                                             \
    (cudnnTensorDescriptor_t desc, int type, int n, int c, int h, int w, int n_stride,        \
     int c_stride, int h_stride, int w_stride))                                               \
  X(cudnnCreateFilterDescriptor, (cudnnFilterDescriptor_t * desc))                            \
  X(cudnnDestroyFilterDescriptor, (cudnnFilterDescriptor_t desc))                             \
  X(cudnnSetFilter4dDescriptor,                                                               \
    (cudnnFilterDescriptor_t desc, int type, int format, int k, int c, int h, int w))         \
  X(cudnnCreateConvolutionDescriptor, (cudnnConvolutionDescriptor_t * desc))                  \
  X(cudnnDestroyConvolutionDescriptor, (cudnnConvolutionDescriptor_t desc))                   \
  X(cudnnSetConvolution2dDescriptor,                                                          \
    (cudnnConvolutionDescriptor_t desc, int pad_h, int pad_w, int stride_h, int stride_w,     \
     int dilation_h, int dilation_w, int mode, int type))                                     \
  X(cudnnSetConvolutionGroupCount, (cudnnConvolutionDescriptor_t desc, int groups))           \
  X(cudnnSetConvolutionMathType, (cudnnConvolutionDescriptor_t desc, int math))               \
  X(cudnnCreateActivationDescriptor, (cudnnActivationDescriptor_t * desc))                    \
  X(cudnnDestroyActivationDescriptor, (cudnnActivationDescriptor_t desc))                     \
  X(cudnnSetActivationDescriptor,                                                             \
    (cudnnActivationDescriptor_t desc, int mode, int nan, double coef))                       \
  X(cudnnGetConvolution2dForwardOutputDim,                                                    \
    (cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, \
     int *n, int *c, int *h, int *w_out))                                                     \
  X(cudnnGetConvolutionForwardAlgorithm_v7,                                                   \
    (cudnnHandle_t handle, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,              \
     cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int requested,             \
     int *returned, cudnnConvolutionFwdAlgoPerf_t *results))                                  \
  X(cudnnGetConvolutionForwardWorkspaceSize,                                                  \
    (cudnnHandle_t handle, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,              \
     cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int algo, size_t *bytes))  \
  X(cudnnConvolutionForward,                                                                  \
    (cudnnHandle_t handle, const void *alpha, cudnnTensorDescriptor_t x_desc, const void *x,  \
     cudnnFilterDescriptor_t w_desc, const void *w, cudnnConvolutionDescriptor_t conv,        \
     int algo, void *workspace, size_t workspace_bytes, const void *beta,                     \
     cudnnTensorDescriptor_t y_desc, void *y))                                                \
  X(cudnnConvolutionBiasActivationForward,                                                    \
    (cudnnHandle_t handle, const void *alpha1, cudnnTensorDescriptor_t x_desc, const void *x, \
     cudnnFilterDescriptor_t w_desc, const void *w, cudnnConvolutionDescriptor_t conv,        \
     int algo, void *workspace, size_t workspace_bytes, const void *alpha2,                   \
     cudnnTensorDescriptor_t z_desc, const void *z, cudnnTensorDescriptor_t bias_desc,        \
     const void *bias, cudnnActivationDescriptor_t activation, cudnnTensorDescriptor_t y_desc, \
     void *y))                                                                                \
  X(cudnnActivationForward,                                                                   \
    (cudnnHandle_t handle, cudnnActivationDescriptor_t activation, const void *alpha,         \
     cudnnTensorDescriptor_t x_desc, const void *x, const void *beta,                         \
     cudnnTensorDescriptor_t y_desc, void *y))                                                \
  X(cudnnBackendCreateDescriptor, (int type, cudnnBackendDescriptor_t *desc))                 \
  X(cudnnBackendDestroyDescriptor, (cudnnBackendDescriptor_t desc))                           \
  X(cudnnBackendFinalize, (cudnnBackendDescriptor_t desc))                                    \
  X(cudnnBackendSetAttribute,                                                                 \
    (cudnnBackendDescriptor_t desc, int name, int type, int64_t count, const void *values))   \
  X(cudnnBackendGetAttribute,                                                                 \
    (cudnnBackendDescriptor_t desc, int name, int type, int64_t requested, int64_t *count,    \
     void *values))                                                                           \
  X(cudnnBackendExecute,                                                                      \
    (cudnnHandle_t handle, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack))

typedef struct kiln_cudnn_api {
#define KILN_CUDNN_FIELD(name, parameters) cudnnStatus_t(*name) parameters;
  KILN_CUDNN_ENTRY_POINTS(KILN_CUDNN_FIELD)
#undef KILN_CUDNN_FIELD
} kiln_cudnn_api;

#endif
