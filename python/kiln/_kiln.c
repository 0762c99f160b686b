/*===- _kiln.c - the `kiln` Python module over Kiln's C runtime -----------===*
 *
 * Model (a loaded artifact), Session (runs it) and the module; Tensor (an
 * output's memory over DLPack) is _tensor.c. Inputs are read in place through the buffer protocol (any
 * C-contiguous NumPy array), string inputs as pointers to their elements'
 * UTF-8 bytes; string outputs are NumPy arrays of str. Errors are kiln.Error with the runtime's
 * message and status. Plain CPython API, no NumPy C API.
 *
 *===----------------------------------------------------------------------===*/
#include "_kiln.h"

#include <stdlib.h>
#include <string.h>

PyObject *KilnError;
static PyObject *numpy_from_dlpack; /* numpy.from_dlpack, looked up once */
PyObject *kiln_numpy_asarray; /* numpy.asarray */

/* Raises kiln.Error(the runtime's message) with .status its name. */
static PyObject *raise_status(kiln_status status) {
  PyObject *error = PyObject_CallFunction(KilnError, "s", kiln_last_error());
  if (!error)
    return NULL;
  PyObject *name = PyUnicode_FromString(kiln_status_name(status));
  if (name) {
    PyObject_SetAttrString(error, "status", name);
    Py_DECREF(name);
  }
  PyErr_SetObject(KilnError, error);
  Py_DECREF(error);
  return NULL;
}

static const char *dtype_name(int32_t dtype) { return kiln_dtype_name(dtype); }

/* The kiln dtype of a buffer-protocol format ("f", "<f", "q", ...). */
static int32_t dtype_of_format(const char *format, Py_ssize_t itemsize) {
  if (!format)
    return itemsize == 1 ? KILN_DTYPE_U8 : 0;
  if (*format == '<' || *format == '=' || *format == '@')
    ++format;
  if (format[0] == '\0' || format[1] != '\0')
    return 0;
  switch (*format) {
  case 'f': return KILN_DTYPE_F32;
  case 'd': return KILN_DTYPE_F64;
  case 'e': return KILN_DTYPE_F16;
  case 'b': return KILN_DTYPE_I8;
  case 'B': return KILN_DTYPE_U8;
  case 'h': return KILN_DTYPE_I16;
  case 'H': return KILN_DTYPE_U16;
  case 'i': return itemsize == 4 ? KILN_DTYPE_I32 : 0;
  case 'I': return itemsize == 4 ? KILN_DTYPE_U32 : 0;
  case 'l': case 'q': return itemsize == 8 ? KILN_DTYPE_I64 : 0;
  case 'L': case 'Q': return itemsize == 8 ? KILN_DTYPE_U64 : 0;
  case '?': return KILN_DTYPE_BOOL;
  }
  return 0;
}

/*===--- Model -----------------------------------------------------------===*/

typedef struct {
  PyObject_HEAD
  kiln_model *model;
  PyObject *input_names; /* tuple of str: the inputs a caller passes */
  PyObject *output_names;
  uint32_t *input_index; /* the model's index of each caller input */
  uint32_t num_caller_inputs;
  uint8_t *output_is_update; /* a training step's parameter updates: not returned */
  PyObject *parent; /* an inference entry's training model (keeps it alive) */
} ModelObject;

static PyTypeObject ModelType, SessionType;

