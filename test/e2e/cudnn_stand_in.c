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
 * The graph API: descriptors keep their attributes; finalising checks
 * what cuDNN requires of each kind Kiln builds (a tensor's dims, strides,
 * id and alignment; a convolution's paddings; an operation's tensors,
 * their shapes consistent). The heuristic proposes three engines: 10
 * (the tensor-core note: TF32 on float data, to be skipped), 11
 * (nondeterministic) and 12 (neither); running a plan interprets the
 * operation graph (the convolution, then each pointwise operation with
 * broadcasting) on the variant pack's pointers and appends the engine to
 * the log as it does an algorithm. $KILN_CUDNN_STAND_IN_NO_FUSION=1: the
 * heuristic proposes nothing for a graph of more than one operation, as
 * cuDNN does for a fusion no engine has; $KILN_CUDNN_STAND_IN_FAIL_EXECUTE=1:
 * every plan's execution fails (status 5000: execution failed).
 *
 *===----------------------------------------------------------------------===*/
#define KILN_STAND_IN_LIBRARY
#include "cuda_stand_in.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define OK 0
#define BAD 2000

/* NCHW, dense but for the batch: items `ns` elements apart (0: dense). */
typedef struct { int n, c, h, w; int64_t ns; } tensor;
typedef struct { int k, c, h, w; } filter;
typedef struct { int ph, pw, sh, sw, dh, dw, groups; } conv;
typedef struct { int mode; double coef; } activation;
typedef struct {
  int algo, status;
  float time;
  size_t memory;
  int determinism, math, reserved[3];
} perf;

