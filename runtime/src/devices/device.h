/*===- device.h - the runtime's device table --------------------------------===*
 *
 * Everything device-specific a session does goes through one table of
 * functions: checking that this host can run an artifact, memory for the
 * session's pool, the vendor library calls, parallel_for for generated
 * loops, and the thread count and synchronisation around a run. The
 * session picks the table from the artifact's descriptor (`device`,
 * kiln_device_kind). The CPU device (OpenMP + oneDNN) is the only one
 * today; a CUDA device joins by providing the same table and adding its
 * kind to kiln_device_for() (devices/cuda.c). Vendor libraries are loaded with dlopen on
 * first use, so a host without them still runs artifacts that need none.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_DEVICE_H
#define KILN_RUNTIME_DEVICES_DEVICE_H

#include "kiln/kiln.h"

/* Tensors that stay in device memory between runs (a training step's
 * parameters and optimiser state, state.c) on a device whose memory is
 * not the host's. Per input: the device buffer holding it (the run reads
 * it there; nothing is staged) or NULL. Per output: the device buffer it
 * is copied into on the device after the run (captured with it; nothing
 * goes to the host: its out_data is NULL) or NULL. */
typedef struct kiln_resident {
  void *const *inputs;
  void *const *outputs;
} kiln_resident;

typedef struct kiln_device {
  const char *name;
  uint32_t kind; /* kiln_device_kind */
  /* Whether this host can run `abi`: the machine its code was built for
   * (`elf_machine`, the loaded file's e_machine; 0 for a linked model),
   * the processor features it needs, the vendor libraries its calls need.
   * Returns KILN_OK or an error set with kiln_fail naming `what`. */
  kiln_status (*check_model)(const kiln_model_v1 *abi, const char *what, unsigned elf_machine);
  /* Memory for a session's pool; `allocator` may route it to the caller. */
  void *(*allocate)(const kiln_allocator *allocator, size_t bytes, size_t alignment);
  void (*release)(const kiln_allocator *allocator, void *ptr);
  /* The artifact's library calls: prepared when a session is created,
   * executed when the code calls back (0 on success). */
  kiln_status (*library_create)(const kiln_model_v1 *abi, void **state);
  void (*library_free)(void *state);
  int (*library_execute)(void *state, uint32_t id, void *const *operands,
                         const int64_t *const *dims);
  /* Runs the compiled code's chunk over [begin, end) on `num_threads`
   * threads (0: the default count), as kiln_runtime_services.parallel_for. */
  void (*parallel_for)(int32_t num_threads, void (*chunk)(void *, int64_t, int64_t),
                       void *context, int64_t begin, int64_t end);
  /* Around the runtime's work for a session (preparing calls, a run): the
   * session's thread count applies in between; `enter` returns what
   * `leave` restores. */
  int (*enter)(int32_t num_threads);
  void (*leave)(int32_t num_threads, int saved);
  /* Waits until the device has finished the work of a run; 0 on success. */
  int (*synchronize)(void *library_state);
  /* Devices whose memory the host cannot touch (CUDA); NULL on the CPU.
   * `memory_is_host` is 0 for them: the pool keeps its block headers on
   * the host. `run` does what kiln_session_run does with the compiled
   * code (`abi->run` with `services`): staging inputs into device memory,
   * launching (or replaying a captured graph) and copying the outputs
   * into host memory it owns (out_data), leaving out_alloc to the pool;
   * `resident` (NULL: none) names inputs and outputs that stay in device
   * memory. `launch_kernel` / `device_constant` serve
   * kiln_runtime_services. */
  int memory_is_host;
  int (*run)(void *library_state, const kiln_model_v1 *abi,
             const kiln_runtime_services *services, void *session, void *const *in_data,
             const int64_t *const *in_dims, const kiln_resident *resident, void **out_alloc,
             void **out_data, int64_t *const *out_dims);
  int (*launch_kernel)(void *library_state, uint32_t kernel, const uint32_t grid[3],
                       const uint32_t block[3], void **params);
  void *(*device_constant)(void *library_state, uint32_t index, const void *host, size_t bytes);
  void (*stats)(void *library_state, kiln_device_stats *stats);
  void (*plan_stats)(void *library_state, kiln_library_plan_stats *stats);
  /* kiln_runtime_services.read_device: `bytes` of device memory to the
   * host after the work enqueued so far; NULL where memory is the host's. */
  int (*read)(void *library_state, void *host, const void *device, size_t bytes);
  /* kiln_runtime_services.write_device: `bytes` from the host to device
   * memory after the work enqueued so far, done when it returns; NULL
   * where memory is the host's. */
  int (*write)(void *library_state, void *device, const void *host, size_t bytes);
  /* kiln_session_input_buffer: host memory of at least `bytes` for input
   * `input` at `dims` that a run copies to the device without staging it
   * first; NULL on failure. NULL where any host memory serves (the runtime
   * allocates it). */
  void *(*input_buffer)(void *library_state, uint32_t input, const int64_t *dims, size_t bytes);
  /* kiln_session_library_call_info: the library's name of what ran call
   * `id` last, or NULL (none yet, or the device does not say). NULL where
   * the device never says. */
  const char *(*library_implementation)(void *library_state, uint32_t id);
  /* The threads a session asking for `num_threads` (0: the default) runs
   * on; NULL where the host's threads do not do the work (a GPU): a
   * session then never changes its count (thread_policy.h). */
  int32_t (*thread_count)(int32_t num_threads);
} kiln_device;

/* Prepares a session's library calls when it is created: calls
 * `plan(context, id, dims, guessed)` for each call of kind `kind` at each
 * batch the artifact declares (`--batch-buckets`; 1 when it declares
 * none), its first three operands' dynamic dims (-1) taken as that batch
 * (`guessed`: there were some, and a dynamic dim need not be the batch).
 * Stops at the first call for which `plan` returns nonzero and returns
 * that. */
static inline int kiln_prepare_calls(const kiln_model_v1 *abi, int32_t kind,
                                     int (*plan)(void *context, uint32_t id,
                                                 const int64_t *const *dims, int guessed),
                                     void *context) {
  uint32_t batches = abi->num_batch_buckets ? abi->num_batch_buckets : 1;
  for (uint32_t b = 0; b < batches; ++b) {
    int64_t batch = abi->num_batch_buckets ? (int64_t)abi->batch_buckets[b] : 1;
    for (uint32_t id = 0; id < abi->num_library_calls; ++id) {
      const kiln_library_call *call = &abi->library_calls[id];
      if (call->kind != kind)
        continue;
      int64_t storage[3][KILN_MAX_RANK];
      const int64_t *dims[3];
      int guessed = 0;
      for (int o = 0; o < 3; ++o) {
        for (int32_t d = 0; d < call->operand_ranks[o] && d < KILN_MAX_RANK; ++d) {
          int64_t v = call->operand_dims[o][d];
          storage[o][d] = v < 0 ? batch : v;
          guessed |= v < 0;
        }
        dims[o] = storage[o];
      }
      int rc = plan(context, id, dims, guessed);
      if (rc)
        return rc;
    }
  }
  return 0;
}

/* The CUDA device (devices/cuda.c). */
const kiln_device *kiln_cuda_device(void);

/* The device of kind `kind` (kiln_device_kind), or NULL when this runtime
 * has none. */
const kiln_device *kiln_device_for(uint32_t kind);
/* "cpu": the devices this runtime has, for messages. */
const char *kiln_device_names(void);

/* Sets the thread's last error (kiln_last_error) and returns `status`. */
kiln_status kiln_fail(kiln_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

#endif
