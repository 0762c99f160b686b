/*===- kiln.h - the Kiln runtime's C API -----------------------------------===*
 *
 * Load a compiled model, create sessions on it and run them. Every call
 * returns a kiln_status; on failure kiln_last_error() says what went wrong
 * (per thread). A model may be shared by many sessions; one session is
 * used by one thread at a time; sessions run concurrently.
 *
 *   kiln_model *model;
 *   if (kiln_model_load("resnet18.so", &model) != KILN_OK)
 *     fprintf(stderr, "%s\n", kiln_last_error());
 *   kiln_session *session;
 *   kiln_session_create(model, &session);
 *   kiln_tensor input = {data, KILN_DTYPE_F32, 4, {1, 3, 224, 224}};
 *   kiln_session_run(session, &input, 1);
 *   kiln_tensor output;
 *   kiln_session_output(session, 0, &output);  // valid until the next run
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln_model_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1, /* null pointer, index out of range */
  KILN_ERROR_LOAD = 2,             /* the artifact cannot be opened */
  KILN_ERROR_FORMAT = 3,           /* not a Kiln artifact, or another ABI version */
  KILN_ERROR_SHAPE = 4,            /* an input's rank or dims do not match, or a shape
                                      the model computes from its inputs is invalid */
  KILN_ERROR_DTYPE = 5,            /* an input's element type does not match */
  KILN_ERROR_OUT_OF_MEMORY = 6,
  KILN_ERROR_RUN = 7,              /* the compiled code failed */
  KILN_ERROR_VERIFY = 8            /* the artifact's bytes are not the expected ones */
} kiln_status;

/* A tensor handed to or returned by the runtime: row-major, dense. */
typedef struct kiln_tensor {
  void *data;
  int32_t dtype; /* kiln_dtype */
  int32_t rank;
  int64_t dims[KILN_MAX_RANK];
} kiln_tensor;

typedef struct kiln_model kiln_model;
typedef struct kiln_session kiln_session;

/* The message of the last failed call on this thread ("" if none, or if
 * the last call succeeded). */
const char *kiln_last_error(void);
/* The name of a status ("KILN_ERROR_SHAPE"). */
const char *kiln_status_name(kiln_status status);
/* Bytes per element of a dtype, 0 for an unknown one. */
size_t kiln_dtype_size(int32_t dtype);
const char *kiln_dtype_name(int32_t dtype);

/* Opens a compiled model (shared library). Loading an artifact runs its
 * code: load only artifacts you trust (docs/Security.md). */
kiln_status kiln_model_load(const char *path, kiln_model **model);
/* Opens a compiled model only if the SHA-256 of its file is `sha256` (64
 * hex digits, as `kiln compile` and `kiln verify-artifact` print it);
 * otherwise KILN_ERROR_VERIFY and nothing of the file runs. The bytes
 * checked are the bytes loaded (a private copy), so the file changing
 * after the check cannot matter. */
kiln_status kiln_model_load_verified(const char *path, const char *sha256, kiln_model **model);
/* Wraps a model linked into the program (its `kiln_model_descriptor`). */
kiln_status kiln_model_from_abi(const kiln_model_v1 *abi, kiln_model **model);
/* Lets go of the caller's handle; the model stays loaded while sessions
 * created from it live, and goes with the last of them. */
void kiln_model_free(kiln_model *model);

uint32_t kiln_model_num_inputs(const kiln_model *model);
uint32_t kiln_model_num_outputs(const kiln_model *model);
/* The descriptor of input / output i (dims of -1 are dynamic). */
const kiln_model_tensor *kiln_model_input(const kiln_model *model, uint32_t i);
const kiln_model_tensor *kiln_model_output(const kiln_model *model, uint32_t i);
const char *kiln_model_content_hash(const kiln_model *model);
/* Where the model's code runs: its device ("cpu") and target (triple and
 * processor, "x86_64-pc-linux-gnu znver3"), and the processor features
 * it needs ("avx2,fma,..."; "" for none). */
const char *kiln_model_device(const kiln_model *model);
const char *kiln_model_target(const kiln_model *model);
const char *kiln_model_required_features(const kiln_model *model);
/* How many operations the model hands to libraries (oneDNN) per run. */
uint32_t kiln_model_library_call_count(const kiln_model *model);
/* Library call i as the artifact describes it (kind, operand dims,
 * parameters, epilogue, constant and prepacked weights), or NULL. */