static void record(int algo) {
  const char *path = getenv("KILN_CUDNN_STAND_IN_ALGORITHMS");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (f) {
    fprintf(f, "%d\n", algo);
    fclose(f);
  }
}

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
  *t = (tensor){n, c, h, w, 0};
  return OK;
}
/* Strides: Kiln's are dense in C, H and W; a batch stride at least dense. */
EXPORT int cudnnSetTensor4dDescriptorEx(tensor *t, int type, int n, int c, int h, int w, int ns,
                                        int cs, int hs, int ws) {
  if (type != 0 || ws != 1 || hs != w || cs != h * w || (int64_t)ns < (int64_t)c * h * w)
    return BAD;
  *t = (tensor){n, c, h, w, ns};
  return OK;
}
/* Where element (n, c, h, w) of `t` is. */
static size_t at(const tensor *t, int n, int c, int h, int w) {
  int64_t ns = t->ns ? t->ns : (int64_t)t->c * t->h * t->w;
  return (size_t)(n * ns + ((int64_t)c * t->h + h) * t->w + w);
}
static int same_shape(const tensor *a, const tensor *b) {
  return a->n == b->n && a->c == b->c && a->h == b->h && a->w == b->w;
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
  (void)nan;
  if (mode < 0 || mode > 5 || mode == 4)
    return BAD;
  a->mode = mode;
  a->coef = coef;
  return OK;
}
static float activate(int mode, double coef, float v) {
  switch (mode) {
  case 0: return 1.0f / (1.0f + expf(-v));
  case 1: return v < 0 ? 0 : v;
  case 2: return tanhf(v);
  case 3: return v < 0 ? 0 : v > coef ? (float)coef : v;
  default: return v;
  }
}
/* y = alpha act(x) + beta y, in place allowed. */
EXPORT int cudnnActivationForward(void *h, activation *a, const float *alpha, tensor *xd,
                                  const float *x, const float *beta, tensor *yd, float *y) {
  (void)h;
  if (!same_shape(xd, yd))
    return BAD;
  record(100 + a->mode);
  for (int n = 0; n < yd->n; ++n)
    for (int c = 0; c < yd->c; ++c)
      for (int i = 0; i < yd->h; ++i)
        for (int j = 0; j < yd->w; ++j) {
          float *out = &y[at(yd, n, c, i, j)];
          *out = *alpha * activate(a->mode, a->coef, x[at(xd, n, c, i, j)]) +
                 (*beta != 0 ? *beta * *out : 0);
        }
  return OK;
}
static int consistent(const tensor *x, const filter *w, const conv *c, const tensor *y) {
  if (x->c != w->c * c->groups || w->k % c->groups || y->c != w->k || y->n != x->n)
    return 0;
  int oh = (x->h + 2 * c->ph - (c->dh * (w->h - 1) + 1)) / c->sh + 1;
  int ow = (x->w + 2 * c->pw - (c->dw * (w->w - 1) + 1)) / c->sw + 1;
  return oh == y->h && ow == y->w;
}
/* What cuDNN documents: the output of x by w under c (NCHW, groups). */
EXPORT int cudnnGetConvolution2dForwardOutputDim(conv *c, tensor *x, filter *w, int *n,
                                                 int *channels, int *h, int *width) {
  if (x->c != w->c * c->groups || c->sh < 1 || c->sw < 1)
    return BAD;
  *n = x->n;
  *channels = w->k;
  *h = (x->h + 2 * c->ph - (c->dh * (w->h - 1) + 1)) / c->sh + 1;
  *width = (x->w + 2 * c->pw - (c->dw * (w->w - 1) + 1)) / c->sw + 1;
  return OK;
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
                sum += (double)x[at(xd, n, cin, hi, wi)] *
                       w[((k * wd->c + ci) * wd->h + r) * wd->w + s];
              }
          out[at(yd, n, k, i, j)] = (float)sum;
        }
}
EXPORT int cudnnConvolutionForward(void *h, const float *alpha, tensor *xd, const float *x,
                                   filter *wd, const float *w, conv *c, int algo, void *ws,
                                   size_t wsb, const float *beta, tensor *yd, float *y) {
  (void)h, (void)ws, (void)wsb;
  if (!consistent(xd, wd, c, yd) || (algo != 1 && algo != 4))
    return BAD;
  kiln_stand_in_wait_for_copies();
  record(algo);
  tensor dense = *yd;
  dense.ns = 0;
  size_t count = (size_t)yd->n * yd->c * yd->h * yd->w;
  float *tmp = malloc(count * sizeof *tmp);
  convolve(xd, x, wd, w, c, &dense, tmp, algo);
  for (size_t i = 0; i < count; ++i) {
    size_t plane = (size_t)yd->h * yd->w, chw = plane * yd->c;
    float *out = &y[at(yd, (int)(i / chw), (int)(i / plane % yd->c), (int)(i / yd->w % yd->h),
                       (int)(i % yd->w))];
    *out = *alpha * tmp[i] + (*beta != 0 ? *beta * *out : 0);
  }
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
  if (!same_shape(zd, yd))
    return BAD;
  record(algo);
  tensor dense = *yd;
  dense.ns = 0;
  size_t plane = (size_t)yd->h * yd->w, count = (size_t)yd->n * yd->c * plane;
  float *tmp = malloc(count * sizeof *tmp);
  convolve(xd, x, wd, w, c, &dense, tmp, algo);
  for (size_t i = 0; i < count; ++i) {
    int n = (int)(i / (plane * yd->c)), k = (int)(i / plane % yd->c);
    int row = (int)(i / yd->w % yd->h), col = (int)(i % yd->w);
    float v = *alpha1 * tmp[i] + (*alpha2 != 0 ? *alpha2 * z[at(zd, n, k, row, col)] : 0) +
              bias[k];
    y[at(yd, n, k, row, col)] = a->mode == 1 && v < 0 ? 0 : v; /* ReLU or the identity */
  }
  free(tmp);
  return OK;
}

/* ---- The graph API ---------------------------------------------------- */

enum { T_HANDLE, T_DATA_TYPE, T_BOOLEAN, T_INT64, T_FLOAT, T_DOUBLE, T_VOID_PTR,
       T_CONVOLUTION_MODE, T_HEUR_MODE, T_NUMERICAL_NOTE = 11, T_POINTWISE_MODE = 14,
       T_BACKEND_DESCRIPTOR = 15 };
enum { D_POINTWISE, D_CONVOLUTION, D_ENGINE, D_ENGINECFG, D_ENGINEHEUR, D_EXECUTION_PLAN,
       D_OP_CONV_FORWARD = 10, D_OP_POINTWISE = 13, D_OPERATIONGRAPH = 15, D_VARIANT_PACK,
       D_TENSOR };
