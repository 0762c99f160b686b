/*===- cudnn_stand_in.c - cuDNN without a GPU, for tests --------------------===*
 *
 * The cuDNN entry points Kiln's runtime loads (runtime/src/devices/
 * cudnn_api.h), computing on host memory what cuDNN documents for a 2-D
 * float convolution in NCHW (cross-correlation, groups, strides,
 * dilations, symmetric pads): y = alpha conv(x) + beta y, and the fused
 * y = act(alpha1 conv(x) + alpha2 z + bias). With the CUDA driver stand-in
 * a model whose work is all convolution calls runs through the CUDA device
 * and its numbers can be checked against NumPy. The heuristic lists a
 * nondeterministic algorithm (4) first and a deterministic one (1) second;
 * each call appends the algorithm it ran to the file named by
 * $KILN_CUDNN_STAND_IN_ALGORITHMS, so a test can check which the runtime
 * picked (1 by default, 4 with --allow-nondeterministic).
 *
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define OK 0
#define BAD 2000

typedef struct { int n, c, h, w; } tensor;
typedef struct { int k, c, h, w; } filter;
typedef struct { int ph, pw, sh, sw, dh, dw, groups; } conv;
typedef struct { int mode; } activation;
typedef struct {
  int algo, status;
  float time;
  size_t memory;
  int determinism, math, reserved[3];
} perf;


EXPORT int cudnnCreate(void **h) { static int the; *h = &the; return OK; }
EXPORT int cudnnDestroy(void *h) { (void)h; return OK; }
EXPORT int cudnnSetStream(void *h, void *s) { (void)h, (void)s; return OK; }
#define CREATE_DESTROY(kind, type)                                                            \
  EXPORT int cudnnCreate##kind##Descriptor(type **d) { *d = calloc(1, sizeof **d); return OK; } \
  EXPORT int cudnnDestroy##kind##Descriptor(type *d) { free(d); return OK; }
CREATE_DESTROY(Tensor, tensor)
CREATE_DESTROY(Filter, filter)
CREATE_DESTROY(Convolution, conv)
CREATE_DESTROY(Activation, activation)
EXPORT int cudnnSetTensor4dDescriptor(tensor *t, int format, int type, int n, int c, int h,
                                      int w) {
  if (format != 0 || type != 0)
    return BAD;
  *t = (tensor){n, c, h, w};
  return OK;
}
EXPORT int cudnnSetFilter4dDescriptor(filter *f, int type, int format, int k, int c, int h,
                                      int w) {
  if (format != 0 || type != 0)
    return BAD;
  *f = (filter){k, c, h, w};
  return OK;
}
EXPORT int cudnnSetConvolution2dDescriptor(conv *c, int ph, int pw, int sh, int sw, int dh,
                                           int dw, int mode, int type) {
  if (mode != 1 || type != 0) /* cross-correlation in float */
    return BAD;
  *c = (conv){ph, pw, sh, sw, dh, dw, 1};
  return OK;
}
EXPORT int cudnnSetConvolutionGroupCount(conv *c, int groups) { c->groups = groups; return OK; }
EXPORT int cudnnSetConvolutionMathType(conv *c, int math) {
  (void)c;
  return math == 3 ? OK : BAD; /* FMA: no TF32 */
}
EXPORT int cudnnSetActivationDescriptor(activation *a, int mode, int nan, double coef) {
  (void)nan, (void)coef;
  if (mode != 1 && mode != 5)
    return BAD;
  a->mode = mode;
  return OK;
}
static int consistent(const tensor *x, const filter *w, const conv *c, const tensor *y) {
  if (x->c != w->c * c->groups || w->k % c->groups || y->c != w->k || y->n != x->n)
    return 0;
  int oh = (x->h + 2 * c->ph - (c->dh * (w->h - 1) + 1)) / c->sh + 1;
  int ow = (x->w + 2 * c->pw - (c->dw * (w->w - 1) + 1)) / c->sw + 1;
  return oh == y->h && ow == y->w;
}
EXPORT int cudnnGetConvolutionForwardAlgorithm_v7(void *h, tensor *x, filter *w, conv *c,
                                                  tensor *y, int requested, int *returned,
                                                  perf *results) {
  (void)h;
  if (!consistent(x, w, c, y) || requested < 2)
    return BAD;
  memset(results, 0, 2 * sizeof *results);
  results[0] = (perf){4, OK, 0.1f, 0, 0, 3, {0}}; /* FFT, nondeterministic: must be skipped */
  results[1] = (perf){1, OK, 0.2f, 0, 1, 3, {0}};
  *returned = 2;
  return OK;
}
EXPORT int cudnnGetConvolutionForwardWorkspaceSize(void *h, tensor *x, filter *w, conv *c,
                                                   tensor *y, int algo, size_t *bytes) {
  (void)h, (void)algo;
  *bytes = 0;
  return consistent(x, w, c, y) ? OK : BAD;
}
static void record(int algo) {
  const char *path = getenv("KILN_CUDNN_STAND_IN_ALGORITHMS");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (f) {
    fprintf(f, "%d\n", algo);
    fclose(f);
  }
}
static void convolve(const tensor *xd, const float *x, const filter *wd, const float *w,
                     const conv *c, const tensor *yd, float *out, int algo) {
  int per_group_in = wd->c, per_group_out = wd->k / c->groups;
  for (int n = 0; n < yd->n; ++n)
    for (int k = 0; k < yd->c; ++k)
      for (int i = 0; i < yd->h; ++i)
        for (int j = 0; j < yd->w; ++j) {
          double sum = 0;
          int g = k / per_group_out;
          for (int ci = 0; ci < per_group_in; ++ci)
            for (int r = 0; r < wd->h; ++r)
              for (int s = 0; s < wd->w; ++s) {
                int hi = i * c->sh - c->ph + r * c->dh, wi = j * c->sw - c->pw + s * c->dw;
                if (hi < 0 || hi >= xd->h || wi < 0 || wi >= xd->w)
                  continue;
                int cin = g * per_group_in + ci;
                sum += (double)x[((n * xd->c + cin) * xd->h + hi) * xd->w + wi] *
                       w[((k * wd->c + ci) * wd->h + r) * wd->w + s];
              }
          out[((n * yd->c + k) * yd->h + i) * yd->w + j] = (float)sum;
        }
}
EXPORT int cudnnConvolutionForward(void *h, const float *alpha, tensor *xd, const float *x,
                                   filter *wd, const float *w, conv *c, int algo, void *ws,
                                   size_t wsb, const float *beta, tensor *yd, float *y) {
  (void)h, (void)ws, (void)wsb;
  if (!consistent(xd, wd, c, yd) || (algo != 1 && algo != 4))
    return BAD;
  record(algo);
  size_t count = (size_t)yd->n * yd->c * yd->h * yd->w;
  float *tmp = malloc(count * sizeof *tmp);
  convolve(xd, x, wd, w, c, yd, tmp, algo);
  for (size_t i = 0; i < count; ++i)
    y[i] = *alpha * tmp[i] + (*beta != 0 ? *beta * y[i] : 0);
  free(tmp);
  return OK;
}
EXPORT int cudnnConvolutionBiasActivationForward(void *h, const float *alpha1, tensor *xd,
                                                 const float *x, filter *wd, const float *w,
                                                 conv *c, int algo, void *ws, size_t wsb,
                                                 const float *alpha2, tensor *zd, const float *z,
                                                 tensor *bd, const float *bias, activation *a,
                                                 tensor *yd, float *y) {
  (void)h, (void)ws, (void)wsb;
  if (!consistent(xd, wd, c, yd) || bd->c != yd->c || zd->c != yd->c || !bias ||
      (algo != 1 && algo != 4))
    return BAD;
  if (a->mode == 5 && algo != 1) /* identity: implicit precomputed GEMM only */
    return BAD;
  record(algo);
  size_t plane = (size_t)yd->h * yd->w, count = (size_t)yd->n * yd->c * plane;
  float *tmp = malloc(count * sizeof *tmp);
  convolve(xd, x, wd, w, c, yd, tmp, algo);
  for (size_t i = 0; i < count; ++i) {
    float v = *alpha1 * tmp[i] + (*alpha2 != 0 ? *alpha2 * z[i] : 0) + bias[(i / plane) % yd->c];
    y[i] = a->mode == 1 && v < 0 ? 0 : v;
  }
  free(tmp);
  return OK;
}