const kiln_library_call *kiln_model_library_call(const kiln_model *model, uint32_t i);
/* The batches (dim 0 of dynamic inputs) a session prepares its library
 * calls for when it is created (`kiln compile --batch-buckets`); `*count`
 * receives how many (0: batch 1 only). */
const uint64_t *kiln_model_batch_buckets(const kiln_model *model, uint32_t *count);
/* The most stack one run's generated code takes (`kiln_model_v1.stack_bytes`;
 * oneDNN's own frames come on top), 0 when the artifact does not say. */
uint64_t kiln_model_stack_bytes(const kiln_model *model);
/* Bytes of the model's planned arena (every intermediate with a static
 * shape, and with `kiln compile --max-batch` those that grow with the
 * batch), reserved by each session when it is created. */
uint64_t kiln_model_arena_bytes(const kiln_model *model);
/* The largest dim 0 an input with a dynamic dim 0 may have (`kiln compile
 * --max-batch`); 0 when there is no limit. Runs with a larger batch fail
 * with KILN_ERROR_SHAPE. */
uint64_t kiln_model_max_batch(const kiln_model *model);
/* The compile report (JSON, see kiln_model_abi.h); "" if there is none. */
const char *kiln_model_report(const kiln_model *model);

/* Where a session's memory comes from, if not the C library: `allocate`
 * returns `bytes` aligned to `alignment` (a power of two <= 4096) or NULL;
 * `release` takes back what `allocate` returned. */
typedef struct kiln_allocator {
  void *(*allocate)(void *context, size_t bytes, size_t alignment);
  void (*release)(void *context, void *ptr);
  void *context;
} kiln_allocator;

typedef struct kiln_session_options {
  /* Threads of the library calls on the running thread; 0 = the OpenMP
   * default (all cores). */
  int32_t num_threads;
  /* Where the session's host memory comes from: the pool's (every buffer
   * of a run on the CPU), kiln_session_input_buffer's on the CPU, the
   * strings a run makes on a GPU. NULL for the C library's allocator.
   * On a GPU the pool is device memory (cuMemAlloc) and input/output
   * staging is pinned memory (cuMemHostAlloc), neither from here; a
   * training session's parameters, which the sessions bound to it share,
   * come from the C library. Must outlive the session. */
  const kiln_allocator *allocator;
} kiln_session_options;

kiln_status kiln_session_create(kiln_model *model, kiln_session **session);
/* As kiln_session_create, with options (NULL for the defaults). */
kiln_status kiln_session_create_with_options(kiln_model *model,
                                             const kiln_session_options *options,
                                             kiln_session **session);
void kiln_session_free(kiln_session *session);

/* Runs the model on `num_inputs` inputs, in the model's input order
 * (parameters, kiln_model_input_is_parameter, left out). */
kiln_status kiln_session_run(kiln_session *session, const kiln_tensor *inputs,
                             size_t num_inputs);
/* A buffer the session owns for input i (the model's index; not a
 * parameter, not strings) at dims `dims` (the input's rank): write the
 * next run's input into it and pass it to kiln_session_run as that
 * input's data. On a GPU it is pinned host memory that a run copies to
 * the device as it is, where other memory is first copied into pinned
 * staging (host time on every run: for a 224x224 RGB image about 10 us);
 * on the CPU it is ordinary memory, read in place. It stays valid until
 * the session is freed or this is called again for input i with more
 * bytes (a call with as many or fewer returns the same buffer). On a GPU
 * it is the memory a run of that batch copies the input from: a run
 * given other memory for input i copies that into it, replacing what it
 * held. */
kiln_status kiln_session_input_buffer(kiln_session *session, uint32_t i, const int64_t *dims,
                                      kiln_tensor *buffer);

/* Output i of the last run; its data stays valid until the next run or
 * kiln_session_free. */
kiln_status kiln_session_output(const kiln_session *session, uint32_t i,
                                kiln_tensor *output);

/* Binds output i to a caller-owned buffer: every later run writes the
 * output there (copied from the run's own buffer), and fails with
 * KILN_ERROR_SHAPE, naming the output, if the result's dims differ from
 * `buffer`'s. The dtype and rank must match the model's output; static dims
 * must match too. `buffer` NULL unbinds. kiln_session_output keeps
 * reporting the run's own buffer. */
kiln_status kiln_session_bind_output(kiln_session *session, uint32_t i,
                                     const kiln_tensor *buffer);

