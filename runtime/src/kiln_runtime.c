/*===- kiln_runtime.c - the Kiln runtime -----------------------------------===*
 *
 * Errors, dtypes, sessions and their runs with checked inputs (loading
 * artifacts is model.c; session-owned tensors state.c). Everything
 * device-specific goes through the artifact's device (devices/device.h).
 * No MLIR, no LLVM: libc and libdl.
 *
 *===----------------------------------------------------------------------===*/

#include "kiln/kiln.h"
#include "devices/device.h"
#include "descriptor_check.h"
#include "host_env.h"
#include "host_memory.h"
#include "pool.h"
#include "session.h"
#include "thread_policy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[1024];
static _Thread_local kiln_status last_status;

kiln_status kiln_fail(kiln_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(last_error, sizeof(last_error), format, args);
  va_end(args);
  last_status = status;
  return status;
}

const char *kiln_last_error(void) { return last_error; }

/* A call that succeeds clears the thread's last error. */
kiln_status kiln_ok(void) {
  last_error[0] = '\0';
  return KILN_OK;
}

const char *kiln_status_name(kiln_status status) {
  switch (status) {
  case KILN_OK: return "KILN_OK";
  case KILN_ERROR_INVALID_ARGUMENT: return "KILN_ERROR_INVALID_ARGUMENT";
  case KILN_ERROR_LOAD: return "KILN_ERROR_LOAD";
  case KILN_ERROR_FORMAT: return "KILN_ERROR_FORMAT";
  case KILN_ERROR_SHAPE: return "KILN_ERROR_SHAPE";
  case KILN_ERROR_DTYPE: return "KILN_ERROR_DTYPE";
  case KILN_ERROR_OUT_OF_MEMORY: return "KILN_ERROR_OUT_OF_MEMORY";
  case KILN_ERROR_RUN: return "KILN_ERROR_RUN";
  case KILN_ERROR_VERIFY: return "KILN_ERROR_VERIFY";
  }
  return "KILN_ERROR_UNKNOWN";
}

size_t kiln_dtype_size(int32_t dtype) {
  switch (dtype) {
#define KILN_DTYPE_SIZE(NAME, VALUE, BYTES, TEXT) case KILN_DTYPE_##NAME: return BYTES;
    KILN_DTYPES(KILN_DTYPE_SIZE)
#undef KILN_DTYPE_SIZE
  }
  return 0;
}

const char *kiln_dtype_name(int32_t dtype) {
  switch (dtype) {
#define KILN_DTYPE_NAME(NAME, VALUE, BYTES, TEXT) case KILN_DTYPE_##NAME: return TEXT;
    KILN_DTYPES(KILN_DTYPE_NAME)
#undef KILN_DTYPE_NAME
  }
  return "unknown";
}

size_t kiln_element_count(int32_t rank, const int64_t *dims) {
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d)
    n *= (size_t)dims[d];
  return n;
}

/* The session's thread policy from its start (its device's counts; none
 * on a device without a thread count), adaptive when `wanted` and the
 * count has a smaller half to switch to. */
static void start_thread_policy(kiln_session *session, int wanted) {
  session->run_threads = session->num_threads;
  session->adaptive = 0;
  if (!session->device->thread_count)
    return;
  kiln_thread_policy_init(&session->threads, session->device->thread_count(session->num_threads));
  session->adaptive = wanted && session->threads.reduced < session->threads.full;
}

kiln_status kiln_session_create(kiln_model *model, kiln_session **session) {
  return kiln_session_create_with_options(model, NULL, session);
}

/* The inputs' dims, hashed (FNV-1a): what a run's time is comparable by. */
static uint64_t input_signature(const kiln_model_v1 *abi, const int64_t *const *dims) {
  uint64_t h = 1469598103934665603u;
  for (uint32_t i = 0; i < abi->num_inputs; ++i)
    for (int32_t d = 0; d < abi->inputs[i].rank; ++d) {
      h ^= (uint64_t)dims[i][d];
      h *= 1099511628211u;
    }
  return h;
}

