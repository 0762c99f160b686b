/*===- state.c - session-owned tensors, inference sessions, checkpoints ----===*
 *
 * A training step's parameters and optimiser state live in the session
 * (kiln_model_state): created here from the artifact's initial bytes,
 * updated after each run, read and written by name. On a device whose
 * memory is not the host's (CUDA) they stay in device memory between
 * runs: each tensor crosses to the host only when it is read by name or
 * saved, and back only after the caller may have written it (by name, or
 * a checkpoint loaded). An inference session
 * (kiln_session_create_inference) uses a training session's buffers
 * instead of its own, so it computes with the current parameters; the
 * buffers go with the last session using them. Checkpoints save and load
 * them to a file in a small documented format (docs/Training.md).
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t kiln_input_bytes(const kiln_model_v1 *abi, uint32_t i) {
  const kiln_model_tensor *t = &abi->inputs[i];
  return kiln_element_count(t->rank, t->dims) * kiln_dtype_size(t->dtype);
}

static const char *state_name(const kiln_model_v1 *abi, uint32_t k) {
  return abi->inputs[abi->state[k].input].name;
}

static void release_store(kiln_state_store *store) {
  if (!store || __atomic_sub_fetch(&store->references, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  for (uint32_t k = 0; k < store->count; ++k)
    free(store->buffers[k]);
  if (store->device_buffers) {
    int saved = store->device->enter(0);
    for (uint32_t k = 0; k < store->count; ++k)
      if (store->device_buffers[k])
        store->device->release(NULL, store->device_buffers[k]);
    store->device->leave(0, saved);
  }
  free(store->buffers);
  free(store->device_buffers);
  free(store->where);
  free(store);
}

/* Whether the session's tensors stay in device memory between runs. */
static int resident(const kiln_session *s) {
  return s->store && s->store->device_buffers != NULL;
}

kiln_status kiln_state_create(kiln_session *s, const kiln_session *bind_to) {
  const kiln_model_v1 *abi = s->model->abi;
  uint32_t n_state = abi->num_state, n_in = abi->num_inputs;
  s->state = calloc(n_state + 1, sizeof(void *));
  s->state_of = malloc((n_in + 1) * sizeof(int32_t));
  s->store_of = calloc(n_state + 1, sizeof(uint32_t));
  if (!s->state || !s->state_of || !s->store_of)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  for (uint32_t i = 0; i < n_in; ++i)
    s->state_of[i] = -1;
  for (uint32_t k = 0; k < n_state; ++k)
    s->state_of[abi->state[k].input] = (int32_t)k;
  const kiln_device *device = s->model->device;
  if (n_state && !device->memory_is_host) {
    s->resident_in = calloc(n_in + 1, sizeof(void *));
    s->resident_out = calloc(abi->num_outputs + 1, sizeof(void *));
    if (!s->resident_in || !s->resident_out)
      return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  if (bind_to) {
    /* Each tensor is the training session's of the same name, dtype and
     * dims. */
    const kiln_model_v1 *from = bind_to->model->abi;
    for (uint32_t k = 0; k < n_state; ++k) {
      const kiln_model_tensor *t = &abi->inputs[abi->state[k].input];
      for (uint32_t j = 0; j < from->num_state && !s->state[k]; ++j) {
        const kiln_model_tensor *f = &from->inputs[from->state[j].input];
        if (strcmp(f->name, t->name) == 0 && f->dtype == t->dtype && f->rank == t->rank &&
            memcmp(f->dims, t->dims, (size_t)t->rank * sizeof(int64_t)) == 0) {
          s->state[k] = bind_to->state[j];
          s->store_of[k] = bind_to->store_of[j];
        }
      }
      if (!s->state[k])
        return kiln_fail(KILN_ERROR_FORMAT,
                         "the inference entry's parameter '%s' is not one of the training "
                         "step's (the artifact is inconsistent)",
                         t->name);
    }
    s->store = bind_to->store;
    __atomic_add_fetch(&s->store->references, 1, __ATOMIC_RELAXED);
    return KILN_OK;
  }
  kiln_state_store *store = calloc(1, sizeof(*store));
  if (!store)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  store->references = 1;
  store->device = device;
  store->buffers = calloc(n_state + 1, sizeof(void *));
  store->where = calloc(n_state + 1, 1);
  if (s->resident_in)
    store->device_buffers = calloc(n_state + 1, sizeof(void *));
  s->store = store;
  if (!store->buffers || !store->where || (s->resident_in && !store->device_buffers))
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  store->count = n_state;
  for (uint32_t k = 0; k < n_state; ++k) {
    size_t bytes = kiln_input_bytes(abi, abi->state[k].input);
    store->buffers[k] = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!store->buffers[k])
      return kiln_fail(KILN_ERROR_OUT_OF_MEMORY,
                       "out of memory for parameter '%s' (%zu bytes)", state_name(abi, k), bytes);
    memcpy(store->buffers[k], abi->state[k].initial, bytes);
    store->where[k] = KILN_STATE_ON_HOST;
    s->state[k] = store->buffers[k];
    s->store_of[k] = k;
  }
  return KILN_OK;
}

