/*===- _tensor.c - kiln.Tensor: an output's memory, over DLPack -----------===*
 *
 * A block of memory the Tensor owns (a copy of a run's output) or a view of
 * one a session keeps (a parameter): handed to NumPy/PyTorch over DLPack
 * and the buffer protocol without a copy.
 *
 *===----------------------------------------------------------------------===*/
#include "_kiln.h"

#include <stdlib.h>
#include <string.h>

/* DLPack (https://dmlc.github.io/dlpack): the structs of its v0.8 ABI. */
typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape, *strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
enum { kDLCPU = 1, kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };

static int dlpack_dtype(int32_t dtype, DLDataType *out) {
  out->lanes = 1;
  out->bits = (uint8_t)(8 * kiln_dtype_size(dtype));
  switch (dtype) {
  case KILN_DTYPE_F32: case KILN_DTYPE_F64: case KILN_DTYPE_F16: out->code = kDLFloat; return 0;
  case KILN_DTYPE_BF16: out->code = kDLBfloat; return 0;
  case KILN_DTYPE_I64: case KILN_DTYPE_I32: case KILN_DTYPE_I16: case KILN_DTYPE_I8:
    out->code = kDLInt; return 0;
  case KILN_DTYPE_U8: case KILN_DTYPE_U16: case KILN_DTYPE_U32: case KILN_DTYPE_U64:
    out->code = kDLUInt; return 0;
  case KILN_DTYPE_BOOL: out->code = kDLBool; return 0;
  }
  return -1;
}


static void tensor_dealloc(TensorObject *self) {
  if (self->owner)
    Py_DECREF(self->owner);
  else
    free(self->data);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The buffer protocol's one-character format of a dtype. */
static const char *buffer_format(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32: return "f";
  case KILN_DTYPE_F64: return "d";
  case KILN_DTYPE_F16: return "e";
  case KILN_DTYPE_BF16: return "H"; /* raw bits */
  case KILN_DTYPE_I64: return "q";
  case KILN_DTYPE_I32: return "i";
  case KILN_DTYPE_I16: return "h";
  case KILN_DTYPE_I8: return "b";
  case KILN_DTYPE_U8: return "B";
  case KILN_DTYPE_U16: return "H";
  case KILN_DTYPE_U32: return "I";
  case KILN_DTYPE_U64: return "Q";
  case KILN_DTYPE_BOOL: return "?";
  }
  return "B";
}

/* Writable, C-contiguous: numpy.asarray(tensor) is a view of it. */
static int tensor_getbuffer(TensorObject *self, Py_buffer *view, int flags) {
  size_t count = 1;
  for (int32_t d = 0; d < self->rank; ++d) {
    self->shape[d] = (Py_ssize_t)self->dims[d];
    count *= (size_t)self->dims[d];
  }
  view->buf = self->data;
  view->obj = (PyObject *)self;
  Py_INCREF(self);
  view->itemsize = (Py_ssize_t)kiln_dtype_size(self->dtype);
  view->len = (Py_ssize_t)count * view->itemsize;
  view->readonly = 0;
  view->ndim = self->rank;
  view->format = (flags & PyBUF_FORMAT) ? (char *)buffer_format(self->dtype) : NULL;
  view->shape = (flags & PyBUF_ND) ? self->shape : NULL;
  view->strides = NULL; /* C-contiguous */
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}

static PyBufferProcs tensor_buffer = {(getbufferproc)tensor_getbuffer, NULL};

static void managed_deleter(DLManagedTensor *managed) {
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_XDECREF((PyObject *)managed->manager_ctx);
  PyGILState_Release(gil);
  free(managed);
}

static void capsule_destructor(PyObject *capsule) {
  /* Renamed "used_dltensor" by a consumer that took it over. */
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor *managed = PyCapsule_GetPointer(capsule, "dltensor");
    if (managed && managed->deleter)
      managed->deleter(managed);
  }
}

static PyObject *tensor_dlpack(TensorObject *self, PyObject *args, PyObject *kwargs) {
  (void)args, (void)kwargs; /* stream: a CPU tensor has none */
  DLManagedTensor *managed = calloc(1, sizeof(DLManagedTensor));
  if (!managed)
    return PyErr_NoMemory();
  DLTensor *t = &managed->dl_tensor;
  t->data = self->data;
  t->device.device_type = kDLCPU;
  t->ndim = self->rank;
  if (dlpack_dtype(self->dtype, &t->dtype) != 0) {
    free(managed);
    PyErr_Format(KilnError, "no DLPack type for %s", kiln_dtype_name(self->dtype));
    return NULL;
  }
  t->shape = self->dims;
  t->strides = NULL; /* row-major */
  Py_INCREF(self);
  managed->manager_ctx = self;
  managed->deleter = managed_deleter;
  PyObject *capsule = PyCapsule_New(managed, "dltensor", capsule_destructor);
  if (!capsule)
    managed_deleter(managed);
  return capsule;
}

static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused) {
  return Py_BuildValue("(ii)", kDLCPU, 0);
}

static PyObject *tensor_shape(TensorObject *self, void *closure) {
  PyObject *shape = PyTuple_New(self->rank);
  for (int32_t d = 0; shape && d < self->rank; ++d)
    PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(self->dims[d]));
  return shape;
}

static PyObject *tensor_dtype(TensorObject *self, void *closure) {
  return PyUnicode_FromString(kiln_dtype_name(self->dtype));
}

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "A DLPack capsule over this tensor's memory (no copy)."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "(kDLCPU, 0)"},
    {NULL}};
static PyGetSetDef tensor_getset[] = {
    {"shape", (getter)tensor_shape, NULL, "dims", NULL},
    {"dtype", (getter)tensor_dtype, NULL, "element type name", NULL},
    {NULL}};

PyTypeObject KilnTensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kiln.Tensor",
    .tp_basicsize = sizeof(TensorObject),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A model output: memory of its own, exported over DLPack (numpy.from_dlpack, "
              "torch.from_dlpack) without a copy.",
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
    .tp_as_buffer = &tensor_buffer,
};

size_t kiln_tensor_elements(const kiln_tensor *t) {
  size_t count = 1;
  for (int32_t d = 0; d < t->rank; ++d)
    count *= (size_t)t->dims[d];
  return count;
}

PyObject *kiln_tensor_from_output(const kiln_tensor *out) {
  TensorObject *t = PyObject_New(TensorObject, &KilnTensorType);
  if (!t)
    return NULL;
  size_t bytes = kiln_tensor_elements(out) * kiln_dtype_size(out->dtype);
  t->data = malloc(bytes ? bytes : 1);
  if (!t->data) {
    Py_TYPE(t)->tp_free((PyObject *)t);
    return PyErr_NoMemory();
  }
  if (bytes)
    memcpy(t->data, out->data, bytes);
  t->dtype = out->dtype;
  t->rank = out->rank;
  memcpy(t->dims, out->dims, sizeof(t->dims));
  t->owner = NULL;
  return (PyObject *)t;
}