kiln_status kiln_session_create_with_options(kiln_model *model,
                                             const kiln_session_options *options,
                                             kiln_session **session) {
  return kiln_session_create_bound(model, options, NULL, session);
}

kiln_status kiln_session_create_bound(kiln_model *model, const kiln_session_options *options,
                                      const kiln_session *bind_to, kiln_session **session) {
  if (!model || !session)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_create: null argument");
  if (options && options->num_threads < 0)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "num_threads must not be negative");
  if (options && options->allocator &&
      (!options->allocator->allocate || !options->allocator->release))
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "an allocator needs allocate and release");
  uint32_t n_out = model->abi->num_outputs, n_in = model->abi->num_inputs;
  kiln_session *s = calloc(1, sizeof(*s));
  if (!s)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  s->model = model;
  kiln_model_retain(model);
  s->out_alloc = calloc(n_out + 1, sizeof(void *));
  s->out_data = calloc(n_out + 1, sizeof(void *));
  s->out_dims = calloc(n_out + 1, sizeof(*s->out_dims));
  s->out_dims_ptrs = calloc(n_out + 1, sizeof(int64_t *));
  s->in_data = calloc(n_in + 1, sizeof(void *));
  s->in_dims = calloc(n_in + 1, sizeof(int64_t *));
  s->input_buffers = calloc(n_in + 1, sizeof(void *));
  s->input_bytes = calloc(n_in + 1, sizeof(size_t));
  s->bound = calloc(n_out + 1, sizeof(kiln_tensor));
  s->is_bound = calloc(n_out + 1, 1);
  s->call_kernel = malloc((model->abi->num_library_calls + 1) * sizeof(uint32_t));
  if (!s->out_alloc || !s->out_data || !s->out_dims || !s->out_dims_ptrs || !s->in_data ||
      !s->in_dims || !s->bound || !s->is_bound || !s->input_buffers || !s->input_bytes ||
      !s->call_kernel) {
    kiln_session_free(s);
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  for (uint32_t i = 0; i < n_out; ++i)
    s->out_dims_ptrs[i] = s->out_dims[i];
  s->current_kernel = KILN_KERNEL_END;
  for (uint32_t i = 0; i < model->abi->num_library_calls; ++i)
    s->call_kernel[i] = KILN_KERNEL_END;
  /* Session-owned tensors, from their initial bytes or bound. */
  kiln_status owned = kiln_state_create(s, bind_to);
  if (owned != KILN_OK) {
    kiln_session_free(s); /* keeps the message */
    return owned;
  }
  s->device = model->device;
  s->num_threads = options ? options->num_threads : 0;
  /* KILN_ADAPTIVE_THREADS=1: on for every session. */
  start_thread_policy(s, kiln_env_is("KILN_ADAPTIVE_THREADS", "1"));
  if (options && options->allocator)
    s->allocator = *options->allocator;
  s->pool = kiln_pool_create(s->device, options ? options->allocator : NULL);
  if (!s->pool) {
    kiln_session_free(s);
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  /* The device's part first (a GPU device checks its driver there). */
  int saved_threads = s->device->enter(s->num_threads);
  kiln_status status = s->device->library_create(model->abi, &s->library);
  s->device->leave(s->num_threads, saved_threads);
  if (status != KILN_OK) {
    kiln_session_free(s); /* keeps the device's message */
    return status;
  }
  /* The arena comes from the pool at every run; taking it once now means
   * the first run allocates nothing for it either. */
  if (model->abi->arena_bytes) {
    saved_threads = s->device->enter(s->num_threads);
    void *arena = kiln_pool_alloc(s->pool, (size_t)model->abi->arena_bytes);
    if (arena)
      kiln_pool_free(s->pool, arena);
    s->device->leave(s->num_threads, saved_threads);
    if (!arena) {
      kiln_session_free(s);
      return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "cannot reserve the model's %llu-byte arena",
                  (unsigned long long)model->abi->arena_bytes);
    }
  }
  *session = s;
  return kiln_ok();
}