#define MAX_ATTRS 16
#define MAX_VALUES 8

typedef struct attribute {
  int name, type;
  int64_t count;
  union { int64_t i[MAX_VALUES]; double d[MAX_VALUES]; float f[MAX_VALUES];
          void *p[MAX_VALUES]; int32_t e[MAX_VALUES]; _Bool b; } v;
} attribute;

typedef struct backend {
  int kind, finalized;
  int num_attrs;
  attribute attrs[MAX_ATTRS];
  int engine;             /* an engine or an engine configuration: its id */
  struct backend *graph;  /* an engine configuration: its operation graph */
} backend;

static size_t type_bytes(int type) {
  switch (type) {
  case T_BOOLEAN: return sizeof(_Bool);
  case T_INT64: case T_DOUBLE: return 8;
  case T_FLOAT: return 4;
  case T_HANDLE: case T_VOID_PTR: case T_BACKEND_DESCRIPTOR: return sizeof(void *);
  default: return 4; /* the enumerations */
  }
}

static attribute *find(backend *d, int name) {
  for (int i = 0; i < d->num_attrs; ++i)
    if (d->attrs[i].name == name)
      return &d->attrs[i];
  return NULL;
}

EXPORT int cudnnBackendCreateDescriptor(int kind, backend **d) {
  *d = calloc(1, sizeof **d);
  (*d)->kind = kind;
  return OK;
}
EXPORT int cudnnBackendDestroyDescriptor(backend *d) { free(d); return OK; }
EXPORT int cudnnBackendSetAttribute(backend *d, int name, int type, int64_t count,
                                    const void *values) {
  if (d->finalized || count < 0 || count > MAX_VALUES || (count && !values))
    return BAD;
  attribute *a = find(d, name);
  if (!a) {
    if (d->num_attrs == MAX_ATTRS)
      return BAD;
    a = &d->attrs[d->num_attrs++];
  }
  memset(a, 0, sizeof *a);
  a->name = name, a->type = type, a->count = count;
  memcpy(&a->v, values, (size_t)count * type_bytes(type));
  return OK;
}

/* The attribute `name` of `type` with `count` values (-1: any), or NULL. */
static attribute *get(backend *d, int name, int type, int64_t count) {
  attribute *a = find(d, name);
  return a && a->type == type && (count < 0 || a->count == count) ? a : NULL;
}
static backend *descriptor(backend *d, int name, int kind) {
  attribute *a = get(d, name, T_BACKEND_DESCRIPTOR, 1);
  backend *b = a ? a->v.p[0] : NULL;
  return b && b->kind == kind && b->finalized ? b : NULL;
}

static int64_t *dims_of(backend *t) { return get(t, 902, T_INT64, 4)->v.i; }
static int64_t *strides_of(backend *t) { return get(t, 903, T_INT64, 4)->v.i; }
static int64_t uid_of(backend *t) { return get(t, 906, T_INT64, 1)->v.i[0]; }
static int is_virtual(backend *t) {
  attribute *a = get(t, 907, T_BOOLEAN, 1);
  return a && a->v.b;
}
static int same_dims(backend *a, backend *b) { return !memcmp(dims_of(a), dims_of(b), 32); }

static int conv_output_ok(backend *x, backend *w, backend *c, backend *y) {
  int64_t *xd = dims_of(x), *wd = dims_of(w), *yd = dims_of(y);
  int64_t *st = get(c, 103, T_INT64, 2)->v.i, *di = get(c, 102, T_INT64, 2)->v.i;
  int64_t *pre = get(c, 105, T_INT64, 2)->v.i, *post = get(c, 104, T_INT64, 2)->v.i;
  if (xd[0] != yd[0] || wd[0] != yd[1] || xd[1] % wd[1] || wd[0] % (xd[1] / wd[1]))
    return 0;
  for (int s = 0; s < 2; ++s)
    if ((xd[2 + s] + pre[s] + post[s] - (di[s] * (wd[2 + s] - 1) + 1)) / st[s] + 1 != yd[2 + s])
      return 0;
  return 1;
}