static void model_dealloc(ModelObject *self) {
  PyMem_Free(self->input_index);
  PyMem_Free(self->output_is_update);
  Py_XDECREF(self->input_names);
  Py_XDECREF(self->output_names);
  if (self->model)
    kiln_model_free(self->model); /* nothing for an inference entry */
  Py_XDECREF(self->parent);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The outputs' names, or the caller inputs' (parameters left out). */
static PyObject *names_of(ModelObject *self, int outputs) {
  kiln_model *model = self->model;
  uint32_t n = outputs ? kiln_model_num_outputs(model) : self->num_caller_inputs;
  PyObject *names = PyTuple_New(n);
  for (uint32_t i = 0; names && i < n; ++i) {
    const kiln_model_tensor *t = outputs ? kiln_model_output(model, i)
                                         : kiln_model_input(model, self->input_index[i]);
    PyObject *name = PyUnicode_FromString(t->name);
    if (!name) {
      Py_DECREF(names);
      return NULL;
    }
    PyTuple_SET_ITEM(names, i, name);
  }
  return names;
}

static PyObject *wrap_model(kiln_model *model, PyObject *parent);

/* kiln.load(path, sha256=None) */
static PyObject *kiln_load(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"path", "sha256", NULL};
  PyObject *path_obj = NULL;
  const char *sha256 = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|z", keywords, PyUnicode_FSConverter,
                                   &path_obj, &sha256))
    return NULL;
  kiln_model *model = NULL;
  kiln_status status;
  const char *path = PyBytes_AS_STRING(path_obj);
  Py_BEGIN_ALLOW_THREADS
  status = sha256 ? kiln_model_load_verified(path, sha256, &model) : kiln_model_load(path, &model);
  Py_END_ALLOW_THREADS
  Py_DECREF(path_obj);
  if (status != KILN_OK)
    return raise_status(status);
  return wrap_model(model, NULL);
}

/* A Model object for `model` (taken over); `parent` (borrowed) for an
 * inference entry, whose model belongs to it. */
static PyObject *wrap_model(kiln_model *model, PyObject *parent) {
  ModelObject *self = PyObject_New(ModelObject, &ModelType);
  if (!self) {
    kiln_model_free(model);
    return NULL;
  }
  self->model = model;
  self->parent = parent;
  Py_XINCREF(parent);
  self->input_names = self->output_names = NULL;
  self->num_caller_inputs = 0;
  self->input_index = PyMem_Malloc((kiln_model_num_inputs(model) + 1) * sizeof(uint32_t));
  self->output_is_update = PyMem_Malloc(kiln_model_num_outputs(model) + 1);
  if (!self->input_index || !self->output_is_update) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  for (uint32_t i = 0; i < kiln_model_num_inputs(model); ++i)
    if (!kiln_model_input_is_parameter(model, i))
      self->input_index[self->num_caller_inputs++] = i;
  for (uint32_t i = 0; i < kiln_model_num_outputs(model); ++i)
    self->output_is_update[i] = (uint8_t)kiln_model_output_updates_parameter(model, i);
  self->input_names = names_of(self, 0);
  self->output_names = names_of(self, 1);
  if (!self->input_names || !self->output_names) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static PyObject *describe(const kiln_model_tensor *t) {
  PyObject *dims = PyTuple_New(t->rank);
  for (int32_t d = 0; dims && d < t->rank; ++d) {
    PyObject *v = t->dims[d] < 0 ? (Py_INCREF(Py_None), Py_None) : PyLong_FromLongLong(t->dims[d]);
    PyTuple_SET_ITEM(dims, d, v);
  }
  if (!dims)
    return NULL;
  PyObject *r = Py_BuildValue("(ssN)", t->name, dtype_name(t->dtype), dims);
  return r;
}

/* model.inputs / model.outputs: [(name, dtype, dims with None for dynamic)] */
/* closure NULL: the caller's inputs; 1: outputs; 2: parameters. */
static PyObject *model_tensors(ModelObject *self, void *closure) {
  intptr_t which = (intptr_t)closure;
  kiln_model *m = self->model;
  uint32_t index[4096 + 1], n = 0;
  if (which == 1) {
    for (uint32_t i = 0; i < kiln_model_num_outputs(m) && n < 4096; ++i)
      index[n++] = i;
  } else {
    for (uint32_t i = 0; i < kiln_model_num_inputs(m) && n < 4096; ++i)
      if (kiln_model_input_is_parameter(m, i) == (which == 2))
        index[n++] = i;
  }
  PyObject *list = PyList_New(n);
  for (uint32_t i = 0; list && i < n; ++i) {
    PyObject *d = describe(which == 1 ? kiln_model_output(m, index[i]) : kiln_model_input(m, index[i]));
    if (!d) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, d);
  }
  return list;
}