/* Host memory of the session outside its pool: from the caller's
 * allocator, else the runtime's (large buffers on huge pages). */
static void *host_allocate(kiln_session *s, size_t bytes, size_t alignment) {
  return kiln_host_allocate(&s->allocator, bytes, alignment);
}

static void host_release(kiln_session *s, void *p) {
  kiln_host_release(&s->allocator, p);
}

/* Where a block of strings came from. */
enum { STRINGS_FROM_POOL, STRINGS_FROM_HOST };

/* A block of strings a run made; the strings follow the header. The code
 * writes them on the host: from the session's pool where its memory is
 * the host's; else (a GPU session's pool is device memory) from the
 * caller's allocator, or malloc when there is none. */
struct kiln_string_block {
  struct kiln_string_block *next;
  int from;
  max_align_t align;
};

/* Frees the run's string blocks: all of them, or (`outside_pool_only`,
 * when the pool is about to be emptied) those the pool does not hold. */
static void free_strings(kiln_session *s, int outside_pool_only) {
  while (s->strings) {
    struct kiln_string_block *next = s->strings->next;
    if (s->strings->from == STRINGS_FROM_HOST)
      host_release(s, s->strings);
    else if (!outside_pool_only)
      kiln_pool_free(s->pool, s->strings);
    s->strings = next;
  }
}

static void release_outputs(kiln_session *s) {
  s->ran = 0;
  for (uint32_t i = 0; i < s->model->abi->num_outputs; ++i) {
    kiln_pool_free(s->pool, s->out_alloc[i]);
    s->out_alloc[i] = s->out_data[i] = NULL;
  }
  free_strings(s, 0);
}

/* The services compiled code calls back into; `state` is the session. */
static int service_library_call(void *state, uint32_t id, void *const *operands,
                                const int64_t *const *dims) {
  kiln_session *session = state;
  if (id < session->model->abi->num_library_calls)
    session->call_kernel[id] = session->current_kernel;
  return session->device->library_execute(session->library, id, operands, dims);
}

static void *service_allocate(void *state, size_t bytes, size_t alignment) {
  if (alignment > 64)
    return NULL;
  return kiln_pool_alloc(((kiln_session *)state)->pool, bytes);
}

static void service_release(void *state, void *ptr) {
  kiln_pool_free(((kiln_session *)state)->pool, ptr);
}

static void service_parallel_for(void *state, void (*chunk)(void *, int64_t, int64_t),
                                 void *context, int64_t begin, int64_t end) {
  kiln_session *session = state;
  session->device->parallel_for(session->run_threads, chunk, context, begin, end);
}

static void service_kernel_begin(void *state, uint32_t kernel) {
  kiln_session *session = state;
  session->current_kernel = kernel;
  if (session->kernel_hook)
    session->kernel_hook(session->kernel_hook_user, kernel);
}

static int service_launch_kernel(void *state, uint32_t kernel, const uint32_t grid[3],
                                 const uint32_t block[3], void **params) {
  kiln_session *session = state;
  if (!session->device->launch_kernel)
    return -1;
  return session->device->launch_kernel(session->library, kernel, grid, block, params);
}

static void *service_device_constant(void *state, uint32_t index, const void *host,
                                     size_t bytes) {
  kiln_session *session = state;
  if (!session->device->device_constant)
    return NULL;
  return session->device->device_constant(session->library, index, host, bytes);
}

static void *service_allocate_strings(void *state, size_t bytes) {
  kiln_session *session = state;
  size_t header = offsetof(struct kiln_string_block, align);
  if (bytes > SIZE_MAX - header)
    return NULL;
  int from = session->device->memory_is_host ? STRINGS_FROM_POOL : STRINGS_FROM_HOST;
  struct kiln_string_block *block =
      from == STRINGS_FROM_POOL ? kiln_pool_alloc(session->pool, header + bytes)
                                : host_allocate(session, header + bytes, _Alignof(max_align_t));
  if (!block)
    return NULL;
  block->from = from;
  block->next = session->strings;
  session->strings = block;
  return (char *)block + header;
}

