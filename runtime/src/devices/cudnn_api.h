/*===- cudnn_api.h - the cuDNN entry points Kiln uses ----------------------===*
 *
 * Declared here (not from cudnn.h) because the library is loaded with
 * dlopen when a CUDA model with convolution calls is loaded; the values
 * are cuDNN 9's (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h: its convolution
 * API, which cuDNN 9 keeps beside the graph API).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_CUDNN_API_H
#define KILN_RUNTIME_DEVICES_CUDNN_API_H

#include <stddef.h>

typedef int cudnnStatus_t;
typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
typedef struct cudnnActivationStruct *cudnnActivationDescriptor_t;
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
#define KILN_CUDNN_ACTIVATION_RELU 1
#define KILN_CUDNN_ACTIVATION_IDENTITY 5
#define KILN_CUDNN_NOT_PROPAGATE_NAN 0

#define KILN_CUDNN_ENTRY_POINTS(X)                                                             \
  X(cudnnCreate, (cudnnHandle_t * handle))                                                    \
  X(cudnnDestroy, (cudnnHandle_t handle))                                                     \
  X(cudnnSetStream, (cudnnHandle_t handle, void *stream))                                     \
  X(cudnnCreateTensorDescriptor, (cudnnTensorDescriptor_t * desc))                            \
  X(cudnnDestroyTensorDescriptor, (cudnnTensorDescriptor_t desc))                             \
  X(cudnnSetTensor4dDescriptor,                                                               \
    (cudnnTensorDescriptor_t desc, int format, int type, int n, int c, int h, int w))         \
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
     void *y))

typedef struct kiln_cudnn_api {
#define KILN_CUDNN_FIELD(name, parameters) cudnnStatus_t(*name) parameters;
  KILN_CUDNN_ENTRY_POINTS(KILN_CUDNN_FIELD)
#undef KILN_CUDNN_FIELD
} kiln_cudnn_api;

#endif
