/*===- _strings.c - string tensors between Python and Kiln ----------------===*
 *
 * A string input read from anything numpy.asarray takes of str or bytes
 * elements (pointers to their UTF-8 bytes, nothing copied), and a string
 * output turned into a NumPy array of str.
 *
 *===----------------------------------------------------------------------===*/
#include "_kiln.h"

#include <stdlib.h>
#include <string.h>

/* What an input's tensor points into (_kiln.h) given back. */
void kiln_release_input(input_view *in) {
  if (in->strings) {
    Py_CLEAR(in->strings);
    free(in->pointers);
    in->pointers = NULL;
  } else {
    PyBuffer_Release(&in->view);
  }
}

/* Reads string input `name` from `obj` (anything numpy.asarray takes, of
 * str or bytes elements): a pointer to each element's UTF-8 bytes. */
int kiln_read_strings(const char *name, PyObject *obj, input_view *in, kiln_tensor *t) {
  PyObject *array = PyObject_CallFunctionObjArgs(kiln_numpy_asarray, obj,
                                                 (PyObject *)&PyBaseObject_Type, NULL);
  if (!array)
    return -1;
  PyObject *shape = PyObject_GetAttrString(array, "shape");
  PyObject *flat = PyObject_CallMethod(array, "ravel", NULL);
  PyObject *items = flat ? PyObject_CallMethod(flat, "tolist", NULL) : NULL;
  Py_DECREF(array);
  Py_XDECREF(flat);
  if (!shape || !items || !PyTuple_Check(shape) || !PyList_Check(items)) {
    Py_XDECREF(shape);
    Py_XDECREF(items);
    return -1;
  }
  Py_ssize_t rank = PyTuple_GET_SIZE(shape), n = PyList_GET_SIZE(items);
  memset(t, 0, sizeof(*t));
  if (rank > KILN_MAX_RANK) {
    PyErr_Format(KilnError, "input '%s' has %zd dims; Kiln takes at most %d", name, rank,
                 KILN_MAX_RANK);
    goto fail;
  }
  for (Py_ssize_t d = 0; d < rank; ++d)
    t->dims[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
  in->pointers = malloc((size_t)(n ? n : 1) * sizeof(const char *));
  if (!in->pointers) {
    PyErr_NoMemory();
    goto fail;
  }
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject *item = PyList_GET_ITEM(items, k);
    const char *text = NULL;
    Py_ssize_t length = 0;
    if (PyUnicode_Check(item)) {
      text = PyUnicode_AsUTF8AndSize(item, &length);
    } else if (PyBytes_Check(item)) {
      char *bytes = NULL;
      if (PyBytes_AsStringAndSize(item, &bytes, &length) == 0)
        text = bytes;
    } else {
      PyErr_Format(PyExc_TypeError, "input '%s': element %zd is %s; a string input takes str "
                   "or bytes", name, k, Py_TYPE(item)->tp_name);
    }
    if (!text)
      goto fail;
    if (strlen(text) != (size_t)length) {
      PyErr_Format(KilnError, "input '%s': element %zd holds a NUL character (Kiln's strings "
                   "end at the first)", name, k);
      goto fail;
    }
    in->pointers[k] = text;
  }
  Py_DECREF(shape);
  in->strings = items;
  t->data = (void *)in->pointers;
  t->dtype = KILN_DTYPE_STRING;
  t->rank = (int32_t)rank;
  return 0;
fail:
  Py_DECREF(shape);
  Py_DECREF(items);
  free(in->pointers);
  in->pointers = NULL;
  return -1;
}

/* A string output as a NumPy array of str (invalid UTF-8 kept as
 * surrogate escapes; a null element is ""). */
PyObject *kiln_strings_to_array(const kiln_tensor *out) {
  size_t count = kiln_tensor_elements(out);
  PyObject *list = PyList_New((Py_ssize_t)count);
  PyObject *shape = PyTuple_New(out->rank);
  if (!list || !shape)
    goto fail;
  for (int32_t d = 0; d < out->rank; ++d) {
    PyObject *dim = PyLong_FromLongLong(out->dims[d]);
    if (!dim)
      goto fail;
    PyTuple_SET_ITEM(shape, d, dim);
  }
  const char *const *strings = (const char *const *)out->data;
  for (size_t k = 0; k < count; ++k) {
    const char *text = strings[k] ? strings[k] : "";
    PyObject *item = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "surrogateescape");
    if (!item)
      goto fail;
    PyList_SET_ITEM(list, (Py_ssize_t)k, item);
  }
  PyObject *array = PyObject_CallFunctionObjArgs(kiln_numpy_asarray, list,
                                                 (PyObject *)&PyBaseObject_Type, NULL);
  PyObject *shaped = array ? PyObject_CallMethod(array, "reshape", "(O)", shape) : NULL;
  Py_XDECREF(array);
  Py_DECREF(list);
  Py_DECREF(shape);
  return shaped;
fail:
  Py_XDECREF(list);
  Py_XDECREF(shape);
  return NULL;
}