static int service_read_device(void *state, void *host, const void *device, size_t bytes) {
  kiln_session *session = state;
  if (session->device->read)
    return session->device->read(session->library, host, device, bytes);
  memcpy(host, device, bytes);
  return 0;
}

static int service_write_device(void *state, void *device, const void *host, size_t bytes) {
  kiln_session *session = state;
  if (session->device->write)
    return session->device->write(session->library, device, host, bytes);
  memcpy(device, host, bytes);
  return 0;
}

static const kiln_runtime_services services = {
    service_library_call,    service_allocate,         service_release,
    service_parallel_for,    service_kernel_begin,     service_launch_kernel,
    service_device_constant, service_allocate_strings, service_read_device,
    service_write_device};

kiln_status kiln_session_set_kernel_hook(kiln_session *session, kiln_kernel_hook hook,
                                         void *user) {
  if (!session)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_set_kernel_hook: null session");
  session->kernel_hook = hook;
  session->kernel_hook_user = user;
  return kiln_ok();
}

kiln_status kiln_session_library_call_info(const kiln_session *session, uint32_t call,
                                           kiln_library_call_info *info) {
  if (!session || !info)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "kiln_session_library_call_info: null session or info");
  uint32_t calls = session->model->abi->num_library_calls;
  if (call >= calls)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "kiln_session_library_call_info: call %u of a model with %u", call, calls);
  memset(info, 0, sizeof *info);
  info->kernel = session->call_kernel[call];
  const char *name = session->device->library_implementation
                         ? session->device->library_implementation(session->library, call)
                         : NULL;
  if (name)
    snprintf(info->implementation, sizeof info->implementation, "%s", name);
  return kiln_ok();
}

void kiln_session_free(kiln_session *session) {
  if (!session)
    return;
  if (session->out_alloc && session->pool)
    release_outputs(session);
  if (session->device)
    session->device->library_free(session->library);
  kiln_pool_destroy(session->pool);
  free(session->out_alloc);
  free(session->out_data);
  free(session->out_dims);
  free(session->out_dims_ptrs);
  free(session->in_data);
  free(session->in_dims);
  for (uint32_t i = 0; session->input_buffers && i < session->model->abi->num_inputs; ++i)
    host_release(session, session->input_buffers[i]);
  free(session->input_buffers);
  free(session->input_bytes);
  free(session->bound);
  free(session->is_bound);
  free(session->call_kernel);
  kiln_state_free(session);
  if (session->model)
    kiln_model_release(session->model);
  free(session);
}


static kiln_status copy_to_bound_outputs(kiln_session *session) {
  const kiln_model_v1 *abi = session->model->abi;
  for (uint32_t i = 0; i < abi->num_outputs; ++i) {
    if (!session->is_bound[i])
      continue;
    const kiln_tensor *to = &session->bound[i];
    for (int32_t d = 0; d < to->rank; ++d)
      if (to->dims[d] != session->out_dims[i][d])
        return kiln_fail(KILN_ERROR_SHAPE,
                    "output '%s' dim %d is %lld, but its bound buffer has %lld",
                    abi->outputs[i].name, d, (long long)session->out_dims[i][d],
                    (long long)to->dims[d]);
    const void *from = kiln_state_output(session, i);
    if (!from)
      return KILN_ERROR_RUN; /* the device's message */
    memcpy(to->data, from, kiln_element_count(to->rank, to->dims) * kiln_dtype_size(to->dtype));
  }
  return KILN_OK;
}

