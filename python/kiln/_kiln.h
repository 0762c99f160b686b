/*===- _kiln.h - what the `kiln` module's C files share ------------------===*
 *
 * _kiln.c (Model, Session, the module), _tensor.c (Tensor: an output's
 * memory, exported over DLPack and the buffer protocol) and _strings.c
 * (string tensors in and out).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_PYTHON_KILN_H
#define KILN_PYTHON_KILN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kiln/kiln.h"

#define KILN_HIDDEN __attribute__((visibility("hidden")))

/* A tensor's memory: its own (`owner` NULL), or a view into what `owner`
 * keeps alive (a session's parameter). */
typedef struct {
  PyObject_HEAD
  void *data;
  int32_t dtype, rank;
  int64_t dims[KILN_MAX_RANK];
  Py_ssize_t shape[KILN_MAX_RANK]; /* for the buffer protocol */
  PyObject *owner; /* NULL: `data` is the tensor's own; else what holds it */
} TensorObject;

extern KILN_HIDDEN PyTypeObject KilnTensorType;
/* kiln.Error, created when the module is. */
extern KILN_HIDDEN PyObject *KilnError;

/* How many elements `t` has (the product of its dims). */
KILN_HIDDEN size_t kiln_tensor_elements(const kiln_tensor *t);

/* A Tensor holding a copy of the session's output `out`. */
KILN_HIDDEN PyObject *kiln_tensor_from_output(const kiln_tensor *out);

/* numpy.asarray, looked up when the module is created. */
extern KILN_HIDDEN PyObject *kiln_numpy_asarray;

/* _strings.c. */
/* What an input's tensor points into while the run lasts: a buffer-protocol
 * view, or for a string input the list of its str/bytes elements (whose
 * UTF-8 bytes the pointers address) and the pointers. */
typedef struct {
  Py_buffer view;
  PyObject *strings;
  const char **pointers;
} input_view;
KILN_HIDDEN void kiln_release_input(input_view *in);
/* Reads string input `name` from `obj` (anything numpy.asarray takes, of
 * str or bytes elements): a pointer to each element's UTF-8 bytes. */
KILN_HIDDEN int kiln_read_strings(const char *name, PyObject *obj, input_view *in,
                                  kiln_tensor *t);
/* A string output as a NumPy array of str. */
KILN_HIDDEN PyObject *kiln_strings_to_array(const kiln_tensor *out);

#endif