void kiln_state_free(kiln_session *s) {
  release_store(s->store);
  free(s->state);
  free(s->state_of);
  free(s->resident_in);
  free(s->resident_out);
  free(s->store_of);
}

void kiln_state_update(kiln_session *s) {
  const kiln_model_v1 *abi = s->model->abi;
  for (uint32_t k = 0; k < abi->num_state; ++k) {
    const kiln_model_state *st = &abi->state[k];
    if (st->output == KILN_STATE_READ_ONLY)
      continue;
    if (resident(s))
      s->store->where[s->store_of[k]] = KILN_STATE_ON_DEVICE; /* updated there */
    else
      memmove(s->state[k], s->out_data[st->output], kiln_input_bytes(abi, st->input));
  }
}

kiln_status kiln_state_to_device(kiln_session *s, const kiln_resident **out) {
  *out = NULL;
  if (!resident(s))
    return KILN_OK;
  const kiln_model_v1 *abi = s->model->abi;
  kiln_state_store *store = s->store;
  for (uint32_t k = 0; k < abi->num_state; ++k) {
    uint32_t j = s->store_of[k];
    size_t bytes = kiln_input_bytes(abi, abi->state[k].input);
    if (!store->device_buffers[j] &&
        !(store->device_buffers[j] = store->device->allocate(NULL, bytes, 256)))
      return kiln_fail(KILN_ERROR_OUT_OF_MEMORY,
                       "out of device memory for parameter '%s' (%zu bytes)", state_name(abi, k),
                       bytes);
    if (!(store->where[j] & KILN_STATE_ON_DEVICE)) {
      if (store->device->write(s->library, store->device_buffers[j], store->buffers[j], bytes) !=
          0)
        return KILN_ERROR_RUN; /* the device's message */
      store->where[j] |= KILN_STATE_ON_DEVICE;
    }
    s->resident_in[abi->state[k].input] = store->device_buffers[j];
    if (abi->state[k].output != KILN_STATE_READ_ONLY)
      s->resident_out[abi->state[k].output] = store->device_buffers[j];
  }
  s->resident.inputs = s->resident_in;
  s->resident.outputs = s->resident_out;
  *out = &s->resident;
  return KILN_OK;
}

void *kiln_state_on_host(const kiln_session *s, uint32_t k) {
  if (!resident(s))
    return s->state[k];
  uint32_t j = s->store_of[k];
  kiln_state_store *store = s->store;
  if (!(store->where[j] & KILN_STATE_ON_HOST)) {
    const kiln_model_v1 *abi = s->model->abi;
    int saved = store->device->enter(s->num_threads);
    int rc = store->device->read(s->library, store->buffers[j], store->device_buffers[j],
                                 kiln_input_bytes(abi, abi->state[k].input));
    store->device->leave(s->num_threads, saved);
    if (rc != 0)
      return NULL;
    store->where[j] |= KILN_STATE_ON_HOST;
  }
  return store->buffers[j];
}

/* The caller may write tensor k's host buffer: the next run uploads it. */
static void host_written(const kiln_session *s, uint32_t k) {
  if (resident(s))
    s->store->where[s->store_of[k]] = KILN_STATE_ON_HOST;
}