kiln_status kiln_session_bind_output(kiln_session *session, uint32_t i,
                                     const kiln_tensor *buffer) {
  if (!session)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_bind_output: null session");
  const kiln_model_v1 *abi = session->model->abi;
  if (i >= abi->num_outputs)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "output %u out of range (the model has %u)", i,
                abi->num_outputs);
  if (!buffer) {
    session->is_bound[i] = 0;
    return KILN_OK;
  }
  const kiln_model_tensor *want = &abi->outputs[i];
  if (!buffer->data)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "the buffer for output '%s' has no data",
                want->name);
  if (buffer->dtype != want->dtype)
    return kiln_fail(KILN_ERROR_DTYPE, "output '%s' is %s, the buffer is %s", want->name,
                kiln_dtype_name(want->dtype), kiln_dtype_name(buffer->dtype));
  if (buffer->rank != want->rank)
    return kiln_fail(KILN_ERROR_SHAPE, "output '%s' has rank %d, the buffer %d", want->name,
                want->rank, buffer->rank);
  for (int32_t d = 0; d < want->rank; ++d)
    if (buffer->dims[d] < 0 || (want->dims[d] >= 0 && buffer->dims[d] != want->dims[d]))
      return kiln_fail(KILN_ERROR_SHAPE, "output '%s' dim %d is %lld, the buffer has %lld",
                  want->name, d, (long long)want->dims[d], (long long)buffer->dims[d]);
  session->bound[i] = *buffer;
  session->is_bound[i] = 1;
  return kiln_ok();
}

/* Dims `dims` of rank `rank` for input `want`: its rank, its static dims,
 * a size that does not wrap, a batch the arena was planned for. */
static kiln_status check_input_dims(const kiln_model_v1 *abi, const kiln_model_tensor *want,
                                    int32_t rank, const int64_t *dims) {
  if (rank != want->rank)
    return kiln_fail(KILN_ERROR_SHAPE, "input '%s' must have rank %d, got %d", want->name,
                     want->rank, rank);
  for (int32_t d = 0; d < want->rank; ++d) {
    if (dims[d] < 0 || (want->dims[d] >= 0 && dims[d] != want->dims[d]))
      return kiln_fail(KILN_ERROR_SHAPE, "input '%s' dim %d must be %lld, got %lld", want->name,
                       d, (long long)want->dims[d], (long long)dims[d]);
  }
  /* Sizes the compiled code computes from these dims must not wrap. */
  if (!kiln_fits_in_memory(rank, dims, kiln_dtype_size(want->dtype)))
    return kiln_fail(KILN_ERROR_SHAPE,
                     "input '%s' is too large: its bytes (the product of its dims times "
                     "%zu) exceed 2^%d",
                     want->name, kiln_dtype_size(want->dtype), KILN_MAX_BYTES_LOG2);
  /* The arena was planned for batches up to max_batch. */
  if (abi->max_batch && want->rank > 0 && want->dims[0] < 0 &&
      (uint64_t)dims[0] > abi->max_batch)
    return kiln_fail(KILN_ERROR_SHAPE,
                     "input '%s' dim 0 is %lld, above the batch of %llu the model was "
                     "compiled for (kiln compile --max-batch)",
                     want->name, (long long)dims[0], (unsigned long long)abi->max_batch);
  return KILN_OK;
}

kiln_status kiln_session_input_buffer(kiln_session *session, uint32_t i, const int64_t *dims,
                                      kiln_tensor *buffer) {
  if (!session || !buffer || !dims)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_input_buffer: null argument");
  const kiln_model_v1 *abi = session->model->abi;
  if (i >= abi->num_inputs)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "input %u out of range (the model has %u)", i,
                     abi->num_inputs);
  const kiln_model_tensor *want = &abi->inputs[i];
  if (session->state_of[i] >= 0)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "input '%s' is a parameter the session owns (kiln_session_parameter)",
                     want->name);
  if (want->dtype == KILN_DTYPE_STRING)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "input '%s' is a string tensor: its strings are the caller's", want->name);
  kiln_status checked = check_input_dims(abi, want, want->rank, dims);
  if (checked != KILN_OK)
    return checked;
  size_t bytes = kiln_element_count(want->rank, dims) * kiln_dtype_size(want->dtype);
  void *data = NULL;
  if (session->device->input_buffer) {
    int saved = session->device->enter(session->num_threads);
    data = session->device->input_buffer(session->library, i, dims, bytes ? bytes : 1);
    session->device->leave(session->num_threads, saved);
  } else {
    /* An empty input gets a buffer too: NULL would mean out of memory. */
    if (!session->input_buffers[i] || bytes > session->input_bytes[i]) {
      host_release(session, session->input_buffers[i]);
      session->input_bytes[i] = 0;
      session->input_buffers[i] = host_allocate(session, bytes ? bytes : 1, 64);
      if (session->input_buffers[i])
        session->input_bytes[i] = bytes;
    }
    data = session->input_buffers[i];
  }
  if (!data)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory for input '%s' (%zu bytes)",
                     want->name, bytes);
  memset(buffer, 0, sizeof *buffer);
  buffer->data = data;
  buffer->dtype = want->dtype;
  buffer->rank = want->rank;
  memcpy(buffer->dims, dims, (size_t)want->rank * sizeof(int64_t));
  return kiln_ok();
}