static int finalize(backend *d) {
  switch (d->kind) {
  case D_TENSOR: {
    attribute *type = get(d, 901, T_DATA_TYPE, 1);
    if (!type || type->v.e[0] != 0 || !get(d, 902, T_INT64, 4) || !get(d, 903, T_INT64, 4) ||
        !get(d, 906, T_INT64, 1) || !get(d, 900, T_INT64, 1))
      return 0;
    int64_t *dims = dims_of(d), *strides = strides_of(d);
    /* Dense, but a batch stride may be larger (channels of a concatenation). */
    return dims[0] > 0 && strides[3] == 1 && strides[2] == dims[3] &&
           strides[1] == dims[2] * dims[3] && strides[0] >= dims[1] * dims[2] * dims[3];
  }
  case D_CONVOLUTION: {
    attribute *mode = get(d, 101, T_CONVOLUTION_MODE, 1), *comp = get(d, 100, T_DATA_TYPE, 1);
    attribute *spatial = get(d, 106, T_INT64, 1);
    return mode && mode->v.e[0] == 1 && comp && comp->v.e[0] == 0 && spatial &&
           spatial->v.i[0] == 2 && get(d, 102, T_INT64, 2) && get(d, 103, T_INT64, 2) &&
           get(d, 104, T_INT64, 2) && get(d, 105, T_INT64, 2);
  }
  case D_OP_CONV_FORWARD: {
    backend *x = descriptor(d, 704, D_TENSOR), *w = descriptor(d, 703, D_TENSOR);
    backend *y = descriptor(d, 705, D_TENSOR), *c = descriptor(d, 702, D_CONVOLUTION);
    return x && w && y && c && get(d, 700, T_FLOAT, 1) && get(d, 701, T_FLOAT, 1) &&
           conv_output_ok(x, w, c, y);
  }
  case D_POINTWISE: {
    attribute *mode = get(d, 0, T_POINTWISE_MODE, 1), *prec = get(d, 1, T_DATA_TYPE, 1);
    return mode && prec && prec->v.e[0] == 0 &&
           (mode->v.e[0] == 0 || (mode->v.e[0] >= 100 && mode->v.e[0] <= 102)) &&
           (!find(d, 3) || get(d, 3, T_DOUBLE, 1)) && (!find(d, 4) || get(d, 4, T_DOUBLE, 1));
  }
  case D_OP_POINTWISE: {
    backend *pw = descriptor(d, 750, D_POINTWISE), *x = descriptor(d, 751, D_TENSOR);
    backend *b = find(d, 752) ? descriptor(d, 752, D_TENSOR) : NULL;
    backend *y = descriptor(d, 753, D_TENSOR);
    if (!pw || !x || !y || !same_dims(x, y) || (find(d, 752) && !b))
      return 0;
    int binary = get(pw, 0, T_POINTWISE_MODE, 1)->v.e[0] == 0;
    if (binary != (b != NULL))
      return 0;
    if (b) /* the same dims, or broadcast over all but the channels */
      for (int i = 0; i < 4; ++i)
        if (dims_of(b)[i] != dims_of(y)[i] && dims_of(b)[i] != 1)
          return 0;
    return 1;
  }
  case D_OPERATIONGRAPH: {
    attribute *ops = get(d, 801, T_BACKEND_DESCRIPTOR, -1);
    return ops && ops->count > 0 && get(d, 800, T_HANDLE, 1);
  }
  case D_ENGINEHEUR: {
    attribute *mode = get(d, 200, T_HEUR_MODE, 1);
    return descriptor(d, 201, D_OPERATIONGRAPH) && mode && mode->v.e[0] == 3;
  }
  case D_EXECUTION_PLAN: {
    attribute *cfg = get(d, 401, T_BACKEND_DESCRIPTOR, 1);
    return cfg && ((backend *)cfg->v.p[0])->kind == D_ENGINECFG && get(d, 400, T_HANDLE, 1);
  }
  case D_VARIANT_PACK: {
    attribute *ids = get(d, 1000, T_INT64, -1), *ptrs = get(d, 1001, T_VOID_PTR, -1);
    return ids && ptrs && ids->count == ptrs->count && get(d, 1003, T_VOID_PTR, 1);
  }
  default:
    return 1;
  }
}

