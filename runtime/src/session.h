/*===- session.h - the runtime's models and sessions, inside ---------------===*
 *
 * What kiln_runtime.c (loading, sessions, runs) and state.c (session-owned
 * tensors, inference sessions, checkpoints) share. Not installed.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_SESSION_H
#define KILN_RUNTIME_SESSION_H

#include "kiln/kiln.h"
#include "devices/device.h"
#include "pool.h"
#include "thread_policy.h"

struct kiln_model {
  void *library; /* null for a linked-in model */
  const kiln_model_v1 *abi;
  const kiln_device *device; /* the descriptor's */
  /* The caller's handle and each live session: the model (and its code)
   * goes when the last of them does. */
  int references;
  /* kiln_model_load_verified: the memory file the library was loaded
   * from, open while the model lives (the loader knows the library by its
   * /proc/self/fd path: a reused descriptor number would name it again
   * for another model), else -1. */
  int memory_file;
  /* Whose references count for this model: itself, or for a training
   * step's inference entry the training model (they live and go
   * together). */
  struct kiln_model *owner;
  /* A training step's inference entry (abi->inference), or NULL. */
  struct kiln_model *inference;
};

/* Session-owned tensors' buffers (kiln_model_state), shared by a training
 * session and the inference sessions bound to it: freed with the last.
 * On a device whose memory is not the host's (`device`), each tensor has
 * a device buffer too, made at the first run; `where[k]` says which copy
 * holds its current value (either or both): runs use and update the
 * device's, the host's is brought up to date when it is read by name or
 * saved (state.c). */
#define KILN_STATE_ON_HOST 1
#define KILN_STATE_ON_DEVICE 2
typedef struct kiln_state_store {
  int references;
  uint32_t count;
  void **buffers;
  const kiln_device *device;
  void **device_buffers; /* NULL where memory is the host's */
  uint8_t *where;
} kiln_state_store;

struct kiln_session {
  kiln_model *model;
  void *library;                /* the device's prepared library calls */
  kiln_pool *pool;              /* every buffer of a run */
  const kiln_device *device;
  int32_t num_threads;
  /* The count of the run in progress: num_threads, or the policy's
   * reduced count while another process holds a core (thread_policy.h;
   * `adaptive` 0 when the count never changes). */
  int32_t run_threads;
  int adaptive;
  kiln_thread_policy threads;
  /* kiln_session_options.allocator (all NULL: none). It serves the pool,
   * and the host memory the session makes outside it: input buffers, and
   * on a device whose memory is not the host's, the strings a run makes. */
  kiln_allocator allocator;
  /* Per output: the buffer of the last run and its dims. */
  void **out_alloc;
  void **out_data;
  int64_t (*out_dims)[KILN_MAX_RANK];
  int64_t **out_dims_ptrs;
  int ran; /* the last run succeeded: its outputs are there */
  void **in_data;
  const int64_t **in_dims;
  /* Per input: kiln_session_input_buffer's buffer where the device has
   * none of its own (the CPU), and its bytes. */
  void **input_buffers;
  size_t *input_bytes;
  /* Per output: a caller-owned buffer the result is copied to, if bound. */
  kiln_tensor *bound;
  uint8_t *is_bound;
  /* Session-owned tensors (kiln_model_state), in the descriptor's order:
   * state[k] is k's buffer (in `store`, the session's own or the training
   * session's it is bound to); state_of[i]: the index of input i's, or -1. */
  void **state;
  int32_t *state_of;
  kiln_state_store *store;
  /* Per input and per output: the device buffers of the session-owned
   * tensors the device run reads and updates in place (kiln_resident). */
  void **resident_in;
  void **resident_out;
  kiln_resident resident;
  /* store_of[k]: the index in `store` of the session's tensor k (an
   * inference session's tensors are some of the training session's, in
   * another order). */
  uint32_t *store_of;
  /* The blocks holding the strings of the last run's string outputs
   * (services' allocate_strings), freed when the next run starts. */
  struct kiln_string_block *strings;
  /* Profiling (kiln_session_set_kernel_hook). */
  kiln_kernel_hook kernel_hook;
  void *kernel_hook_user;
  /* The kernel running now (services' kernel_begin), and per library
   * call the kernel it last ran in (kiln_session_library_call_info). */
  uint32_t current_kernel;
  uint32_t *call_kernel;
};

/* model.c: a reference to `model` (its owner's, for an inference entry)
 * taken and given back; the last frees it and closes its code. */
void kiln_model_retain(kiln_model *model);
void kiln_model_release(kiln_model *model);

/* Clears the thread's last error and returns KILN_OK. */
kiln_status kiln_ok(void);
size_t kiln_element_count(int32_t rank, const int64_t *dims);
/* Bytes of input i of `abi` (its dims static). */
size_t kiln_input_bytes(const kiln_model_v1 *abi, uint32_t i);

/* state.c: the session's session-owned tensors, from their initial bytes
 * or (bind_to non-NULL) the buffers of the training session `bind_to`
 * with the same names. */
kiln_status kiln_state_create(kiln_session *session, const kiln_session *bind_to);
void kiln_state_free(kiln_session *session);
/* After a successful run: the updated tensors become the session's. */
void kiln_state_update(kiln_session *session);
/* Before a run on a device whose memory is not the host's: every
 * session-owned tensor current in device memory (made on the first run,
 * uploaded where the host's copy is newer); `*resident` names their
 * buffers (NULL where memory is the host's: nothing to do). The device's
 * context must be current (device->enter). */
kiln_status kiln_state_to_device(kiln_session *session, const kiln_resident **resident);
/* Tensor k's host buffer, its current value downloaded first if only the
 * device has it; NULL (the error set) if that fails. */
void *kiln_state_on_host(const kiln_session *session, uint32_t k);
/* The data of output `i` when it updates a session-owned tensor that
 * stays in device memory (its out_data is NULL): that tensor's current
 * value, on the host; else out_data. */
void *kiln_state_output(const kiln_session *session, uint32_t i);
/* Creates a session (kiln_runtime.c), its state bound as above. */
kiln_status kiln_session_create_bound(kiln_model *model, const kiln_session_options *options,
                                      const kiln_session *bind_to, kiln_session **session);

#endif /* KILN_RUNTIME_SESSION_H */
