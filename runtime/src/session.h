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
 * session and the inference sessions bound to it: freed with the last. */
typedef struct kiln_state_store {
  int references;
  uint32_t count;
  void **buffers;
} kiln_state_store;

struct kiln_session {
  kiln_model *model;
  void *library;                /* the device's prepared library calls */
  kiln_pool *pool;              /* every buffer of a run */
  const kiln_device *device;
  int32_t num_threads;
  /* Per output: the buffer of the last run and its dims. */
  void **out_alloc;
  void **out_data;
  int64_t (*out_dims)[KILN_MAX_RANK];
  int64_t **out_dims_ptrs;
  void **in_data;
  const int64_t **in_dims;
  /* Per output: a caller-owned buffer the result is copied to, if bound. */
  kiln_tensor *bound;
  uint8_t *is_bound;
  /* Session-owned tensors (kiln_model_state), in the descriptor's order:
   * state[k] is k's buffer (in `store`, the session's own or the training
   * session's it is bound to); state_of[i]: the index of input i's, or -1. */
  void **state;
  int32_t *state_of;
  kiln_state_store *store;
  /* The blocks holding the strings of the last run's string outputs
   * (services' allocate_strings), freed when the next run starts. */
  struct kiln_string_block *strings;
  /* Profiling (kiln_session_set_kernel_hook). */
  kiln_kernel_hook kernel_hook;
  void *kernel_hook_user;
};

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
/* Creates a session (kiln_runtime.c), its state bound as above. */
kiln_status kiln_session_create_bound(kiln_model *model, const kiln_session_options *options,
                                      const kiln_session *bind_to, kiln_session **session);

#endif /* KILN_RUNTIME_SESSION_H */