static PyObject *model_string(ModelObject *self, void *closure) {
  const char *which = closure;
  const char *v = strcmp(which, "hash") == 0     ? kiln_model_content_hash(self->model)
                  : strcmp(which, "target") == 0 ? kiln_model_target(self->model)
                                                 : kiln_model_device(self->model);
  return PyUnicode_FromString(v ? v : "");
}

/* model.inference: a training step's inference entry, or None. */
static PyObject *model_inference(ModelObject *self, void *closure) {
  kiln_model *entry = kiln_model_inference(self->model);
  if (!entry)
    Py_RETURN_NONE;
  return wrap_model(entry, (PyObject *)self);
}

static PyObject *model_max_batch(ModelObject *self, void *closure) {
  return PyLong_FromUnsignedLongLong(kiln_model_max_batch(self->model));
}

/*===--- Session ---------------------------------------------------------===*/

typedef struct {
  PyObject_HEAD
  ModelObject *model;
  kiln_session *session;
  int running;
  uint32_t num_inputs, num_outputs;
} SessionObject;

static PyObject *wrap_session(ModelObject *model, kiln_session *session);

/* model.session(threads=0) */
static PyObject *model_session(ModelObject *self, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"threads", NULL};
  int threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|i", keywords, &threads))
    return NULL;
  if (threads < 0) {
    PyErr_SetString(PyExc_ValueError, "threads must be >= 0 (0: the OpenMP default)");
    return NULL;
  }
  kiln_session_options options = {0};
  options.num_threads = threads;
  kiln_session *session = NULL;
  kiln_status status;
  Py_BEGIN_ALLOW_THREADS
  status = kiln_session_create_with_options(self->model, &options, &session);
  Py_END_ALLOW_THREADS
  if (status != KILN_OK)
    return raise_status(status);
  return wrap_session(self, session);
}

/* A Session object for `session` (taken over) of `model` (borrowed). */
static PyObject *wrap_session(ModelObject *model, kiln_session *session) {
  SessionObject *s = PyObject_New(SessionObject, &SessionType);
  if (!s) {
    kiln_session_free(session);
    return NULL;
  }
  Py_INCREF(model);
  s->model = model;
  s->session = session;
  s->running = 0;
  s->num_inputs = model->num_caller_inputs;
  s->num_outputs = kiln_model_num_outputs(model->model);
  return (PyObject *)s;
}