void *kiln_state_output(const kiln_session *s, uint32_t i) {
  if (s->out_data[i] || !resident(s))
    return s->out_data[i];
  const kiln_model_v1 *abi = s->model->abi;
  for (uint32_t k = 0; k < abi->num_state; ++k)
    if (abi->state[k].output == i)
      return kiln_state_on_host(s, k);
  return NULL;
}

int kiln_model_input_is_parameter(const kiln_model *model, uint32_t i) {
  if (!model)
    return 0;
  for (uint32_t k = 0; k < model->abi->num_state; ++k)
    if (model->abi->state[k].input == i)
      return 1;
  return 0;
}

int kiln_model_output_updates_parameter(const kiln_model *model, uint32_t i) {
  if (!model)
    return 0;
  for (uint32_t k = 0; k < model->abi->num_state; ++k)
    if (model->abi->state[k].output == i)
      return 1;
  return 0;
}

kiln_status kiln_session_parameter(kiln_session *session, const char *name,
                                   kiln_tensor *parameter) {
  if (!session || !name || !parameter)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_parameter: null argument");
  const kiln_model_v1 *abi = session->model->abi;
  for (uint32_t k = 0; k < abi->num_state; ++k) {
    const kiln_model_tensor *t = &abi->inputs[abi->state[k].input];
    if (strcmp(t->name, name) != 0)
      continue;
    memset(parameter, 0, sizeof(*parameter));
    parameter->data = kiln_state_on_host(session, k);
    if (!parameter->data)
      return KILN_ERROR_RUN; /* the device's message */
    host_written(session, k);
    parameter->dtype = t->dtype;
    parameter->rank = t->rank;
    for (int32_t d = 0; d < t->rank; ++d)
      parameter->dims[d] = t->dims[d];
    return kiln_ok();
  }
  return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "the model has no parameter '%s'%s", name,
                   abi->num_state ? "" : " (it was not compiled with --train)");
}

kiln_status kiln_session_create_inference(kiln_session *training,
                                          const kiln_session_options *options,
                                          kiln_session **session) {
  if (!training || !session)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_create_inference: null argument");
  kiln_model *entry = kiln_model_inference(training->model);
  if (!entry)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "the session's model has no inference entry (only training steps, kiln "
                     "compile --train, have one)");
  kiln_session_options inherited = {training->num_threads, NULL};
  return kiln_session_create_bound(entry, options ? options : &inherited, training, session);
}

/* Checkpoints: "KILNCKPT", uint32 version (1), uint32 count, then per
 * tensor uint32 name bytes, the name, int32 dtype, int32 rank, int64
 * dims[rank], zero padding to a multiple of 64 bytes from the file's
 * start, and the tensor's bytes (row-major); little-endian. */
#define CHECKPOINT_VERSION 1u
#define CHECKPOINT_MAX_TENSORS 1000000u

struct kiln_checkpoint {
  unsigned char *bytes; /* the file, 64-byte aligned */
  uint32_t count;
  const char **names;   /* into a copy with terminators */
  char *name_storage;
  kiln_tensor *tensors; /* data into `bytes` */
};

void kiln_checkpoint_free(kiln_checkpoint *c) {
  if (!c)
    return;
  free(c->bytes);
  free(c->names);
  free(c->name_storage);
  free(c->tensors);
  free(c);
}

static kiln_status checkpoint_bad(kiln_checkpoint *c, const char *path, const char *why) {
  kiln_checkpoint_free(c);
  return kiln_fail(KILN_ERROR_FORMAT, "'%s' is not a valid Kiln checkpoint: %s", path, why);
}