kiln_status kiln_session_run(kiln_session *session, const kiln_tensor *inputs,
                             size_t num_inputs) {
  if (!session || (num_inputs && !inputs))
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_run: null argument");
  const kiln_model_v1 *abi = session->model->abi;
  if (num_inputs != abi->num_inputs - abi->num_state)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "the model takes %u inputs, %zu given",
                abi->num_inputs - abi->num_state, num_inputs);
  uint32_t given = 0;
  for (uint32_t i = 0; i < abi->num_inputs; ++i) {
    const kiln_model_tensor *want = &abi->inputs[i];
    if (session->state_of[i] >= 0) {
      /* A parameter: the session's buffer. */
      session->in_data[i] = session->state[session->state_of[i]];
      session->in_dims[i] = want->dims;
      continue;
    }
    const kiln_tensor *got = &inputs[given++];
    /* A tensor without elements needs no data. */
    if (!got->data && (got->rank < 0 || got->rank > KILN_MAX_RANK ||
                       kiln_element_count(got->rank, got->dims) != 0))
      return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "input '%s' has no data", want->name);
    if (got->dtype != want->dtype)
      return kiln_fail(KILN_ERROR_DTYPE, "input '%s' must be %s, got %s", want->name,
                  kiln_dtype_name(want->dtype), kiln_dtype_name(got->dtype));
    kiln_status checked = check_input_dims(abi, want, got->rank, got->dims);
    if (checked != KILN_OK)
      return checked;
    session->in_data[i] = got->data;
    session->in_dims[i] = got->dims;
  }
  release_outputs(session);
  const kiln_device *device = session->device;
  kiln_ok(); /* what the device's run reports (kiln_fail) is its message */
  uint64_t started = 0;
  if (session->adaptive) {
    session->run_threads = kiln_thread_policy_choose(&session->threads,
                                                     input_signature(abi, session->in_dims));
    if (session->run_threads == session->threads.full)
      session->run_threads = session->num_threads; /* 0 stays the default */
    started = kiln_now_ns();
  }
  int saved_threads = device->enter(session->run_threads);
  /* Session-owned tensors that stay in device memory: current there. */
  const kiln_resident *resident = NULL;
  kiln_status placed = kiln_state_to_device(session, &resident);
  if (placed != KILN_OK) {
    device->leave(session->run_threads, saved_threads);
    return placed;
  }
  int rc = device->run ? device->run(session->library, abi, &services, session,
                                     session->in_data, session->in_dims, resident,
                                     session->out_alloc, session->out_data,
                                     session->out_dims_ptrs)
                       : abi->run(&services, session, session->in_data, session->in_dims,
                                  session->out_alloc, session->out_data,
                                  session->out_dims_ptrs);
  if (rc == 0)
    rc = device->synchronize(session->library);
  if (session->kernel_hook)
    session->kernel_hook(session->kernel_hook_user, KILN_KERNEL_END);
  /* The step's updated parameters become the session's. */
  if (rc == 0)
    kiln_state_update(session);
  device->leave(session->run_threads, saved_threads);
  if (session->adaptive && rc == 0)
    kiln_thread_policy_record(&session->threads, kiln_now_ns() - started);
  if (rc != 0) {
    /* What the run allocated and did not free (it may have stopped half
     * way) goes back to the pool; the session stays usable. */
    free_strings(session, 1);
    kiln_pool_free_all(session->pool);
    for (uint32_t i = 0; i < abi->num_outputs; ++i)
      session->out_alloc[i] = session->out_data[i] = NULL;
    if (rc == KILN_RUN_OUT_OF_MEMORY)
      return kiln_fail(KILN_ERROR_OUT_OF_MEMORY,
                       "out of memory: an allocation of the run failed (the session's "
                       "allocator or the heap); the run was abandoned");
    if (rc == KILN_RUN_SHAPE_ERROR)
      return kiln_fail(KILN_ERROR_SHAPE,
                       "a shape the model computes from its inputs is invalid (a negative "
                       "size, a reshape that changes the element count, an edge, reflect "
                       "or wrap pad reading from an empty tensor, a matmul whose operands "
                       "disagree on the dim it sums over, a TopK's K past its axis, or a "
                       "slice the model declares of a fixed size, such as row 0 of an empty "
                       "batch); the run was abandoned");
    if (last_error[0]) /* the device said why (a driver call, an input) */
      return last_status;
    return kiln_fail(KILN_ERROR_RUN, "the compiled model failed (code %d)", rc);
  }
  session->ran = 1;
  kiln_status copied = copy_to_bound_outputs(session);
  return copied == KILN_OK ? kiln_ok() : copied;
}