/* Training steps (kiln compile --train) keep their parameters and
 * optimiser state in the session: those inputs are "parameters", not
 * passed to kiln_session_run (which takes the others, in the model's
 * order), initialised from the artifact when the session is created and
 * updated by every run. kiln_session_parameter gives parameter `name`'s
 * buffer (read it, or write it to set the value the next run starts
 * from); it stays valid while the session lives.
 * On a GPU (a CUDA artifact) the parameters stay in device memory between
 * runs, and runs do not update the buffer: it is the parameter's host
 * copy, which each call of kiln_session_parameter refreshes (a download of
 * that parameter) and the next run uploads (it may have been written), so
 * call it again after runs to read the current value. Saving a checkpoint
 * downloads what the host lacks; loading one uploads at the next run. */
int kiln_model_input_is_parameter(const kiln_model *model, uint32_t i);
/* Whether output i is a parameter's update (the session copies it into
 * the parameter after each run; callers rarely need to read it: on a GPU
 * kiln_session_output gives the parameter's current value, downloaded). */
int kiln_model_output_updates_parameter(const kiln_model *model, uint32_t i);
kiln_status kiln_session_parameter(kiln_session *session, const char *name,
                                   kiln_tensor *parameter);

/* A training step's inference entry: the model as it was given, computing
 * with the parameters (NULL for other models). It belongs to `model`
 * (kiln_model_free does nothing to it); its inputs are the model's own
 * plus its parameters. kiln_session_create_inference makes a session of
 * it that uses `training`'s parameter buffers, so every run sees the
 * values the last step left (options NULL: `training`'s thread count).
 * Either session may be freed first; they must not run at the same time.
 * A session created on the entry with kiln_session_create starts from the
 * artifact's initial parameters instead. */
kiln_model *kiln_model_inference(const kiln_model *model);
kiln_status kiln_session_create_inference(kiln_session *training,
                                          const kiln_session_options *options,
                                          kiln_session **session);

/* Checkpoints: every tensor the session owns (parameters, optimiser state,
 * batch-norm running statistics) written to a file, and read back into a
 * session whose tensors of the same names, dtypes and dims it must all
 * hold (it may hold more; nothing changes unless all match). The format is
 * in docs/Training.md; kiln_checkpoint_* read it. */
kiln_status kiln_session_save_state(const kiln_session *session, const char *path);
kiln_status kiln_session_load_state(kiln_session *session, const char *path);
typedef struct kiln_checkpoint kiln_checkpoint;
kiln_status kiln_checkpoint_open(const char *path, kiln_checkpoint **checkpoint);
uint32_t kiln_checkpoint_count(const kiln_checkpoint *checkpoint);
/* Tensor i's name and value (data valid until kiln_checkpoint_free). */
kiln_status kiln_checkpoint_tensor(const kiln_checkpoint *checkpoint, uint32_t i,
                                   const char **name, kiln_tensor *tensor);
void kiln_checkpoint_free(kiln_checkpoint *checkpoint);

/* Profiling: with a hook set, each run calls hook(user, k) on the running
 * thread as kernel k starts (k: the kernel's index in the model's report,
 * as `kiln inspect` numbers them; kernels run in order, once per run), and
 * hook(user, KILN_KERNEL_END) when the run's code returns, so kernel k
 * takes from its call to the next. Time the calls in the hook (`kiln bench
 * --trace` does). NULL removes it; without a hook a kernel costs one
 * predicted branch. */
#define KILN_KERNEL_END UINT32_MAX
typedef void (*kiln_kernel_hook)(void *user, uint32_t kernel);
kiln_status kiln_session_set_kernel_hook(kiln_session *session, kiln_kernel_hook hook,
                                         void *user);

/* How library call `call` (0 .. kiln_model_library_call_count - 1) ran at
 * its last run in this session: in which kernel (the report's numbering,
 * as the kernel hook's; KILN_KERNEL_END before the call first ran) and by
 * which of the library's implementations (oneDNN's name of it:
 * "brgconv:avx512_core", "jit_wino_4x3:avx512_core" for Winograd's
 * algorithm; "" where the device does not say). The implementation can
 * differ between batches (`kiln bench --per-kernel` prints it). */
#define KILN_IMPLEMENTATION_CHARS 64
typedef struct kiln_library_call_info {
  uint32_t kernel;
  char implementation[KILN_IMPLEMENTATION_CHARS];
} kiln_library_call_info;
kiln_status kiln_session_library_call_info(const kiln_session *session, uint32_t call,
                                           kiln_library_call_info *info);

/* The session's pooled allocator: it serves every buffer of a run (the
 * compiled code's intermediates and the outputs) and keeps freed blocks,
 * so that after the first run of a shape a run allocates nothing. */