EXPORT int cudnnBackendFinalize(backend *d) {
  if (d->finalized || !finalize(d))
    return BAD;
  d->finalized = 1;
  return OK;
}

EXPORT int cudnnBackendGetAttribute(backend *d, int name, int type, int64_t requested,
                                    int64_t *count, void *values) {
  if (!d->finalized && d->kind != D_ENGINECFG && d->kind != D_ENGINE)
    return BAD;
  if (d->kind == D_ENGINEHEUR && name == 202 && type == T_BACKEND_DESCRIPTOR) {
    backend *graph = descriptor(d, 201, D_OPERATIONGRAPH);
    const char *no_fusion = getenv("KILN_CUDNN_STAND_IN_NO_FUSION");
    int64_t proposed =
        no_fusion && !strcmp(no_fusion, "1") && get(graph, 801, T_BACKEND_DESCRIPTOR, -1)->count > 1
            ? 0 : 3;
    *count = requested < proposed ? requested : proposed;
    for (int64_t i = 0; i < *count; ++i) {
      backend *cfg = ((backend **)values)[i];
      if (cfg->kind != D_ENGINECFG)
        return BAD;
      cfg->engine = 10 + (int)i;
      cfg->graph = graph;
      cfg->finalized = 1;
    }
    if (requested == 0)
      *count = proposed;
    return OK;
  }
  if (d->kind == D_ENGINECFG && name == 300 && type == T_BACKEND_DESCRIPTOR && requested == 1) {
    backend *engine = *(backend **)values;
    engine->engine = d->engine;
    engine->finalized = 1;
    *count = 1;
    return OK;
  }
  if (d->kind == D_ENGINE && name == 1303 && type == T_NUMERICAL_NOTE) {
    int32_t *notes = values;
    *count = 0;
    if (d->engine == 10 && requested > 0)
      notes[(*count)++] = 0; /* tensor cores */
    if (d->engine == 11 && requested > 0)
      notes[(*count)++] = 4; /* nondeterministic */
    return OK;
  }
  if (d->kind == D_EXECUTION_PLAN && name == 402 && type == T_INT64 && requested == 1) {
    *(int64_t *)values = 256; /* a workspace the runtime must pass */
    *count = 1;
    return OK;
  }
  return BAD;
}

/* Element (n, c, h, w) of a tensor of `dims`, broadcast where a dim is 1. */
static size_t element(const int64_t *dims, const int64_t *strides, int64_t n, int64_t c, int64_t h,
                      int64_t w) {
  int64_t index[4] = {n, c, h, w};
  size_t offset = 0;
  for (int i = 0; i < 4; ++i)
    offset += (size_t)(dims[i] == 1 ? 0 : index[i]) * (size_t)strides[i];
  return offset;
}

typedef struct { int64_t uid; float *data; } binding;

static float *data_of(binding *bound, int *num_bound, backend *t, size_t count) {
  int64_t uid = uid_of(t);
  for (int i = 0; i < *num_bound; ++i)
    if (bound[i].uid == uid)
      return bound[i].data;
  if (!is_virtual(t))
    return NULL;
  bound[*num_bound] = (binding){uid, calloc(count, sizeof(float))};
  return bound[(*num_bound)++].data;
}