kiln_status kiln_session_output(const kiln_session *session, uint32_t i,
                                kiln_tensor *output) {
  if (!session || !output)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_output: null argument");
  const kiln_model_v1 *abi = session->model->abi;
  if (i >= abi->num_outputs)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "output %u out of range (the model has %u)", i,
                abi->num_outputs);
  if (!session->out_data[i] && !session->ran)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "no output yet: run the session first");
  /* A parameter's update that stayed on the device: its current value. */
  output->data = kiln_state_output(session, i);
  if (!output->data)
    return KILN_ERROR_RUN; /* the device's message */
  output->dtype = abi->outputs[i].dtype;
  output->rank = abi->outputs[i].rank;
  for (int32_t d = 0; d < output->rank; ++d)
    output->dims[d] = session->out_dims[i][d];
  return kiln_ok();
}

kiln_status kiln_session_device_stats(const kiln_session *session, kiln_device_stats *stats) {
  if (!session || !stats)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_device_stats: null argument");
  memset(stats, 0, sizeof *stats);
  if (session->device->stats)
    session->device->stats(session->library, stats);
  return kiln_ok();
}

kiln_status kiln_session_library_plan_stats(const kiln_session *session,
                                            kiln_library_plan_stats *stats) {
  if (!session || !stats)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "kiln_session_library_plan_stats: null argument");
  memset(stats, 0, sizeof *stats);
  if (session->device->plan_stats)
    session->device->plan_stats(session->library, stats);
  return kiln_ok();
}

kiln_status kiln_session_thread_stats(const kiln_session *session, kiln_thread_stats *stats) {
  if (!session || !stats)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_thread_stats: null argument");
  memset(stats, 0, sizeof *stats);
  const kiln_thread_policy *p = &session->threads;
  if (!session->device->thread_count)
    return kiln_ok(); /* a GPU session: the host's threads do not do the work */
  stats->threads = p->full;
  stats->reduced_threads = session->adaptive ? p->reduced : p->full;
  stats->adaptive = session->adaptive;
  stats->reduced_now = session->adaptive && p->reduced_now;
  stats->runs = p->runs;
  stats->reduced_runs = p->reduced_runs;
  stats->tries = p->tries;
  stats->switches = p->switches;
  return kiln_ok();
}

kiln_status kiln_session_set_adaptive_threads(kiln_session *session, int enabled) {
  if (!session)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "kiln_session_set_adaptive_threads: null session");
  start_thread_policy(session, enabled);
  return kiln_ok();
}

kiln_status kiln_session_memory_stats(const kiln_session *session, kiln_memory_stats *stats) {
  if (!session || !stats)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_memory_stats: null argument");
  kiln_pool_stats(session->pool, stats);
  return kiln_ok();
}