static void session_dealloc(SessionObject *self) {
  if (self->session)
    kiln_session_free(self->session);
  Py_XDECREF(self->model);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Reads input i from `obj`: a string input through kiln_read_strings, any other
 * through the buffer protocol (C-contiguous). */
static int read_input(SessionObject *self, uint32_t i, PyObject *obj, input_view *in,
                      kiln_tensor *t) {
  const kiln_model_tensor *input = kiln_model_input(self->model->model,
                                                    self->model->input_index[i]);
  const char *name = input->name;
  memset(in, 0, sizeof(*in));
  if (input->dtype == KILN_DTYPE_STRING)
    return kiln_read_strings(name, obj, in, t);
  Py_buffer *view = &in->view;
  if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "input '%s': expected a C-contiguous array (numpy.ascontiguousarray), got %s",
                 name, Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (view->ndim > KILN_MAX_RANK) {
    PyErr_Format(KilnError, "input '%s' has %d dims; Kiln takes at most %d", name, view->ndim,
                 KILN_MAX_RANK);
    PyBuffer_Release(view);
    return -1;
  }
  int32_t dtype = dtype_of_format(view->format, view->itemsize);
  if (!dtype) {
    PyErr_Format(KilnError, "input '%s': unsupported element format '%s'", name,
                 view->format ? view->format : "B");
    PyBuffer_Release(view);
    return -1;
  }
  memset(t, 0, sizeof(*t));
  t->data = view->buf;
  t->dtype = dtype;
  t->rank = view->ndim;
  for (int d = 0; d < view->ndim; ++d)
    t->dims[d] = view->shape[d];
  return 0;
}

/* session.run(inputs, dlpack=False): inputs a dict by name or a sequence in
 * the model's order; returns {name: numpy array} (or {name: kiln.Tensor}
 * with dlpack=True). */
static PyObject *session_run(SessionObject *self, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"inputs", "dlpack", NULL};
  PyObject *inputs;
  int as_tensors = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p", keywords, &inputs, &as_tensors))
    return NULL;
  uint32_t n = self->num_inputs;
  kiln_tensor tensors[16];
  input_view views[16];
  kiln_tensor *t = tensors;
  input_view *v = views;
  if (n > 16) {
    t = calloc(n, sizeof(kiln_tensor));
    v = calloc(n, sizeof(input_view));
    if (!t || !v) {
      free(t == tensors ? NULL : t);
      free(v == views ? NULL : v);
      return PyErr_NoMemory();
    }
  }
  uint32_t read = 0;
  PyObject *result = NULL;
  int is_dict = PyDict_Check(inputs);
  if (is_dict) {
    /* Every key names an input (a typo is named, not reported as missing). */
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(inputs, &pos, &key, &value)) {
      int known = PySequence_Contains(self->model->input_names, key);
      if (known < 0)
        goto done;
      if (!known) {
        PyErr_Format(KilnError, "the model has no input %R (its inputs: %R)", key,
                     self->model->input_names);
        goto done;
      }
    }
  } else if (!PySequence_Check(inputs) || PySequence_Size(inputs) != (Py_ssize_t)n) {
    PyErr_Format(KilnError, "expected a dict of the model's %u inputs by name, or a sequence of %u",
                 n, n);
    goto done;
  }
  for (; read < n; ++read) {
    PyObject *obj;
    if (is_dict) {
      obj = PyDict_GetItemWithError(inputs, PyTuple_GET_ITEM(self->model->input_names, read));
      if (!obj) {
        if (!PyErr_Occurred())
          PyErr_Format(KilnError, "input '%s' is missing",
                       kiln_model_input(self->model->model, self->model->input_index[read])->name);
        goto done;
      }
      Py_INCREF(obj);
    } else {
      obj = PySequence_GetItem(inputs, read);
      if (!obj)
        goto done;
    }
    int rc = read_input(self, read, obj, &v[read], &t[read]);
    Py_DECREF(obj);
    if (rc != 0)
      goto done;
  }
  if (self->running) {
    PyErr_SetString(KilnError, "this session is running in another thread (one session per "
                               "thread: make one with model.session())");
    goto done;
  }
  self->running = 1;
  kiln_status status;
  Py_BEGIN_ALLOW_THREADS
  status = kiln_session_run(self->session, t, n);
  Py_END_ALLOW_THREADS
  self->running = 0;
  if (status != KILN_OK) {
    raise_status(status);
    goto done;
  }
  result = PyDict_New();
  for (uint32_t i = 0; result && i < self->num_outputs; ++i) {
    /* A training step's parameter updates stay in the session. */
    if (self->model->output_is_update[i])
      continue;
    kiln_tensor out;
    if (kiln_session_output(self->session, i, &out) != KILN_OK) {
      raise_status(KILN_ERROR_RUN);
      Py_CLEAR(result);
      break;
    }
    if (out.dtype == KILN_DTYPE_STRING) {
      /* DLPack has no strings: a NumPy array of str either way. */
      PyObject *value = kiln_strings_to_array(&out);
      if (!value || PyDict_SetItem(result, PyTuple_GET_ITEM(self->model->output_names, i), value))
        Py_CLEAR(result);
      Py_XDECREF(value);
      continue;
    }
    PyObject *tensor = kiln_tensor_from_output(&out);
    PyObject *value = tensor;
    if (tensor && !as_tensors) {
      /* NumPy before 1.25 (Debian 12's 1.24) imports no bool over DLPack:
       * a bool output goes through the buffer protocol (format "?"). */
      value = PyObject_CallOneArg(out.dtype == KILN_DTYPE_BOOL ? kiln_numpy_asarray : numpy_from_dlpack,
                                  tensor);
      Py_DECREF(tensor);
    }
    if (!value || PyDict_SetItem(result, PyTuple_GET_ITEM(self->model->output_names, i), value)) {
      Py_XDECREF(value);
      Py_CLEAR(result);
      break;
    }
    Py_DECREF(value);
  }
