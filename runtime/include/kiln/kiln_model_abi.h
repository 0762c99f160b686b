/*===- kiln_model_abi.h - the contract between an artifact and the runtime -===*
 *
 * A compiled model (shared library, static library or object) exports one
 * symbol, `kiln_model_descriptor`, of type kiln_model_v1. The runtime reads
 * the descriptor
 * to validate inputs and calls `run`. Plain C, versioned: a runtime refuses
 * an artifact whose abi_version it does not know.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_MODEL_ABI_H
#define KILN_MODEL_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The highest rank of a model's tensors (inputs, outputs, library-call
 * operands): the compiler refuses more, the runtime checks it at load. */
#define KILN_MAX_RANK 8

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_MODEL_ABI_VERSION 15u
#define KILN_MODEL_MAGIC 0x4e4c494bu /* "KILN" */

/* Element types: the one table of them. X(NAME, value, bytes, "name")
 * for each; values are stable across versions. The runtime's
 * kiln_dtype_size / kiln_dtype_name and the compiler's descriptor writer
 * (backends/common) are generated from it.
 *
 * From F8E4M3FN on, storage-only types (ONNX's float8, float4 and 4- and
 * 2-bit integers; a model converts them with Cast or (De)QuantizeLinear):
 * ONE ELEMENT PER BYTE, its bits in the low bits of the byte and the other
 * bits zero (int4 -1 is 0x0F), not ONNX's packing of two or four to a
 * byte. Float8 bytes are the formats' encodings (OCP / ONNX).
 *
 * STRING: each element is a `const char *` to a NUL-terminated UTF-8
 * string (ONNX's string tensors). An input's strings are the caller's and
 * must stay valid during the run; an output's strings belong to the
 * session and stay valid until its next run or until it is freed. */
#define KILN_DTYPES(X)                 \
  X(F32, 1, 4, "float32")             \
  X(F64, 2, 8, "float64")             \
  X(F16, 3, 2, "float16")             \
  X(BF16, 4, 2, "bfloat16")           \
  X(I64, 5, 8, "int64")               \
  X(I32, 6, 4, "int32")               \
  X(I16, 7, 2, "int16")               \
  X(I8, 8, 1, "int8")                 \
  X(U8, 9, 1, "uint8")                \
  X(U16, 10, 2, "uint16")             \
  X(U32, 11, 4, "uint32")             \
  X(U64, 12, 8, "uint64")             \
  X(BOOL, 13, 1, "bool")               \
  X(F8E4M3FN, 14, 1, "float8e4m3fn")   \
  X(F8E4M3FNUZ, 15, 1, "float8e4m3fnuz") \
  X(F8E5M2, 16, 1, "float8e5m2")       \
  X(F8E5M2FNUZ, 17, 1, "float8e5m2fnuz") \
  X(F8E8M0, 18, 1, "float8e8m0")       \
  X(F4E2M1, 19, 1, "float4e2m1")       \
  X(I4, 20, 1, "int4")                 \
  X(U4, 21, 1, "uint4")                \
  X(I2, 22, 1, "int2")                 \
  X(U2, 23, 1, "uint2")                \
  X(STRING, 24, 8, "string")

typedef enum kiln_dtype {
#define KILN_DTYPE_ENUM(NAME, VALUE, BYTES, TEXT) KILN_DTYPE_##NAME = VALUE,
  KILN_DTYPES(KILN_DTYPE_ENUM)
#undef KILN_DTYPE_ENUM
} kiln_dtype;

/* The device an artifact's code runs on; the runtime picks its device
 * layer (runtime/src/devices) from it. */
typedef enum kiln_device_kind {
  KILN_DEVICE_CPU = 1,
  KILN_DEVICE_CUDA = 2
} kiln_device_kind;

/* A model input or output. dims[i] is -1 for a dynamic dim. */
typedef struct kiln_model_tensor {
  const char *name;
  int32_t dtype; /* kiln_dtype */
  int32_t rank;
  const int64_t *dims;
} kiln_model_tensor;