typedef struct kiln_memory_stats {
  uint64_t reserved_bytes;   /* taken from the heap, all time */
  uint64_t in_use_bytes;     /* handed out now */
  uint64_t peak_bytes;       /* most in use at once */
  uint64_t heap_allocations; /* blocks taken from the heap */
  uint64_t requests;         /* blocks handed out */
} kiln_memory_stats;
kiln_status kiln_session_memory_stats(const kiln_session *session,
                                      kiln_memory_stats *stats);

/* A GPU session's launches (all zero on the CPU). A CUDA session runs the
 * first run of each batch bucket on its stream, captures the second into
 * a CUDA Graph and replays that graph from then on; when a capture fails
 * the bucket stays on the stream and `fallback` says why. */
typedef struct kiln_device_stats {
  uint64_t stream_runs;        /* runs launched kernel by kernel */
  uint64_t graph_captures;     /* graphs captured (one per bucket) */
  uint64_t graph_replays;      /* runs that replayed a graph */
  uint64_t kernel_launches;    /* kernels launched on the stream or captured */
  uint64_t library_calls;      /* cuBLASLt and cuDNN calls enqueued or captured */
  uint64_t device_allocations; /* device memory allocations, all time */
  /* Bytes copied between host and device memory by the session, all
   * time: inputs, outputs, values the host reads back or writes, a
   * training step's parameters when they cross (kiln_session_parameter). */
  uint64_t bytes_to_device;
  uint64_t bytes_to_host;
  /* The host's time in replayed runs, all of them, outside waiting for
   * the GPU: copying inputs into pinned staging, enqueueing their copies,
   * the graph's launch and the outputs' copies (`replay_staging_ns`: the
   * first part). Divided by graph_replays: the host overhead a replay. */
  uint64_t replay_host_ns;
  uint64_t replay_staging_ns;
  char fallback[256];          /* why a capture failed, or "" */
} kiln_device_stats;
kiln_status kiln_session_device_stats(const kiln_session *session,
                                      kiln_device_stats *stats);

/* A GPU session's convolution plans (a call at a batch): made as one fused
 * graph of cuDNN's graph API, or through its convolution API instead; and
 * why the first of those left the graph API, or "" (all zero on the CPU).
 * A struct of its own: kiln_device_stats keeps its size. */
typedef struct kiln_library_plan_stats {
  uint64_t cudnn_graph_plans;
  uint64_t cudnn_api_plans;
  char cudnn_fallback[320];
} kiln_library_plan_stats;
kiln_status kiln_session_library_plan_stats(const kiln_session *session,
                                            kiln_library_plan_stats *stats);

/* A CPU session's thread count, run by run (off by default). With the
 * policy on, a session of N > 1 threads runs on N/2 while its runs are
 * faster so: when another process holds a core, N threads wait on the one
 * that shares it at every oneDNN call (resnet18 here: 20-22 ms on 1
 * thread, 72-148 ms on 2 beside a busy loop of the same priority). It decides from
 * its own runs' times, per input shape: one run at N/2 once a shape has
 * been timed, another when two runs in a row take 1.5x the shape's
 * fastest, and at N/2 a run at N after 1, 2, 4, ... 1024 runs. Off by
 * default because oneDNN may pick another work split for another thread
 * count, and then a run's bits depend on the count it ran on (each count
 * is deterministic; the values agree to rounding). On for a session with
 * kiln_session_set_adaptive_threads(session, 1), for every session with
 * KILN_ADAPTIVE_THREADS=1 in the environment. */
typedef struct kiln_thread_stats {
  int32_t threads;         /* N: what the session asked for, resolved */
  int32_t reduced_threads; /* N/2 (N when the policy is off) */
  int32_t adaptive;        /* 1 when runs may use reduced_threads */
  int32_t reduced_now;     /* the next run (not a try) uses reduced_threads */
  uint64_t runs;           /* runs timed by the policy since it was turned on */
  uint64_t reduced_runs;   /* of those, on reduced_threads */
  uint64_t tries;          /* runs that tried the other count */
  uint64_t switches;       /* tries that changed the count */
} kiln_thread_stats;
kiln_status kiln_session_thread_stats(const kiln_session *session, kiln_thread_stats *stats);
/* 1: the policy above, started afresh; 0: every later run on the
 * session's own count. No effect where the count never changes (1
 * thread, a GPU session). */
kiln_status kiln_session_set_adaptive_threads(kiln_session *session, int enabled);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_H */