done:
  for (uint32_t i = 0; i < read; ++i)
    kiln_release_input(&v[i]);
  if (t != tensors) {
    free(t);
    free(v);
  }
  return result;
}

/* A writable numpy array over `t`, memory the session owns (the array
 * keeps the session alive). */
static PyObject *array_over_session(SessionObject *self, const kiln_tensor *t) {
  TensorObject *view = PyObject_New(TensorObject, &KilnTensorType);
  if (!view)
    return NULL;
  view->data = t->data;
  view->dtype = t->dtype;
  view->rank = t->rank;
  memcpy(view->dims, t->dims, sizeof(view->dims));
  Py_INCREF(self);
  view->owner = (PyObject *)self;
  PyObject *array = PyObject_CallOneArg(kiln_numpy_asarray, (PyObject *)view);
  Py_DECREF(view);
  return array;
}

/* session.parameter(name) -> a writable numpy array over the session's
 * buffer (it keeps the session alive). On the CPU each run updates it; on
 * a GPU the parameter lives in device memory and the buffer is its host
 * copy, refreshed by each call (kiln_session_parameter). */
static PyObject *session_parameter(SessionObject *self, PyObject *arg) {
  const char *name = PyUnicode_AsUTF8(arg);
  if (!name)
    return NULL;
  kiln_tensor t;
  kiln_status status = kiln_session_parameter(self->session, name, &t);
  if (status != KILN_OK)
    return raise_status(status);
  return array_over_session(self, &t);
}

/* session.input_buffer(name, shape) -> a writable numpy array over the
 * session's own buffer for that input (kiln_session_input_buffer: pinned
 * memory on a GPU, which a run given this array copies to the device
 * without staging it first). */
static PyObject *session_input_buffer(SessionObject *self, PyObject *args) {
  const char *name;
  PyObject *shape;
  if (!PyArg_ParseTuple(args, "sO", &name, &shape))
    return NULL;
  ModelObject *m = self->model;
  uint32_t index = UINT32_MAX;
  for (uint32_t k = 0; k < m->num_caller_inputs && index == UINT32_MAX; ++k)
    if (strcmp(kiln_model_input(m->model, m->input_index[k])->name, name) == 0)
      index = m->input_index[k];
  if (index == UINT32_MAX) {
    PyErr_Format(KilnError, "the model has no input '%s' the caller passes", name);
    return NULL;
  }
  const kiln_model_tensor *want = kiln_model_input(m->model, index);
  PyObject *dims_seq = PySequence_Fast(shape, "shape must be a sequence of ints");
  if (!dims_seq)
    return NULL;
  int64_t dims[KILN_MAX_RANK] = {0};
  Py_ssize_t rank = PySequence_Fast_GET_SIZE(dims_seq);
  if (rank != want->rank) {
    Py_DECREF(dims_seq);
    PyErr_Format(KilnError, "input '%s' has rank %d, the shape %zd dims", name, want->rank,
                 rank);
    return NULL;
  }
  for (Py_ssize_t d = 0; d < rank; ++d)
    dims[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(dims_seq, d));
  Py_DECREF(dims_seq);
  if (PyErr_Occurred())
    return NULL;
  kiln_tensor t;
  kiln_status status = kiln_session_input_buffer(self->session, index, dims, &t);
  if (status != KILN_OK)
    return raise_status(status);
  return array_over_session(self, &t);
}

/* session.inference(): a session of the inference entry on this
 * training session's parameters. */