/* A library operation the compiled code asks the runtime to perform:
 * what it computes (a kind, its operands' dims and the kind's parameters),
 * not how: the device runs it in its vendor library (oneDNN on CPU). The
 * runtime prepares each one when a session is created (or, for a dynamic
 * batch, the first time a batch size is seen) and executes it when the
 * code calls back. A new kind adds a value here and its parameter layout;
 * the record stays the same. */
typedef enum kiln_library_kind {
  /* operands: input [N,C,H,W], weight [O,C/g,KH,KW], output [N,O,OH,OW];
   * params (S = 2 spatial dims): groups, strides[S], dilations[S],
   * pads[2S] (all low, then all high), then optionally layouts[2]: how
   * the input's and the output's buffers are laid out
   * (kiln_library_layout; channels-first when absent). The dims stay
   * [N,C,H,W] in either layout. A CUDA artifact's call may end with
   * output_batch_stride instead of layouts: the output is channels of a
   * larger channels-first buffer (a concatenation's), its batch items
   * that many elements apart. */
  KILN_LIBRARY_CONV = 1,
  /* operands: lhs [..,M,K], rhs [..,K,N], output [..,M,N]; lower-rank
   * operands are broadcast from the front; params: none, or transposes[2]:
   * 1 when the lhs's (rhs's) buffer holds it with its last two dims
   * swapped ([..,K,M], [..,N,K]: a transpose's input, read through
   * strides), whose dims are then the buffer's */
  KILN_LIBRARY_MATMUL = 2,
  /* operands: input [N,C,H,W], output [N,C,OH,OW] (no weight); params:
   * algorithm (kiln_library_pooling), kernel[2], strides[2], pads[4] (all
   * low, then all high), then optionally layouts[2] as for CONV; a kernel
   * dim of -1 is the input's, known only at run time (a global average
   * pool: stride 1, no padding, an output dim of 1) */
  KILN_LIBRARY_POOL = 3,
  /* operands: k >= 2 inputs [N,Ci,H,W], output [N,C,H,W], C the sum of
   * the Ci (no weight); params: axis (1: the channels), then optionally
   * layouts[k + 1]: each input's, then the output's (kiln_library_layout) */
  KILN_LIBRARY_CONCAT = 4,
  /* operands: input [N,C,H,W], scale [N or 1,C,1,1], output [N,C,H,W]:
   * output = input * scale, the scale broadcast over H and W (a
   * squeeze-excitation; a batch norm's x * s, then its bias t of C values
   * and its activation as the epilogue); no residual, `weights` NULL;
   * params: none, or layouts[2] as for CONV (the scale's and the bias's
   * bytes are the same in either) */
  KILN_LIBRARY_SCALE = 5
} kiln_library_kind;

/* The most inputs a concat call has (the compiler generates larger ones). */
#define KILN_LIBRARY_MAX_CONCAT_INPUTS 32

typedef enum kiln_library_pooling {
  KILN_POOLING_MAX = 0,                 /* padding never wins */
  KILN_POOLING_AVERAGE_INCLUDE_PAD = 1, /* padded positions counted */
  KILN_POOLING_AVERAGE_EXCLUDE_PAD = 2  /* only real positions counted */
} kiln_library_pooling;

/* The physical layout of a convolution's activation buffer. */
typedef enum kiln_library_layout {
  KILN_LAYOUT_CHANNELS_FIRST = 0, /* NCHW, row-major in the dims */
  KILN_LAYOUT_CHANNELS_LAST = 1   /* NHWC: only library calls touch it */
} kiln_library_layout;