kiln_status kiln_checkpoint_open(const char *path, kiln_checkpoint **checkpoint) {
  if (!path || !checkpoint)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_checkpoint_open: null argument");
  *checkpoint = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return kiln_fail(KILN_ERROR_LOAD, "cannot open '%s'", path);
  kiln_checkpoint *c = calloc(1, sizeof(*c));
  long size = -1;
  if (c && fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  if (!c || size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    kiln_checkpoint_free(c);
    return kiln_fail(KILN_ERROR_LOAD, "cannot read '%s'", path);
  }
  c->bytes = aligned_alloc(64, ((size_t)size + 63) / 64 * 64 + 64);
  size_t got = c->bytes ? fread(c->bytes, 1, (size_t)size, f) : 0;
  fclose(f);
  if (!c->bytes || got != (size_t)size) {
    kiln_checkpoint_free(c);
    return kiln_fail(KILN_ERROR_LOAD, "cannot read '%s'", path);
  }
  const unsigned char *p = c->bytes;
  size_t n = (size_t)size, at = 16;
  uint32_t version = 0;
  if (n < 16 || memcmp(p, "KILNCKPT", 8) != 0)
    return checkpoint_bad(c, path, "no KILNCKPT header");
  memcpy(&version, p + 8, 4);
  memcpy(&c->count, p + 12, 4);
  if (version != CHECKPOINT_VERSION)
    return checkpoint_bad(c, path, "an unknown version");
  if (c->count > CHECKPOINT_MAX_TENSORS || c->count > n / 16)
    return checkpoint_bad(c, path, "too many tensors");
  c->names = calloc(c->count + 1, sizeof(char *));
  c->tensors = calloc(c->count + 1, sizeof(kiln_tensor));
  c->name_storage = malloc(n + 1);
  if (!c->names || !c->tensors || !c->name_storage) {
    kiln_checkpoint_free(c);
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
  }
  size_t stored = 0;
  for (uint32_t i = 0; i < c->count; ++i) {
    uint32_t length;
    kiln_tensor *t = &c->tensors[i];
    if (n - at < 4)
      return checkpoint_bad(c, path, "truncated");
    memcpy(&length, p + at, 4);
    at += 4;
    if (length == 0 || n - at < (size_t)length + 8 || memchr(p + at, 0, length))
      return checkpoint_bad(c, path, "a tensor's name is invalid or truncated");
    memcpy(c->name_storage + stored, p + at, length);
    c->name_storage[stored + length] = '\0';
    c->names[i] = (const char *)(uintptr_t)stored; /* resolved below */
    stored += (size_t)length + 1;
    at += length;
    memcpy(&t->dtype, p + at, 4);
    memcpy(&t->rank, p + at + 4, 4);
    at += 8;
    if (kiln_dtype_size(t->dtype) == 0 || t->rank < 0 || t->rank > KILN_MAX_RANK ||
        n - at < (size_t)t->rank * 8)
      return checkpoint_bad(c, path, "a tensor's dtype or rank is invalid");
    memcpy(t->dims, p + at, (size_t)t->rank * 8);
    at += (size_t)t->rank * 8;
    size_t bytes = kiln_dtype_size(t->dtype);
    for (int32_t d = 0; d < t->rank; ++d) {
      if (t->dims[d] < 0 || (t->dims[d] && bytes > (size_t)size / (size_t)t->dims[d]))
        return checkpoint_bad(c, path, "a tensor's dims are invalid or too large");
      bytes *= (size_t)t->dims[d];
    }
    at = (at + 63) / 64 * 64;
    if (at > n || n - at < bytes)
      return checkpoint_bad(c, path, "truncated");
    t->data = c->bytes + at;
    at += bytes;
  }
  if (at != n)
    return checkpoint_bad(c, path, "bytes after the last tensor");
  for (uint32_t i = 0; i < c->count; ++i)
    c->names[i] = c->name_storage + (uintptr_t)c->names[i];
  *checkpoint = c;
  return kiln_ok();
}

uint32_t kiln_checkpoint_count(const kiln_checkpoint *checkpoint) {
  return checkpoint ? checkpoint->count : 0;
}

kiln_status kiln_checkpoint_tensor(const kiln_checkpoint *checkpoint, uint32_t i,
                                   const char **name, kiln_tensor *tensor) {
  if (!checkpoint || !name || !tensor)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_checkpoint_tensor: null argument");
  if (i >= checkpoint->count)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "tensor %u out of range (the checkpoint has %u)",
                     i, checkpoint->count);
  *name = checkpoint->names[i];
  *tensor = checkpoint->tensors[i];
  return kiln_ok();
}