static PyObject *session_inference(SessionObject *self, PyObject *unused) {
  ModelObject *entry = (ModelObject *)model_inference(self->model, NULL);
  if (!entry || (PyObject *)entry == Py_None) {
    Py_XDECREF(entry);
    if (!PyErr_Occurred())
      PyErr_SetString(KilnError, "the model has no inference entry (only kiln compile --train "
                                 "artifacts have one)");
    return NULL;
  }
  kiln_session *session = NULL;
  kiln_status status = kiln_session_create_inference(self->session, NULL, &session);
  PyObject *result = status == KILN_OK ? wrap_session(entry, session) : raise_status(status);
  Py_DECREF(entry);
  return result;
}

/* session.save_state(path) / session.load_state(path) */
static PyObject *session_state_file(SessionObject *self, PyObject *args, int save) {
  PyObject *path_obj = NULL;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj))
    return NULL;
  if (self->running) {
    Py_DECREF(path_obj);
    PyErr_SetString(KilnError, "the session is running on another thread");
    return NULL;
  }
  kiln_status status;
  const char *path = PyBytes_AS_STRING(path_obj);
  Py_BEGIN_ALLOW_THREADS
  status = save ? kiln_session_save_state(self->session, path)
                : kiln_session_load_state(self->session, path);
  Py_END_ALLOW_THREADS
  Py_DECREF(path_obj);
  if (status != KILN_OK)
    return raise_status(status);
  Py_RETURN_NONE;
}
static PyObject *session_save_state(SessionObject *self, PyObject *args) {
  return session_state_file(self, args, 1);
}
static PyObject *session_load_state(SessionObject *self, PyObject *args) {
  return session_state_file(self, args, 0);
}

static PyObject *session_memory(SessionObject *self, PyObject *unused) {
  kiln_memory_stats s;
  if (kiln_session_memory_stats(self->session, &s) != KILN_OK)
    return raise_status(KILN_ERROR_INVALID_ARGUMENT);
  return Py_BuildValue("{sKsKsKsKsK}", "reserved_bytes", s.reserved_bytes, "in_use_bytes",
                       s.in_use_bytes, "peak_bytes", s.peak_bytes, "heap_allocations",
                       s.heap_allocations, "requests", s.requests);
}

static PyObject *session_device(SessionObject *self, PyObject *unused) {
  kiln_device_stats s;
  kiln_library_plan_stats plans;
  if (kiln_session_device_stats(self->session, &s) != KILN_OK ||
      kiln_session_library_plan_stats(self->session, &plans) != KILN_OK)
    return raise_status(KILN_ERROR_INVALID_ARGUMENT);
  return Py_BuildValue("{sKsKsKsKsKsKsKsKsKsKsssKsKss}", "stream_runs", s.stream_runs,
                       "graph_captures", s.graph_captures, "graph_replays", s.graph_replays,
                       "kernel_launches", s.kernel_launches, "library_calls", s.library_calls,
                       "device_allocations", s.device_allocations, "bytes_to_device",
                       s.bytes_to_device, "bytes_to_host", s.bytes_to_host, "replay_host_ns",
                       s.replay_host_ns, "replay_staging_ns", s.replay_staging_ns, "fallback",
                       s.fallback,
                       "cudnn_graph_plans", plans.cudnn_graph_plans, "cudnn_api_plans",
                       plans.cudnn_api_plans, "cudnn_fallback", plans.cudnn_fallback);
}

static PyObject *session_threads(SessionObject *self, PyObject *unused) {
  kiln_thread_stats s;
  if (kiln_session_thread_stats(self->session, &s) != KILN_OK)
    return raise_status(KILN_ERROR_INVALID_ARGUMENT);
  return Py_BuildValue("{sisisOsOsKsKsKsK}", "threads", s.threads, "reduced_threads",
                       s.reduced_threads, "adaptive", s.adaptive ? Py_True : Py_False,
                       "reduced_now", s.reduced_now ? Py_True : Py_False, "runs", s.runs,
                       "reduced_runs", s.reduced_runs, "tries", s.tries, "switches", s.switches);
}

static PyObject *session_set_adaptive(SessionObject *self, PyObject *arg) {
  int enabled = PyObject_IsTrue(arg);
  if (enabled < 0)
    return NULL;
  if (kiln_session_set_adaptive_threads(self->session, enabled) != KILN_OK)
    return raise_status(KILN_ERROR_INVALID_ARGUMENT);
  Py_RETURN_NONE;
}