/* The activation at the end of a call's fused epilogue. */
typedef enum kiln_activation {
  KILN_ACTIVATION_NONE = 0,
  KILN_ACTIVATION_RELU = 1,
  KILN_ACTIVATION_CLIP = 2, /* to [alpha, beta] */
  KILN_ACTIVATION_SIGMOID = 3,
  KILN_ACTIVATION_TANH = 4,
  KILN_ACTIVATION_GELU_ERF = 5,
  KILN_ACTIVATION_GELU_TANH = 6,
  KILN_ACTIVATION_SILU = 7,        /* x * sigmoid(x) */
  KILN_ACTIVATION_HARDSIGMOID = 8, /* clip(alpha * x + beta, 0, 1) */
  KILN_ACTIVATION_HARDSWISH = 9    /* x * clip(x / 6 + 1/2, 0, 1): alpha 1/6, beta 1/2 */
} kiln_activation;

/* A call's fused epilogue: output = activation(op(...) + bias + residual),
 * where bias (one value per output channel: dim 1 of a convolution's or
 * a scale's output, the last dim of a matmul's) is there when has_bias
 * says so, and
 * with has_residual the output buffer holds the residual when the call
 * starts (it is accumulated into). */
typedef struct kiln_library_epilogue {
  int32_t has_bias, has_residual;
  int32_t activation; /* kiln_activation */
  float alpha, beta;  /* the activation's parameters (clip: the bounds; hard sigmoid,
                       * HardSwish: alpha, beta) */
} kiln_library_epilogue;

/* The code passes the operands in order, then the bias if present; their
 * dims here are -1 where dynamic. */
typedef struct kiln_library_call {
  int32_t kind; /* kiln_library_kind */
  int32_t num_operands;
  const int32_t *operand_ranks;
  const int64_t *const *operand_dims;
  int32_t num_params;
  const int64_t *params; /* the kind's layout (kiln_library_kind) */
  kiln_library_epilogue epilogue;
  /* The weight operand's data when it is a constant of the artifact (the
   * same bytes the code passes), or NULL when it varies (an input, an
   * activation). The device may prepare constant weights once, when a
   * session is created (oneDNN: packed into its layout). */
  const void *weights;
  /* How `weights` is laid out when the compiler prepacked it for the
   * device's library (CPU: oneDNN's memory descriptor, as the oneDNN the
   * compiler loaded wrote it), or NULL for the operand's plain layout.
   * The device uses prepacked weights as they are when its library picks
   * the same layout at run time, and repacks them once otherwise. */
  const void *weights_layout;
  uint32_t weights_layout_bytes;
} kiln_library_call;

/* What the runtime offers compiled code during `run`. `library_call`
 * executes call `id` on `operands` (data pointers, row-major) with their
 * dims; it returns 0 on success. */
typedef struct kiln_runtime_services {
  int (*library_call)(void *state, uint32_t id, void *const *operands,
                      const int64_t *const *dims);
  /* Every buffer the compiled code allocates (intermediates and outputs)
   * comes from here; outputs are released by the runtime with `release`. */
  void *(*allocate)(void *state, size_t bytes, size_t alignment);
  void (*release)(void *state, void *ptr);
  /* Runs `chunk(context, lo, hi)` over disjoint ranges that together cover
   * [begin, end), on the session's threads, and returns when all are done.
   * Each index is run exactly once, so results do not depend on the thread
   * count. Chunks neither allocate nor call back. */
  void (*parallel_for)(void *state, void (*chunk)(void *context, int64_t lo, int64_t hi),
                       void *context, int64_t begin, int64_t end);
  /* Called on the running thread as kernel `kernel` starts (its index in
   * the report's kernel list, `kiln inspect`'s numbering), once per kernel
   * per run, in order; for profiling. */
  void (*kernel_begin)(void *state, uint32_t kernel);
  /* A GPU device's (KILN_DEVICE_CUDA; NULL on the CPU). `launch_kernel`
   * enqueues kernel `kernel` (its index in kiln_gpu_code.kernels) on the
   * session's stream with `grid` x `block` threads and the kernel's
   * parameters (`params[i]` points at parameter i's value); 0 on success.
   * It neither synchronises nor allocates, so a run can be captured into
   * a CUDA Graph. `device_constant` returns the device copy of the
   * artifact's constant `index` (`bytes` at `host`), copied to the device
   * on its first use by the session, or NULL when that failed. */
  int (*launch_kernel)(void *state, uint32_t kernel, const uint32_t grid[3],
                       const uint32_t block[3], void **params);
  void *(*device_constant)(void *state, uint32_t index, const void *host, size_t bytes);
  /* Storage for the strings a run makes (a string output's elements):
   * `bytes` that stay valid until the session's next run or its end, never
   * released by the code; NULL when out of memory. */
  void *(*allocate_strings)(void *state, size_t bytes);
  /* Copies `bytes` of device memory at `device` to `host` once the work
   * enqueued before has finished: a value the model computes that the
   * host needs (a count that sizes an allocation); 0 on success. On the
   * CPU, a copy. A GPU artifact that calls it has KILN_GPU_READS_DEVICE:
   * its runs synchronise, so they are never captured. */
  int (*read_device)(void *state, void *host, const void *device, size_t bytes);
  /* Copies `bytes` at `host` to device memory at `device` once the work
   * enqueued before has finished, and returns when the copy is done: what
   * the host computes for the device (a string operation's result, which
   * the host code computes on copies it read with read_device); 0 on
   * success. On the CPU, a copy. Like read_device, a GPU artifact that
   * calls it has KILN_GPU_READS_DEVICE. */
  int (*write_device)(void *state, void *device, const void *host, size_t bytes);
} kiln_runtime_services;