EXPORT int cudnnBackendExecute(void *h, backend *plan, backend *pack) {
  (void)h;
  if (!plan->finalized || !pack->finalized || plan->kind != D_EXECUTION_PLAN)
    return BAD;
  kiln_stand_in_wait_for_copies();
  const char *fail = getenv("KILN_CUDNN_STAND_IN_FAIL_EXECUTE");
  if (fail && !strcmp(fail, "1"))
    return 5000;
  backend *cfg = get(plan, 401, T_BACKEND_DESCRIPTOR, 1)->v.p[0];
  attribute *ops = get(cfg->graph, 801, T_BACKEND_DESCRIPTOR, -1);
  attribute *ids = get(pack, 1000, T_INT64, -1), *ptrs = get(pack, 1001, T_VOID_PTR, -1);
  if (!get(pack, 1003, T_VOID_PTR, 1)->v.p[0])
    return BAD; /* the plan asked for a workspace */
  binding bound[16];
  int num_bound = 0, fixed;
  for (int64_t i = 0; i < ids->count; ++i)
    bound[num_bound++] = (binding){ids->v.i[i], ptrs->v.p[i]};
  fixed = num_bound;
  int status = OK;
  for (int64_t o = 0; o < ops->count && status == OK; ++o) {
    backend *op = ops->v.p[o];
    if (op->kind == D_OP_CONV_FORWARD) {
      backend *x = descriptor(op, 704, D_TENSOR), *w = descriptor(op, 703, D_TENSOR);
      backend *y = descriptor(op, 705, D_TENSOR), *c = descriptor(op, 702, D_CONVOLUTION);
      int64_t *xd = dims_of(x), *wd = dims_of(w), *yd = dims_of(y);
      int64_t *st = get(c, 103, T_INT64, 2)->v.i, *di = get(c, 102, T_INT64, 2)->v.i;
      int64_t *pre = get(c, 105, T_INT64, 2)->v.i;
      tensor xt = {(int)xd[0], (int)xd[1], (int)xd[2], (int)xd[3], strides_of(x)[0]};
      tensor yt = {(int)yd[0], (int)yd[1], (int)yd[2], (int)yd[3], strides_of(y)[0]};
      filter wt = {(int)wd[0], (int)wd[1], (int)wd[2], (int)wd[3]};
      conv ct = {(int)pre[0], (int)pre[1], (int)st[0], (int)st[1], (int)di[0], (int)di[1],
                 (int)(xd[1] / wd[1])};
      size_t count = (size_t)yd[0] * yd[1] * yd[2] * yd[3];
      float *xp = data_of(bound, &num_bound, x, 0), *wp = data_of(bound, &num_bound, w, 0);
      float *yp = data_of(bound, &num_bound, y, count);
      if (!xp || !wp || !yp)
        status = BAD;
      else
        convolve(&xt, xp, &wt, wp, &ct, &yt, yp, 0);
    } else if (op->kind == D_OP_POINTWISE) {
      backend *pw = descriptor(op, 750, D_POINTWISE), *x = descriptor(op, 751, D_TENSOR);
      backend *b = find(op, 752) ? descriptor(op, 752, D_TENSOR) : NULL;
      backend *y = descriptor(op, 753, D_TENSOR);
      int64_t *yd = dims_of(y);
      size_t count = (size_t)yd[0] * yd[1] * yd[2] * yd[3];
      float *xp = data_of(bound, &num_bound, x, count);
      float *bp = b ? data_of(bound, &num_bound, b, count) : NULL;
      float *yp = data_of(bound, &num_bound, y, count);
      int mode = get(pw, 0, T_POINTWISE_MODE, 1)->v.e[0];
      attribute *lo = get(pw, 3, T_DOUBLE, 1), *hi = get(pw, 4, T_DOUBLE, 1);
      double lower = lo ? lo->v.d[0] : 0, upper = hi ? hi->v.d[0] : INFINITY;
      if (!xp || !yp || (b && !bp)) {
        status = BAD;
        break;
      }
      for (int64_t n = 0; n < yd[0]; ++n)
        for (int64_t c = 0; c < yd[1]; ++c)
          for (int64_t i = 0; i < yd[2]; ++i)
            for (int64_t j = 0; j < yd[3]; ++j) {
              float v = xp[element(dims_of(x), strides_of(x), n, c, i, j)];
              if (mode == 0)
                v += bp[element(dims_of(b), strides_of(b), n, c, i, j)];
              else if (mode == 100)
                v = v < lower ? (float)lower : v > upper ? (float)upper : v;
              else if (mode == 101)
                v = tanhf(v);
              else
                v = 1.0f / (1.0f + expf(-v));
              yp[element(yd, strides_of(y), n, c, i, j)] = v;
            }
    } else {
      status = BAD;
    }
  }
  for (int i = fixed; i < num_bound; ++i)
    free(bound[i].data);
  if (status == OK)
    record(cfg->engine);
  return status;
}