static PyObject *session_library_calls(SessionObject *self, PyObject *unused) {
  uint32_t calls = kiln_model_library_call_count(self->model->model);
  PyObject *list = PyList_New(calls);
  for (uint32_t i = 0; list && i < calls; ++i) {
    kiln_library_call_info info;
    kiln_status status = kiln_session_library_call_info(self->session, i, &info);
    if (status != KILN_OK) {
      Py_DECREF(list);
      return raise_status(status);
    }
    PyObject *kernel = Py_None;
    if (info.kernel == KILN_KERNEL_END)
      Py_INCREF(Py_None);
    else
      kernel = PyLong_FromUnsignedLong(info.kernel);
    PyObject *entry = kernel ? Py_BuildValue("{sNss}", "kernel", kernel, "implementation",
                                             info.implementation)
                             : NULL;
    if (!entry) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, entry);
  }
  return list;
}

static PyMethodDef session_methods[] = {
    {"run", (PyCFunction)(void (*)(void))session_run, METH_VARARGS | METH_KEYWORDS,
     "run(inputs, dlpack=False) -> {output name: numpy array (kiln.Tensor with dlpack=True)}\n"
     "inputs: {name: array} or [array, ...] in the model's order; arrays are read in place.\n"
     "A training step's parameter updates are not returned: session.parameter(name) reads them."},
    {"memory_stats", (PyCFunction)session_memory, METH_NOARGS, "the pooled allocator's counters"},
    {"thread_stats", (PyCFunction)session_threads, METH_NOARGS,
     "thread_stats() -> {'threads', 'reduced_threads', 'adaptive', 'reduced_now', 'runs', "
     "'reduced_runs', 'tries', 'switches'}: a CPU session's runs on its thread count and on "
     "half of it while another process holds a core (kiln_session_thread_stats)"},
    {"set_adaptive_threads", (PyCFunction)session_set_adaptive, METH_O,
     "set_adaptive_threads(enabled): True lets a CPU session run on half its thread count while "
     "that is faster (another process holds a core); False (the default unless "
     "KILN_ADAPTIVE_THREADS=1) keeps every later run on the session's count"},
    {"library_calls", (PyCFunction)session_library_calls, METH_NOARGS,
     "library_calls() -> [{'kernel': k or None, 'implementation': str}, ...]: for each library "
     "call, the kernel it last ran in (kiln inspect's numbering; None before it ran) and the "
     "library's implementation that ran it ('brgconv:avx512_core'; '' where the device does "
     "not say)"},
    {"device_stats", (PyCFunction)session_device, METH_NOARGS,
     "a GPU session's launches: stream runs, CUDA Graph captures and replays, kernels, device "
     "allocations, why a capture fell back, cuDNN plans as fused graphs and through its "
     "convolution API and why one left the graph API (all zero on the CPU)"},
    {"parameter", (PyCFunction)session_parameter, METH_O,
     "parameter(name) -> numpy array over the session's buffer of that parameter (writable; "
     "valid while the session lives). On the CPU each run updates it; on a GPU it is the host "
     "copy of the parameter, which stays in GPU memory: each call refreshes it, and what it "
     "holds when the next run starts is what that run uses"},
    {"input_buffer", (PyCFunction)session_input_buffer, METH_VARARGS,
     "input_buffer(name, shape) -> numpy array over the session's own buffer for that input "
     "(writable; valid until the session goes or a larger one is asked for). Pass it to run: "
     "on a GPU it is pinned memory, copied to the device without staging it first"},
    {"inference", (PyCFunction)session_inference, METH_NOARGS,
     "inference() -> Session of the model's inference entry computing with this training "
     "session's current parameters (shared, not copied; do not run both at once)"},
    {"save_state", (PyCFunction)session_save_state, METH_VARARGS,
     "save_state(path): every session-owned tensor (parameters, optimiser state, running "
     "statistics) to a Kiln checkpoint file"},
    {"load_state", (PyCFunction)session_load_state, METH_VARARGS,
     "load_state(path): the session-owned tensors from a checkpoint (all must be there, same "
     "dtypes and dims; nothing changes otherwise)"},
    {NULL}};

