/* runtime_c_api_test.c IMAGE_MODEL.so MLP_MODEL.so SCRATCH_DIR
 * A C program that uses only kiln.h: loads a compiled model, checks its
 * metadata and the runtime's errors for bad inputs and artifacts, runs it,
 * checks that 4 sessions on 4 threads give outputs bit-identical to one
 * session, and counts heap allocations during runs. Prints
 * "N passed, N failed". */
#include "kiln/kiln.h"
#include "check.h"

#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

/* Counts every heap allocation of the process (this program's malloc
 * interposes the C library's for every shared library too). Under
 * AddressSanitizer, which owns malloc, the count is not taken. */
#if defined(__SANITIZE_ADDRESS__)
#define COUNTS_HEAP 0
static volatile long heap_calls;
#else
#define COUNTS_HEAP 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static volatile long heap_calls;
void *malloc(size_t n) { ++heap_calls; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { ++heap_calls; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { ++heap_calls; return __libc_realloc(p, n); }
void *aligned_alloc(size_t a, size_t n) { ++heap_calls; return __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { ++heap_calls; return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
  ++heap_calls;
  *out = __libc_memalign(a, n);
  return *out ? 0 : 12;
}
#endif


static kiln_model *model;
static kiln_tensor input;
static float *reference;
static size_t output_count;

static size_t count_of(const kiln_tensor *t) {
  size_t n = 1;
  for (int d = 0; d < t->rank; ++d)
    n *= (size_t)t->dims[d];
  return n;
}

static void *run_on_thread(void *arg) {
  int *same = arg;
  kiln_session *session;
  *same = 0;
  if (kiln_session_create(model, &session) != KILN_OK)
    return NULL;
  kiln_tensor out;
  if (kiln_session_run(session, &input, 1) == KILN_OK &&
      kiln_session_output(session, 0, &out) == KILN_OK)
    *same = memcmp(out.data, reference, output_count * sizeof(float)) == 0;
  kiln_session_free(session);
  return NULL;
}

/* A caller-supplied allocator that counts what the pool asks of it. */
static long hook_allocations, hook_releases;
static void *hook_allocate(void *context, size_t bytes, size_t alignment) {
  ++*(long *)context;
  return aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
}
static void hook_release(void *context, void *ptr) {
  (void)context;
  ++hook_releases;
  free(ptr);
}

static void write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(data, 1, size, f);
    fclose(f);
  }
}

/* Input 0 of an f32 model, dynamic dims 1, filled with a fixed pattern
 * (caller frees .data). */
static kiln_tensor pattern_input(const kiln_model *m) {
  const kiln_model_tensor *desc = kiln_model_input(m, 0);
  kiln_tensor x = {0};
  x.dtype = desc->dtype;
  x.rank = desc->rank;
  size_t n = 1;
  for (int d = 0; d < desc->rank; ++d) {
    x.dims[d] = desc->dims[d] < 0 ? 1 : desc->dims[d];
    n *= (size_t)x.dims[d];
  }
  float *data = malloc(n * sizeof(float));
  for (size_t i = 0; data && i < n; ++i)
    data[i] = (float)(i % 17) / 17.0f - 0.5f;
  x.data = data;
  return x;
}

/* What the kernel hook saw. */
struct kernel_log {
  uint32_t ids[4096];
  uint32_t count;
};
static void record_kernel(void *user, uint32_t kernel) {
  struct kernel_log *log = user;
  if (log->count < 4096)
    log->ids[log->count++] = kernel;
}
/* Kernels in the report's JSON: each has a "kind". */
static uint32_t count_report_kernels(const char *report) {
  uint32_t n = 0;
  for (const char *p = report; p && (p = strstr(p, "\"kind\":")); ++p)
    ++n;
  return n;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s IMAGE_MODEL.so MLP_MODEL.so SCRATCH_DIR GENERATED_IMAGE_MODEL.so\n",
            argv[0]);
    return 2;
  }
  const char *scratch = argv[3];
  CHECK(kiln_model_load(argv[1], &model) == KILN_OK, "loading %s", argv[1]);
  if (!model) {
    printf("%d passed, %d failed\n", passed, failed);
    return 1;
  }
  CHECK(kiln_model_num_inputs(model) == 1, "one input");
  CHECK(kiln_model_num_outputs(model) == 1, "one output");
  const kiln_model_tensor *in = kiln_model_input(model, 0);
  CHECK(in && in->dtype == KILN_DTYPE_F32 && in->rank == 4, "input is a float32 image");
  CHECK(strlen(kiln_model_content_hash(model)) == 64, "a SHA-256 content hash");
  CHECK(strcmp(kiln_model_device(model), "cpu") == 0, "runs on the CPU device");
  CHECK(strncmp(kiln_model_target(model), "x86_64", 6) == 0, "a target triple and processor: %s",
        kiln_model_target(model));
  CHECK(strstr(kiln_model_required_features(model), "sse4.2") != NULL,
        "the processor features it needs: %s", kiln_model_required_features(model));
  CHECK(kiln_model_input(model, 5) == NULL, "input index out of range");

  input.dtype = KILN_DTYPE_F32;
  input.rank = in->rank;
  size_t n = 1;
  for (int d = 0; d < in->rank; ++d) {
    input.dims[d] = in->dims[d] < 0 ? 1 : in->dims[d];
    n *= (size_t)input.dims[d];
  }
  float *data = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    data[i] = (float)sin((double)i * 0.001);
  input.data = data;

  kiln_session *session;
  CHECK(kiln_session_create(model, &session) == KILN_OK, "creating a session");

  /* Bad inputs are errors with messages, not crashes. */
  kiln_tensor bad = input;
  bad.dtype = KILN_DTYPE_I64;
  CHECK(kiln_session_run(session, &bad, 1) == KILN_ERROR_DTYPE, "wrong dtype");
  CHECK(strstr(kiln_last_error(), in->name) != NULL, "the message names the input");
  bad = input;
  bad.dims[1] += 1;
  CHECK(kiln_session_run(session, &bad, 1) == KILN_ERROR_SHAPE, "wrong dim");
  bad = input;
  bad.rank = 3;
  CHECK(kiln_session_run(session, &bad, 1) == KILN_ERROR_SHAPE, "wrong rank");
  CHECK(kiln_session_run(session, &input, 2) == KILN_ERROR_INVALID_ARGUMENT, "wrong count");
  kiln_tensor out;
  CHECK(kiln_session_output(session, 0, &out) == KILN_ERROR_INVALID_ARGUMENT,
        "no output before a run");
  /* What ran each library call: nothing before a run; after it, the
   * kernel it ran in (its report's numbering) and oneDNN's kernel. */
  uint32_t calls = kiln_model_library_call_count(model);
  kiln_library_call_info info;
  CHECK(calls > 0 && kiln_session_library_call_info(session, 0, &info) == KILN_OK &&
            info.kernel == KILN_KERNEL_END && info.implementation[0] == 0,
        "no library call has run before the first run");
  CHECK(kiln_session_library_call_info(session, calls, &info) == KILN_ERROR_INVALID_ARGUMENT &&
            strstr(kiln_last_error(), "call") != NULL,
        "a library call out of range is an error");
  CHECK(kiln_session_library_call_info(NULL, 0, &info) == KILN_ERROR_INVALID_ARGUMENT,
        "a null session is an error");

  CHECK(kiln_session_run(session, &input, 1) == KILN_OK, "running");
  CHECK(kiln_session_output(session, 0, &out) == KILN_OK, "reading the output");
  uint32_t previous_kernel = 0, ordered = 1;
  for (uint32_t i = 0; i < calls; ++i) {
    ordered &= kiln_session_library_call_info(session, i, &info) == KILN_OK &&
               info.kernel != KILN_KERNEL_END && info.kernel >= previous_kernel &&
               strchr(info.implementation, ':') != NULL;
    previous_kernel = info.kernel;
  }
  CHECK(ordered, "each of the %u library calls ran in a kernel, in order, by a named oneDNN "
        "kernel (last: #%u %s)", calls, info.kernel, info.implementation);
  output_count = count_of(&out);
  int finite = 1;
  for (size_t i = 0; i < output_count; ++i)
    finite &= isfinite(((float *)out.data)[i]);
  CHECK(finite && output_count > 0, "finite outputs");
  reference = malloc(output_count * sizeof(float));
  memcpy(reference, out.data, output_count * sizeof(float));
  CHECK(kiln_session_run(session, &input, 1) == KILN_OK &&
            kiln_session_output(session, 0, &out) == KILN_OK &&
            memcmp(out.data, reference, output_count * sizeof(float)) == 0,
        "a second run gives the same bits");
  /* An input written into the session's own buffer (on the CPU read in
   * place) gives the same bits; bad requests are refused. */
  {
    kiln_tensor buffer, again;
    CHECK(kiln_session_input_buffer(session, 0, input.dims, &buffer) == KILN_OK &&
              buffer.data && buffer.dtype == KILN_DTYPE_F32 && buffer.rank == input.rank &&
              memcmp(buffer.dims, input.dims, (size_t)input.rank * sizeof(int64_t)) == 0,
          "an input buffer of the session's: %s", kiln_last_error());
    if (buffer.data) {
      memcpy(buffer.data, input.data, n * sizeof(float));
      CHECK(kiln_session_run(session, &buffer, 1) == KILN_OK &&
                kiln_session_output(session, 0, &out) == KILN_OK &&
                memcmp(out.data, reference, output_count * sizeof(float)) == 0,
            "a run from it gives the same bits");
      CHECK(kiln_session_input_buffer(session, 0, input.dims, &again) == KILN_OK &&
                again.data == buffer.data,
            "asked again for as many bytes: the same buffer");
    }
    int64_t wrong[KILN_MAX_RANK];
    memcpy(wrong, input.dims, sizeof wrong);
    wrong[1] += 1;
    CHECK(kiln_session_input_buffer(session, 0, wrong, &again) == KILN_ERROR_SHAPE &&
              strstr(kiln_last_error(), in->name) != NULL,
          "a buffer of the wrong dims is refused, naming the input: %s", kiln_last_error());
    CHECK(kiln_session_input_buffer(session, 3, input.dims, &again) ==
              KILN_ERROR_INVALID_ARGUMENT,
          "an input out of range is refused");
    CHECK(kiln_session_input_buffer(session, 0, NULL, &again) == KILN_ERROR_INVALID_ARGUMENT,
          "null dims are refused");
  }
  /* An inference model has no inference entry and owns no tensors. */
  {
    kiln_session *entry = NULL;
    CHECK(kiln_model_inference(model) == NULL, "no inference entry");
    CHECK(kiln_session_create_inference(session, NULL, &entry) == KILN_ERROR_INVALID_ARGUMENT &&
              strstr(kiln_last_error(), "--train") != NULL && entry == NULL,
          "no inference session of an inference model: %s", kiln_last_error());
    CHECK(kiln_session_save_state(session, "unused.kstate") == KILN_ERROR_INVALID_ARGUMENT,
          "no checkpoint of a session that owns no tensors");
    kiln_checkpoint *checkpoint = NULL;
    CHECK(kiln_checkpoint_open(argv[1], &checkpoint) == KILN_ERROR_FORMAT && !checkpoint &&
              strstr(kiln_last_error(), "KILNCKPT") != NULL,
          "an artifact is not a checkpoint: %s", kiln_last_error());
    CHECK(kiln_checkpoint_open("/nonexistent.kstate", &checkpoint) == KILN_ERROR_LOAD,
          "a missing checkpoint");
  }
  /* The kernel hook: each kernel of the report, once, in order, then the
   * end marker; removed, it is not called. */
  {
    struct kernel_log log = {0};
    CHECK(kiln_session_set_kernel_hook(NULL, record_kernel, &log) == KILN_ERROR_INVALID_ARGUMENT,
          "a hook needs a session");
    CHECK(kiln_session_set_kernel_hook(session, record_kernel, &log) == KILN_OK, "setting a hook");
    CHECK(kiln_session_run(session, &input, 1) == KILN_OK, "running with the hook");
    uint32_t kernels = count_report_kernels(kiln_model_report(model));
    int in_order = log.count == kernels + 1 && log.ids[log.count - 1] == KILN_KERNEL_END;
    for (uint32_t i = 0; in_order && i < kernels; ++i)
      in_order = log.ids[i] == i;
    CHECK(kernels > 0 && in_order, "the hook sees kernels 0..%u in order, then the end (%u calls)",
          kernels - 1, log.count);
    CHECK(kiln_session_output(session, 0, &out) == KILN_OK &&
              memcmp(out.data, reference, output_count * sizeof(float)) == 0,
          "the hook changes no result");
    CHECK(kiln_session_set_kernel_hook(session, NULL, NULL) == KILN_OK, "removing the hook");
    log.count = 0;
    CHECK(kiln_session_run(session, &input, 1) == KILN_OK && log.count == 0,
          "a removed hook is not called");
  }
  /* After the first run, runs take every buffer from the session's pool:
   * 100 runs, no heap allocation at all. */
  kiln_memory_stats before, after;
  CHECK(kiln_session_memory_stats(session, &before) == KILN_OK, "memory stats");
  CHECK(before.heap_allocations > 0 && before.peak_bytes >= before.in_use_bytes &&
            before.reserved_bytes >= before.peak_bytes,
        "the pool reports what it took (%llu bytes reserved, %llu peak)",
        (unsigned long long)before.reserved_bytes, (unsigned long long)before.peak_bytes);
  long calls_before = heap_calls;
  int runs_ok = 1;
  for (int r = 0; r < 100; ++r)
    runs_ok &= kiln_session_run(session, &input, 1) == KILN_OK;
  long heap_during = heap_calls - calls_before;
  kiln_session_memory_stats(session, &after);
  CHECK(runs_ok, "100 more runs");
  /* oneDNN's C API builds a small argument map on every execute (about 20
   * allocations); nothing else may allocate. */
  long per_run = heap_during / 100;
  long library_calls = (long)kiln_model_library_call_count(model);
  printf("heap allocations per run: %ld (%ld oneDNN calls)\n", per_run, library_calls);
  if (COUNTS_HEAP)
    CHECK(per_run <= 24 * library_calls,
          "100 runs after the first make %ld heap allocations, more than oneDNN's", heap_during);
  else
    printf("SKIPPED: heap counting (AddressSanitizer owns malloc)\n");
  CHECK(after.heap_allocations == before.heap_allocations,
        "the pool took nothing more from the heap");
  CHECK(after.requests > before.requests, "the pool served the runs");
  kiln_session_free(session);

  /* Session options: one library thread and the caller's allocator; the
   * result does not change. */
  {
    kiln_allocator allocator = {hook_allocate, hook_release, &hook_allocations};
    kiln_session_options options = {1, &allocator};
    kiln_session *hooked;
    CHECK(kiln_session_create_with_options(model, &options, &hooked) == KILN_OK,
          "a session with options");
    kiln_tensor o;
    /* oneDNN splits a convolution's work by the thread count it was
     * created for, so one thread may round differently: same values, not
     * necessarily the same bits (generated code is bit-exact, see below). */
    int same = kiln_session_run(hooked, &input, 1) == KILN_OK &&
               kiln_session_output(hooked, 0, &o) == KILN_OK;
    double worst = 0, largest = 0;
    for (size_t i = 0; same && i < output_count; ++i) {
      double d = fabs((double)((float *)o.data)[i] - reference[i]);
      worst = d > worst ? d : worst;
      largest = fabs(reference[i]) > largest ? fabs(reference[i]) : largest;
    }
    CHECK(same && worst <= 1e-5 * largest,
          "one thread and the caller's allocator give the same values (relative %g)",
          largest > 0 ? worst / largest : worst);
    CHECK(hook_allocations > 0, "the pool took its memory from the caller's allocator");
    /* The session's input buffers are its memory too. */
    long before_buffer = hook_allocations;
    kiln_tensor buffer;
    CHECK(kiln_session_input_buffer(hooked, 0, input.dims, &buffer) == KILN_OK &&
              hook_allocations == before_buffer + 1,
          "an input buffer from the caller's allocator (%ld allocations for it)",
          hook_allocations - before_buffer);
    kiln_session_free(hooked);
    CHECK(hook_releases == hook_allocations, "and gave all of it back (%ld of %ld)",
          hook_releases, hook_allocations);
    kiln_session_options bad = {-1, NULL};
    CHECK(kiln_session_create_with_options(model, &bad, &hooked) ==
              KILN_ERROR_INVALID_ARGUMENT,
          "negative thread count");
  }

  /* Four sessions on four threads, concurrently. */
  pthread_t threads[4];
  int same[4];
  for (int t = 0; t < 4; ++t)
    pthread_create(&threads[t], NULL, run_on_thread, &same[t]);
  for (int t = 0; t < 4; ++t) {
    pthread_join(threads[t], NULL);
    CHECK(same[t], "thread %d matches one thread bit for bit", t);
  }

  /* Broken artifacts. */
  char path[4096];
  kiln_model *broken = NULL;
  CHECK(kiln_model_load("/nonexistent/model.so", &broken) == KILN_ERROR_LOAD, "missing file");
  snprintf(path, sizeof(path), "%s/not-a-library.so", scratch);
  write_file(path, "this is not an ELF file", 23);
  CHECK(kiln_model_load(path, &broken) == KILN_ERROR_LOAD, "random bytes");
  snprintf(path, sizeof(path), "%s/truncated.so", scratch);
  {
    FILE *f = fopen(argv[1], "rb");
    char buffer[4096];
    size_t got = f ? fread(buffer, 1, sizeof(buffer), f) : 0;
    if (f)
      fclose(f);
    write_file(path, buffer, got);
  }
  CHECK(kiln_model_load(path, &broken) == KILN_ERROR_LOAD, "truncated library");
  CHECK(kiln_model_load("libm.so.6", &broken) == KILN_ERROR_FORMAT, "a library that is not a model");
  kiln_model_v1 wrong = {0};
  wrong.magic = KILN_MODEL_MAGIC;
  wrong.abi_version = KILN_MODEL_ABI_VERSION + 1;
  CHECK(kiln_model_from_abi(&wrong, &broken) == KILN_ERROR_FORMAT, "another format version");
  CHECK(strstr(kiln_last_error(), "version") != NULL, "the message says version");
  wrong.magic = 0;
  CHECK(kiln_model_from_abi(&wrong, &broken) == KILN_ERROR_FORMAT, "bad magic");
  CHECK(kiln_model_load(NULL, &broken) == KILN_ERROR_INVALID_ARGUMENT, "null path");

  kiln_model_free(model);
  free(data);
  free(reference);

  /* A model without library calls: runs after the first allocate nothing
   * at all, process-wide. */
  kiln_model *mlp;
  CHECK(kiln_model_load(argv[2], &mlp) == KILN_OK, "loading %s", argv[2]);
  if (mlp) {
    kiln_tensor x = pattern_input(mlp);
    kiln_session *ms;
    CHECK(kiln_session_create(mlp, &ms) == KILN_OK, "mlp session");
    CHECK(kiln_session_run(ms, &x, 1) == KILN_OK, "first mlp run");
    long before_runs = heap_calls;
    int ok = 1;
    for (int r = 0; r < 100; ++r)
      ok &= kiln_session_run(ms, &x, 1) == KILN_OK;
    long during = heap_calls - before_runs;
    CHECK(ok, "100 mlp runs");
    if (COUNTS_HEAP)
      CHECK(during == 0, "100 mlp runs after the first make %ld heap allocations", during);
    kiln_session_free(ms);
    kiln_model_free(mlp);
    free(x.data);
  }

  /* Generated loop nests run on the session's threads: one and two threads
   * give the same bits, and once warm a run allocates nothing, threads
   * included. */
  kiln_model *generated;
  CHECK(kiln_model_load(argv[4], &generated) == KILN_OK, "loading %s", argv[4]);
  if (generated) {
    kiln_tensor x = pattern_input(generated);
    kiln_session *one, *two;
    kiln_session_options one_thread = {1, NULL}, two_threads = {2, NULL};
    kiln_tensor a, b;
    CHECK(kiln_session_create_with_options(generated, &one_thread, &one) == KILN_OK &&
              kiln_session_create_with_options(generated, &two_threads, &two) == KILN_OK,
          "sessions with 1 and 2 threads");
    CHECK(kiln_session_run(one, &x, 1) == KILN_OK && kiln_session_run(two, &x, 1) == KILN_OK,
          "generated model runs");
    long before_runs = heap_calls;
    CHECK(kiln_session_run(two, &x, 1) == KILN_OK, "second run on two threads");
    long during = heap_calls - before_runs;
    if (COUNTS_HEAP)
      CHECK(during == 0, "a warm run on two threads makes %ld heap allocations", during);
    size_t n = 1;
    if (kiln_session_output(one, 0, &a) == KILN_OK && kiln_session_output(two, 0, &b) == KILN_OK) {
      for (int d = 0; d < a.rank; ++d)
        n *= (size_t)a.dims[d];
      CHECK(memcmp(a.data, b.data, n * kiln_dtype_size(a.dtype)) == 0,
            "one and two threads give bit-identical outputs");
    } else {
      CHECK(0, "outputs of the generated model");
    }
    kiln_session_free(one);
    kiln_session_free(two);
    kiln_model_free(generated);
    free(x.data);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