/* Runs the model on row-major inputs `in_data[i]` with dims `in_dims[i]`.
 * `services` and `state` are handed back to library calls and allocations.
 * On success (0) output i is at `out_data[i]` with dims written to
 * `out_dims[i]`; its storage starts at `out_alloc[i]`, which the caller
 * hands back to `services->release`. A non-zero return is an error:
 * KILN_RUN_OUT_OF_MEMORY when an allocation failed (the run stopped there,
 * leaving what it had allocated to the caller to take back);
 * KILN_RUN_SHAPE_ERROR when a shape the model computes at run time is
 * invalid (a negative size, a reshape that changes the element count, an
 * edge, reflect or wrap pad reading from an empty tensor, a matmul whose
 * operands disagree on the dim it sums over). */
#define KILN_RUN_OUT_OF_MEMORY 2
#define KILN_RUN_SHAPE_ERROR 3
typedef int (*kiln_model_run_fn)(const kiln_runtime_services *services,
                                 void *state, void *const *in_data,
                                 const int64_t *const *in_dims,
                                 void **out_alloc, void **out_data,
                                 int64_t *const *out_dims);

/* A tensor a session owns between runs (a training step's parameters and
 * optimiser state, `kiln compile --train`): input `input` is not passed
 * by the caller; the session holds its buffer, initialised from `initial`
 * (its bytes, row-major; its dims are static) when it is created, and
 * after every successful run copies output `output` (same dtype and dims)
 * into it, unless `output` is KILN_STATE_READ_ONLY (the inference entry of
 * a training artifact reads the parameters and never updates them). */
#define KILN_STATE_READ_ONLY UINT32_MAX
typedef struct kiln_model_state {
  uint32_t input;
  uint32_t output;
  const void *initial;
} kiln_model_state;

/* A GPU artifact's device code: one binary per GPU it was compiled for
 * and PTX for later ones (`kiln compile --target=cuda --gpu=...`). */
typedef enum kiln_gpu_format {
  KILN_GPU_CUBIN = 1, /* runs on GPUs of `arch`'s major version, minor >= its minor */
  KILN_GPU_PTX = 2    /* NUL-terminated text the driver compiles for GPUs >= `arch` */
} kiln_gpu_format;

typedef struct kiln_gpu_binary {
  uint32_t format; /* kiln_gpu_format */
  uint32_t arch;   /* compute capability times 10: 80 for sm_80 */
  uint64_t size;   /* bytes at `data` (PTX: with its NUL) */
  const void *data;
} kiln_gpu_binary;