kiln_status kiln_session_save_state(const kiln_session *session, const char *path) {
  if (!session || !path)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_save_state: null argument");
  const kiln_model_v1 *abi = session->model->abi;
  if (abi->num_state == 0)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "the session owns no tensors (the model was not compiled with --train)");
  /* Written beside, renamed at the end: a failed save leaves no half file. */
  size_t length = strlen(path);
  char *partial = malloc(length + 9);
  if (!partial)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  memcpy(partial, path, length);
  memcpy(partial + length, ".partial", 9);
  FILE *f = fopen(partial, "wb");
  if (!f) {
    free(partial);
    return kiln_fail(KILN_ERROR_LOAD, "cannot write '%s'", path);
  }
  static const unsigned char zeros[64];
  uint32_t header[2] = {CHECKPOINT_VERSION, abi->num_state};
  int ok = fwrite("KILNCKPT", 1, 8, f) == 8 && fwrite(header, 4, 2, f) == 2;
  long at = 16;
  for (uint32_t k = 0; ok && k < abi->num_state; ++k) {
    const kiln_model_tensor *t = &abi->inputs[abi->state[k].input];
    uint32_t name_bytes = (uint32_t)strlen(t->name);
    int32_t fields[2] = {t->dtype, t->rank};
    ok = fwrite(&name_bytes, 4, 1, f) == 1 && fwrite(t->name, 1, name_bytes, f) == name_bytes &&
         fwrite(fields, 4, 2, f) == 2 &&
         fwrite(t->dims, 8, (size_t)t->rank, f) == (size_t)t->rank;
    at += 4 + (long)name_bytes + 8 + 8L * t->rank;
    size_t pad = (size_t)((64 - at % 64) % 64);
    size_t bytes = kiln_input_bytes(abi, abi->state[k].input);
    const void *value = kiln_state_on_host(session, k);
    ok = ok && value && fwrite(zeros, 1, pad, f) == pad && fwrite(value, 1, bytes, f) == bytes;
    at += (long)(pad + bytes);
  }
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(partial, path) != 0) {
    remove(partial);
    free(partial);
    return kiln_fail(KILN_ERROR_LOAD, "cannot write '%s'", path);
  }
  free(partial);
  return kiln_ok();
}

kiln_status kiln_session_load_state(kiln_session *session, const char *path) {
  if (!session || !path)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_load_state: null argument");
  kiln_checkpoint *c;
  kiln_status status = kiln_checkpoint_open(path, &c);
  if (status != KILN_OK)
    return status;
  const kiln_model_v1 *abi = session->model->abi;
  /* Every session-owned tensor must be there, of the same dtype and dims;
   * the checkpoint may hold more (a training step's optimiser state when
   * an inference session loads it). Nothing changes unless all match. */
  uint32_t *from = calloc(abi->num_state + 1, sizeof(uint32_t));
  if (!from) {
    kiln_checkpoint_free(c);
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  for (uint32_t k = 0; k < abi->num_state && status == KILN_OK; ++k) {
    const kiln_model_tensor *t = &abi->inputs[abi->state[k].input];
    uint32_t i = 0;
    while (i < c->count && strcmp(c->names[i], t->name) != 0)
      ++i;
    if (i == c->count) {
      status = kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "'%s' has no tensor '%s'", path, t->name);
      break;
    }
    const kiln_tensor *got = &c->tensors[i];
    int same = got->dtype == t->dtype && got->rank == t->rank;
    for (int32_t d = 0; same && d < t->rank; ++d)
      same = got->dims[d] == t->dims[d];
    if (!same)
      status = kiln_fail(KILN_ERROR_SHAPE, "'%s': tensor '%s' is not the session's %s of %d dims",
                         path, t->name, kiln_dtype_name(t->dtype), t->rank);
    from[k] = i;
  }
  if (status == KILN_OK) {
    for (uint32_t k = 0; k < abi->num_state; ++k) {
      memcpy(session->state[k], c->tensors[from[k]].data,
             kiln_input_bytes(abi, abi->state[k].input));
      host_written(session, k);
    }
    status = kiln_ok();
  }
  free(from);
  kiln_checkpoint_free(c);
  return status;
}