static PyObject *session_model(SessionObject *self, void *closure) {
  Py_INCREF(self->model);
  return (PyObject *)self->model;
}
static PyGetSetDef session_getset[] = {{"model", (getter)session_model, NULL, "the model", NULL},
                                       {NULL}};

static PyTypeObject SessionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kiln.Session",
    .tp_basicsize = sizeof(SessionObject),
    .tp_dealloc = (destructor)session_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A session of a model: its arena, threads and prepared library calls. One "
              "thread at a time; make one per thread.",
    .tp_methods = session_methods,
    .tp_getset = session_getset,
};

static PyMethodDef model_methods[] = {
    {"session", (PyCFunction)(void (*)(void))model_session, METH_VARARGS | METH_KEYWORDS,
     "session(threads=0) -> Session (threads: the library calls' threads; 0: all cores)"},
    {NULL}};
static PyGetSetDef model_getset[] = {
    {"inputs", (getter)model_tensors, NULL, "[(name, dtype, dims)]; None for a dynamic dim", NULL},
    {"outputs", (getter)model_tensors, NULL, "[(name, dtype, dims)]", (void *)1},
    {"parameters", (getter)model_tensors, NULL,
     "[(name, dtype, dims)] the session owns (a training step's parameters and optimiser state)",
     (void *)2},
    {"content_hash", (getter)model_string, NULL, "the model's and flags' SHA-256", "hash"},
    {"target", (getter)model_string, NULL, "the target it was compiled for", "target"},
    {"device", (getter)model_string, NULL, "the device its code runs on", "device"},
    {"max_batch", (getter)model_max_batch, NULL, "the largest batch (0: any)", NULL},
    {"inference", (getter)model_inference, NULL,
     "a training step's inference entry (a Model whose parameters are session-owned), or None",
     NULL},
    {NULL}};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kiln.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled model (kiln.load).",
    .tp_methods = model_methods,
    .tp_getset = model_getset,
};

static PyMethodDef module_methods[] = {
    {"load", (PyCFunction)(void (*)(void))kiln_load, METH_VARARGS | METH_KEYWORDS,
     "load(path, sha256=None) -> Model: opens a compiled model (shared library); with sha256, "
     "only if the file's SHA-256 is that (kiln_model_load_verified)."},
    {NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "kiln._kiln",
                                        "Kiln's runtime: load and run compiled models.", -1,
                                        module_methods};

PyMODINIT_FUNC PyInit__kiln(void) {
  if (PyType_Ready(&KilnTensorType) < 0 || PyType_Ready(&ModelType) < 0 ||
      PyType_Ready(&SessionType) < 0)
    return NULL;
  PyObject *numpy = PyImport_ImportModule("numpy");
  if (!numpy)
    return NULL;
  numpy_from_dlpack = PyObject_GetAttrString(numpy, "from_dlpack");
  kiln_numpy_asarray = PyObject_GetAttrString(numpy, "asarray");
  Py_DECREF(numpy);
  if (!numpy_from_dlpack || !kiln_numpy_asarray)
    return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m)
    return NULL;
  KilnError = PyErr_NewExceptionWithDoc("kiln.Error",
                                        "A Kiln runtime error: the runtime's message; .status is its status name (KILN_ERROR_SHAPE, ...)",
                                        PyExc_RuntimeError, NULL);
  Py_INCREF(KilnError);
  PyModule_AddObject(m, "Error", KilnError);
  Py_INCREF(&ModelType);
  PyModule_AddObject(m, "Model", (PyObject *)&ModelType);
  Py_INCREF(&SessionType);
  PyModule_AddObject(m, "Session", (PyObject *)&SessionType);
  Py_INCREF(&KilnTensorType);
  PyModule_AddObject(m, "Tensor", (PyObject *)&KilnTensorType);
  return m;
}