/* How a GPU artifact may run. */
typedef enum kiln_gpu_flags {
  /* `kiln compile --allow-nondeterministic`: the runtime may pick library
   * algorithms whose results vary from run to run (cuDNN's, e.g. those
   * summing with atomics); without it, only deterministic ones. */
  KILN_GPU_ALLOW_NONDETERMINISTIC = 1u,
  /* The host code reads values from device memory (read_device): sizes
   * the model computes from data (NonZero, Unique, ...), or computes on
   * the host what it writes back (write_device: string operations). Its
   * runs are not captured into CUDA Graphs and a batch runs unpadded. */
  KILN_GPU_READS_DEVICE = 2u
} kiln_gpu_flags;

typedef struct kiln_gpu_code {
  uint32_t num_binaries;
  const kiln_gpu_binary *binaries;
  /* The kernels' entry names, in every binary; launch_kernel's index. */
  uint32_t num_kernels;
  const char *const *kernels;
  /* How many constants the code asks for with device_constant. */
  uint32_t num_constants;
  /* kiln_gpu_flags, or-ed. */
  uint32_t flags;
} kiln_gpu_code;

typedef struct kiln_model_v1 {
  uint32_t magic;       /* KILN_MODEL_MAGIC */
  uint32_t abi_version; /* KILN_MODEL_ABI_VERSION */
  uint32_t num_inputs;
  uint32_t num_outputs;
  const kiln_model_tensor *inputs;
  const kiln_model_tensor *outputs;
  const char *content_hash; /* of the model and the compile flags */
  const char *target;       /* e.g. "x86_64 znver3" */
  uint32_t num_library_calls;
  const kiln_library_call *library_calls;
  /* Bytes of the arena holding every intermediate with a static shape
   * (kiln-plan-memory); intermediates with dynamic dims come from the
   * pool one by one. The runtime reserves the arena when a session is
   * created. */
  uint64_t arena_bytes;
  /* The largest dim 0 of each input whose dim 0 is dynamic that the arena
   * holds (`kiln compile --max-batch`); 0 when the arena does not depend
   * on it. The runtime refuses larger inputs. */
  uint64_t max_batch;
  /* The compile report as JSON: the memory plan (arena, lower bound, naive
   * sum, every planned buffer's offset, size and lifetime) and the kernels
   * with the model's nodes in each. What `kiln inspect` shows. */
  const char *report;
  /* kiln_device_kind: where the code runs. */
  uint32_t device;
  /* The processor features the code uses, comma-separated in LLVM's
   * names ("avx2,fma,avx512f"); the device refuses an artifact that needs
   * one its host lacks, naming it, rather than fault on the instruction. */
  const char *required_features;
  /* The batch sizes (dim 0 of dynamic inputs) a session prepares its
   * library calls for when it is created (`kiln compile --batch-buckets`),
   * at most KILN_MAX_BATCH_BUCKETS; none: batch 1. Other batches prepare
   * at their first run. */
  uint32_t num_batch_buckets;
  const uint64_t *batch_buckets;
  /* The most stack, in bytes, the generated code of one run takes on the
   * calling thread (its largest frame and its stack buffers, which do not
   * grow with the batch), excluding the vendor library's; 0: unknown. */
  uint64_t stack_bytes;
  /* Session-owned tensors (kiln_model_state); none for inference. */
  uint32_t num_state;
  const kiln_model_state *state;
  kiln_model_run_fn run;
  /* A training step's (`kiln compile --train`) inference entry: the model
   * as it was given (its outputs, inference-form batch normalisation, no
   * dropout) whose parameters are read-only session-owned tensors of the
   * training step's names, so that a session bound to a training
   * session's parameters (kiln_session_create_inference) computes with
   * their current values. NULL for other artifacts; it has none itself. */
  const struct kiln_model_v1 *inference;
  /* KILN_DEVICE_CUDA: the device code (kiln_gpu_code); NULL on the CPU. */
  const kiln_gpu_code *gpu;
} kiln_model_v1;

/* The most batch buckets an artifact declares. */
#define KILN_MAX_BATCH_BUCKETS 8

#ifdef __cplusplus
}
#endif

#endif /* KILN_MODEL_ABI_H */
