/*===- cuda_device_test.c - the runtime's CUDA device, on a stand-in driver -===*
 *
 * Runs a CUDA artifact (compiled at test time with --batch-buckets=1,2,4)
 * through the runtime's CUDA device with the driver stand-in
 * (cuda_stand_in.c) in place of libcuda, and checks what the device asks
 * of the driver: the first run of a bucket on the stream, the second
 * captured (nothing allocated or synchronised inside the capture), later
 * ones replayed without allocating or running the host code; a batch
 * between buckets padded and its outputs cut back; a failed capture falls
 * back to the stream, once, with a reason; the binary that fits the GPU
 * (cubin of its major version, else PTX); clear errors for a GPU too old
 * and for a missing driver when a session is created (the artifact itself
 * loads without them). The kernels are not run (no GPU): numbers are
 * checked on a GPU by test/gpu/run.sh. Mode `reads` runs a NonZero
 * (a size the model computes on the GPU, which the host reads back): its
 * runs are never captured nor padded, each waits for the read between
 * its kernels, and the stats say why. Mode `strings` runs string
 * operations, which the host runs on copies of their device buffers.
 *
 * usage: cuda-device-test MODE model.so stand-in.so [expected] [writes.so]
 *   MODE graphs | fallback | threads | binary (expected: cubin or ptx) | old-gpu | no-driver
 *        | reads (model: NonZero of a bool [batch, 2], buckets 1,2,4)
 *        | strings (model: Cast string -> float [3, 4]; expected: Cast float
 *          -> string [3, 4]; then, optional, string_writes_model.py's)
 *        | train (model: a training step, kiln compile --train; its inputs
 *          zeros, int64 target)
 *        | plans (model: convolutions and matmuls, batch buckets; the
 *          cuBLASLt and cuDNN stand-ins in KILN_CUBLASLT_LIBRARY /
 *          KILN_CUDNN_LIBRARY)
 * Mode `train`: a training step's parameters and optimiser state stay on
 * the GPU: the first step uploads them once, every step uploads only its
 * inputs and downloads only its loss (the driver's byte counts), the
 * updates are copied into them on the device (inside the replayed graph);
 * the second run is captured and later ones replay; reading a parameter by
 * name downloads it and the next step uploads it again; a checkpoint saves
 * and loads through the host; the inference entry runs on the same device
 * buffers.
 *
 *===----------------------------------------------------------------------===*/
#include "check.h"
#include "cuda_stand_in.h"
#include "kiln/kiln.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static const kiln_stand_in_counters *driver;

/* Runs `session` on a batch of `batch` [batch, 4, 5] inputs; checks the
 * output's dims. */
static int run_batch(kiln_session *session, int64_t batch) {
  static float data[16 * 4 * 5];
  for (size_t i = 0; i < sizeof data / sizeof *data; ++i)
    data[i] = (float)(i % 7);
  kiln_tensor in = {data, KILN_DTYPE_F32, 3, {batch, 4, 5}};
  kiln_status s = kiln_session_run(session, &in, 1);
  CHECK(s == KILN_OK, "run of batch %lld", (long long)batch);
  if (s != KILN_OK)
    return 0;
  kiln_tensor out;
  CHECK(kiln_session_output(session, 0, &out) == KILN_OK, "output");
  CHECK(out.rank == 3 && out.dims[0] == batch && out.dims[1] == 4 && out.dims[2] == 5,
        "output dims [%lld, %lld, %lld] for batch %lld", (long long)out.dims[0],
        (long long)out.dims[1], (long long)out.dims[2], (long long)batch);
  return 1;
}

static kiln_device_stats stats_of(kiln_session *session) {
  kiln_device_stats s;
  CHECK(kiln_session_device_stats(session, &s) == KILN_OK, "device stats");
  return s;
}

static void graphs(kiln_session *session) {
  /* Batch 3 runs in bucket 4: first on the stream. */
  run_batch(session, 3);
  kiln_device_stats s = stats_of(session);
  CHECK(s.stream_runs == 1 && s.graph_captures == 0, "first run on the stream (%llu, %llu)",
        (unsigned long long)s.stream_runs, (unsigned long long)s.graph_captures);
  CHECK(s.replay_host_ns == 0 && s.replay_staging_ns == 0,
        "no replay yet: no replay overhead counted");
  CHECK(s.bytes_to_device >= 3 * 4 * 5 * sizeof(float) && s.bytes_to_host == 3 * 4 * 5 * sizeof(float),
        "the bytes each way: the input (and constants) to the GPU, the output back (%llu, %llu)",
        (unsigned long long)s.bytes_to_device, (unsigned long long)s.bytes_to_host);
  unsigned long long kernels = driver->launches;
  CHECK(kernels > 0, "the first run launched its kernels");
  /* The second is captured, then launched. */
  run_batch(session, 3);
  s = stats_of(session);
  CHECK(s.graph_captures == 1 && driver->captures == 1, "second run captured");
  CHECK(driver->launches_in_capture == kernels,
        "the capture holds the run's %llu kernels (%llu)", kernels,
        driver->launches_in_capture);
  CHECK(driver->allocations_in_capture == 0, "no allocation inside the capture");
  CHECK(driver->synchronizations_in_capture == 0, "no synchronisation inside the capture");
  CHECK(driver->copies_in_capture == 2,
        "the capture holds the input's copy to the GPU and the output's back (%llu copies)",
        driver->copies_in_capture);
  CHECK(driver->graph_launches == 1, "the captured graph ran once");
  /* No convolution call: no cuDNN plan either way; a null argument is an
   * error, not a crash. */
  kiln_library_plan_stats plans;
  memset(&plans, 0xff, sizeof plans);
  CHECK(kiln_session_library_plan_stats(session, &plans) == KILN_OK &&
            plans.cudnn_graph_plans == 0 && plans.cudnn_api_plans == 0 &&
            plans.cudnn_fallback[0] == '\0',
        "no cuDNN plans for a model without convolutions");
  CHECK(kiln_session_library_plan_stats(session, NULL) == KILN_ERROR_INVALID_ARGUMENT,
        "library plan stats: a null argument is refused");
  /* Batch 4 (same bucket) replays: no allocation, no stream launch; each
   * is one graph launch and one synchronisation, the graph copying the
   * bucket's input (padded rows zeroed on the host) and output. */
  unsigned long long allocations = driver->allocations, launches = driver->launches;
  unsigned long long calls = driver->stream_calls, up = driver->bytes_to_device,
                     down = driver->bytes_to_host;
  for (int i = 0; i < 3; ++i)
    run_batch(session, i == 1 ? 4 : 3);
  CHECK(driver->stream_calls - calls == 6,
        "a replay calls the driver twice: the graph's launch and the wait (%llu calls for 3)",
        driver->stream_calls - calls);
  CHECK(driver->bytes_to_device - up == 3 * 320 && driver->bytes_to_host - down == 3 * 320,
        "the graph copies the bucket's input and output (%llu and %llu bytes for 3)",
        driver->bytes_to_device - up, driver->bytes_to_host - down);
  s = stats_of(session);
  CHECK(s.graph_replays == 3 && driver->graph_launches == 4, "three replays (%llu)",
        (unsigned long long)s.graph_replays);
  CHECK(s.replay_host_ns > 0 && s.replay_staging_ns <= s.replay_host_ns,
        "the replays' host time is counted, staging part of it (%llu ns, %llu ns)",
        (unsigned long long)s.replay_host_ns, (unsigned long long)s.replay_staging_ns);
  CHECK(driver->allocations == allocations, "replays allocate no device memory (%llu more)",
        driver->allocations - allocations);
  CHECK(driver->launches == launches, "replays launch nothing kernel by kernel");
  CHECK(driver->graph_nodes_launched == 4 * (kernels + 2),
        "each replay runs every kernel and the two copies");
  /* Other buckets: one capture each. */
  run_batch(session, 1);
  run_batch(session, 1);
  run_batch(session, 2);
  run_batch(session, 2);
  run_batch(session, 1);
  s = stats_of(session);
  CHECK(s.graph_captures == 3 && driver->captures == 3, "one capture a bucket (%llu)",
        (unsigned long long)s.graph_captures);
  CHECK(driver->allocations_in_capture == 0 && driver->synchronizations_in_capture == 0,
        "nothing illegal in any capture");
  CHECK(s.fallback[0] == '\0', "no fallback (%s)", s.fallback);
  CHECK(driver->bad_launches == 0, "every launch valid");
  CHECK(driver->module_format == 1, "the sm_90 cubin was loaded on an sm_90 GPU");
  /* Inputs written into the session's pinned buffer
   * (kiln_session_input_buffer) go to the GPU as they are: replays stage
   * nothing. A run that claims more than the buffer holds is refused. */
  int64_t one[3] = {1, 4, 5}, four[3] = {4, 4, 5};
  kiln_tensor buffer;
  CHECK(kiln_session_input_buffer(session, 0, one, &buffer) == KILN_OK && buffer.data,
        "a pinned input buffer: %s", kiln_last_error());
  buffer.dims[0] = 2;
  CHECK(kiln_session_run(session, &buffer, 1) == KILN_ERROR_SHAPE &&
            strstr(kiln_last_error(), "larger than the buffer") != NULL,
        "a run that claims more than the buffer holds is refused: %s", kiln_last_error());
  CHECK(kiln_session_input_buffer(session, 0, four, &buffer) == KILN_OK && buffer.data,
        "a larger one: %s", kiln_last_error());
  memset(buffer.data, 0, 4 * 4 * 5 * sizeof(float));
  s = stats_of(session);
  unsigned long long to_device = driver->bytes_to_device;
  for (int i = 0; i < 3; ++i) {
    kiln_status r = kiln_session_run(session, &buffer, 1);
    CHECK(r == KILN_OK, "a run from the input buffer: %s", r == KILN_OK ? "ok" : kiln_last_error());
  }
  kiln_device_stats after = stats_of(session);
  CHECK(after.graph_replays == s.graph_replays + 3 &&
            after.replay_staging_ns == s.replay_staging_ns,
        "three replays from it, none staging its input (%llu ns more)",
        (unsigned long long)(after.replay_staging_ns - s.replay_staging_ns));
  CHECK(driver->bytes_to_device - to_device == 3 * sizeof(float) * 4 * 4 * 5,
        "each copied to the GPU once (%llu bytes)", driver->bytes_to_device - to_device);
}

/* Another session's first run, on another thread, while this thread
 * captures: captures are thread-local, so neither disturbs the other. */
static kiln_session *other_session;
static int other_ok;
static void *run_other(void *unused) {
  (void)unused;
  other_ok = run_batch(other_session, 1);
  return NULL;
}
static void run_other_during_capture(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, run_other, NULL) == 0)
    pthread_join(thread, NULL);
}

static void threads(kiln_session *session, kiln_model *model, void *library) {
  kiln_stand_in_set_capture_hook_fn set_hook =
      (kiln_stand_in_set_capture_hook_fn)dlsym(library, "kiln_stand_in_set_capture_hook");
  CHECK(set_hook != NULL, "the stand-in takes a capture hook");
  CHECK(kiln_session_create(model, &other_session) == KILN_OK, "a second session");
  if (!set_hook || !other_session)
    return;
  run_batch(session, 2); /* on the stream */
  set_hook(run_other_during_capture);
  run_batch(session, 2); /* captured, while the other session runs */
  kiln_device_stats s = stats_of(session);
  CHECK(other_ok, "the other thread's session ran during the capture");
  CHECK(s.graph_captures == 1 && s.fallback[0] == '\0',
        "the capture stands although another thread allocated meanwhile ('%s')", s.fallback);
  run_batch(session, 2);
  CHECK(stats_of(session).graph_replays == 1, "then replays");
  kiln_session_free(other_session);
}

static void fallback(kiln_session *session) {
  for (int i = 0; i < 4; ++i)
    run_batch(session, 2);
  kiln_device_stats s = stats_of(session);
  CHECK(s.graph_captures == 0 && driver->captures == 1, "one capture tried (%llu)",
        driver->captures);
  CHECK(s.stream_runs == 4 && s.graph_replays == 0, "every run on the stream (%llu)",
        (unsigned long long)s.stream_runs);
  CHECK(strstr(s.fallback, "capture of batch 2 failed") != NULL, "fallback says why: '%s'",
        s.fallback);
}

/* NonZero of a bool [batch, 2]: the count of nonzeros sizes the output
 * [2, count], read by the host between the kernels. The stand-in runs no
 * kernel, so the count is the untouched (zeroed) device memory's: 0. */
static void reads(kiln_session *session) {
  static uint8_t data[16 * 2];
  for (size_t i = 0; i < sizeof data; ++i)
    data[i] = (uint8_t)(i % 3 != 0);
  for (int run = 0; run < 4; ++run) {
    unsigned long long synchronizations = driver->synchronizations;
    int64_t batch = run < 2 ? 3 : 1;
    kiln_tensor in = {data, KILN_DTYPE_BOOL, 2, {batch, 2}};
    kiln_status status = kiln_session_run(session, &in, 1);
    CHECK(status == KILN_OK, "run %d: %s", run, status == KILN_OK ? "" : kiln_last_error());
    kiln_tensor out;
    CHECK(status == KILN_OK && kiln_session_output(session, 0, &out) == KILN_OK &&
              out.rank == 2 && out.dims[0] == 2 && out.dims[1] == 0,
          "run %d: the output sized by the count read back ([2, 0])", run);
    /* The read (1) and the end of the run (1). */
    CHECK(driver->synchronizations - synchronizations >= 2,
          "run %d waits for the value it reads (%llu synchronisations)", run,
          driver->synchronizations - synchronizations);
  }
  kiln_device_stats s = stats_of(session);
  CHECK(s.stream_runs == 4 && s.graph_captures == 0 && driver->captures == 0,
        "every run on the stream, none captured (%llu, %llu)",
        (unsigned long long)s.stream_runs, driver->captures);
  CHECK(driver->synchronizations_in_capture == 0 && driver->bad_launches == 0,
        "nothing illegal, every launch valid");
  CHECK(strstr(s.fallback, "reads values the model computes on the GPU") != NULL,
        "the stats say why: '%s'", s.fallback);
}

/* A caller's allocator that counts, and remembers its last block. */
static long string_allocations, string_releases;
static char *last_block;
static size_t last_block_bytes;
static void *count_allocate(void *context, size_t bytes, size_t alignment) {
  (void)context;
  ++string_allocations;
  last_block = aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  last_block_bytes = bytes;
  return last_block;
}
static void count_release(void *context, void *p) {
  (void)context;
  ++string_releases;
  free(p);
}

/* String operations, which the host runs on copies of their device
 * buffers: the model a Cast from string (the strings' handles go to the
 * GPU as the input, the host reads them back, parses them and writes the
 * floats to the GPU), `format_path` a Cast to string (the floats read
 * back, the strings made in the session's host storage, their handles
 * written to the GPU and fetched as the output). Both [3, 4]; no kernel of
 * theirs computes what is checked, so the stand-in's numbers are real. */
static void string_writes(const char *path);

static void strings(kiln_session *session, const char *format_path, const char *writes_path) {
  static const char *text[12] = {"1.5", "-2", "abc", "1e3", "0.25", " 7",
                                 "-0",  "inf", "",   "3.75", "1e-3", "42"};
  unsigned long long waits[3] = {0, 0, 0};
  for (int run = 0; run < 3; ++run) {
    unsigned long long synchronizations = driver->synchronizations;
    const char *in_text[12];
    for (int i = 0; i < 12; ++i)
      in_text[i] = text[(i + 5 * run) % 12];
    kiln_tensor in = {(void *)in_text, KILN_DTYPE_STRING, 2, {3, 4}};
    kiln_status status = kiln_session_run(session, &in, 1);
    CHECK(status == KILN_OK, "parse run %d: %s", run, status == KILN_OK ? "" : kiln_last_error());
    kiln_tensor out;
    int same = status == KILN_OK && kiln_session_output(session, 0, &out) == KILN_OK &&
               out.dtype == KILN_DTYPE_F32 && out.rank == 2 && out.dims[0] == 3 &&
               out.dims[1] == 4;
    for (int i = 0; same && i < 12; ++i) {
      char *end;
      float want = strtof(in_text[i], &end);
      float got = ((const float *)out.data)[i];
      if (end == in_text[i])
        same = got != got; /* no number: NaN */
      else
        same = memcmp(&got, &want, sizeof got) == 0;
    }
    CHECK(same, "parse run %d: the floats the host wrote to the GPU", run);
    /* The strings read back (1), the run's end (1), and in the first run
     * the floats written (1): the session's pinned memory for writes is
     * sized by it, and later runs' writes are enqueued without waiting. */
    waits[run] = driver->synchronizations - synchronizations;
    CHECK(waits[run] >= 2, "parse run %d waits for its read and its end (%llu synchronisations)",
          run, waits[run]);
  }
  CHECK(waits[1] == waits[0] - 1 && waits[2] == waits[1],
        "after the first run, the write of the floats does not wait (%llu, %llu, %llu)",
        waits[0], waits[1], waits[2]);
  kiln_device_stats s = stats_of(session);
  CHECK(s.stream_runs == 3 && s.graph_captures == 0 && driver->captures == 0,
        "every run on the stream, none captured (%llu, %llu)",
        (unsigned long long)s.stream_runs, driver->captures);
  CHECK(strstr(s.fallback, "string operations, run on the host") != NULL,
        "the stats say why: '%s'", s.fallback);

  kiln_model *format = NULL;
  kiln_session *formatting = NULL;
  /* The strings a run makes are host memory: from the caller's allocator
   * where the session has one (its pool is device memory). */
  kiln_allocator allocator = {count_allocate, count_release, NULL};
  kiln_session_options options = {0, &allocator};
  CHECK(kiln_model_load(format_path, &format) == KILN_OK &&
            kiln_session_create_with_options(format, &options, &formatting) == KILN_OK,
        "the Cast to string loads: %s", kiln_last_error());
  if (!formatting) {
    kiln_model_free(format);
    return;
  }
  static const float values[12] = {1.5f, -2.0f, 0.1f, 1e20f, -3.25e-7f, 0.0f,
                                   7.0f, 100.0f, 0.5f, 65504.0f, -1.0f, 2.75f};
  for (int run = 0; run < 2; ++run) {
    float in_values[12];
    for (int i = 0; i < 12; ++i)
      in_values[i] = values[(i + 7 * run) % 12];
    kiln_tensor in = {in_values, KILN_DTYPE_F32, 2, {3, 4}};
    kiln_status status = kiln_session_run(formatting, &in, 1);
    CHECK(status == KILN_OK, "format run %d: %s", run,
          status == KILN_OK ? "" : kiln_last_error());
    kiln_tensor out;
    int same = status == KILN_OK && kiln_session_output(formatting, 0, &out) == KILN_OK &&
               out.dtype == KILN_DTYPE_STRING && out.rank == 2;
    /* Each string reads back to its float (the digits are the conformance
     * suite's to check). */
    for (int i = 0; same && i < 12; ++i) {
      const char *got = ((const char *const *)out.data)[i];
      same = got && strtof(got, NULL) == in_values[i];
    }
    CHECK(same, "format run %d: strings made on the host, their handles through the GPU", run);
    if (same && run == 0)
      CHECK(strcmp(((const char *const *)out.data)[0], "1.5") == 0, "1.5 is '1.5'");
    const char *first = same ? ((const char *const *)out.data)[0] : NULL;
    CHECK(first && last_block && first >= last_block && first < last_block + last_block_bytes,
          "format run %d: its strings are in the caller's allocator's memory (%ld blocks)", run,
          string_allocations);
  }
  kiln_session_free(formatting);
  CHECK(string_allocations > 0 && string_releases == string_allocations,
        "the session gave back every block (%ld of %ld)", string_releases, string_allocations);
  kiln_model_free(format);
  if (writes_path)
    string_writes(writes_path);
}

/* Two string results written to the GPU one after the other, no read
 * between (string_writes_model.py: y1 = Cast(c1), y2 = Cast(c2)): each
 * staged in its own pinned memory, since the stand-in, like a GPU, copies
 * from pinned memory after the call returns. */
static void string_writes(const char *path) {
  static const float c1[3] = {1.5f, 2.25f, -3.0f}, c2[3] = {10.0f, 20.5f, 0.125f};
  kiln_model *model = NULL;
  kiln_session *session = NULL;
  CHECK(kiln_model_load(path, &model) == KILN_OK &&
            kiln_session_create(model, &session) == KILN_OK,
        "the two Casts to string load: %s", kiln_last_error());
  if (!session) {
    kiln_model_free(model);
    return;
  }
  unsigned long long deferred = driver->copies_deferred;
  for (int run = 0; run < 3; ++run) {
    float x[3] = {1, 2, 3};
    kiln_tensor in = {x, KILN_DTYPE_F32, 1, {3}}, y1, y2;
    int same = kiln_session_run(session, &in, 1) == KILN_OK &&
               kiln_session_output(session, 0, &y1) == KILN_OK &&
               kiln_session_output(session, 1, &y2) == KILN_OK;
    for (int i = 0; same && i < 3; ++i) {
      const char *a = ((const char *const *)y1.data)[i], *b = ((const char *const *)y2.data)[i];
      same = a && b && strtof(a, NULL) == c1[i] && strtof(b, NULL) == c2[i];
    }
    CHECK(same, "writes run %d: both results whole (%s)", run,
          same ? "" : kiln_last_error());
  }
  CHECK(driver->copies_deferred > deferred,
        "copies from pinned memory were asynchronous (%llu)", driver->copies_deferred - deferred);
  kiln_session_free(session);
  kiln_model_free(model);
}

/* Zero inputs for `model`'s non-parameter inputs (dynamic dims 4), in
 * `storage`; returns how many (at most `capacity`: more is a failure). */
/* Zero inputs of `model` (its parameters left out), `batch` for each
 * dynamic dim. */
static size_t zero_inputs(const kiln_model *model, kiln_tensor *in, void **storage,
                          size_t capacity, int64_t batch) {
  size_t n = 0;
  for (uint32_t i = 0; i < kiln_model_num_inputs(model); ++i) {
    if (kiln_model_input_is_parameter(model, i))
      continue;
    if (n == capacity) {
      CHECK(0, "at most %zu inputs", capacity);
      break;
    }
    const kiln_model_tensor *t = kiln_model_input(model, i);
    kiln_tensor *x = &in[n];
    memset(x, 0, sizeof *x);
    x->dtype = t->dtype;
    x->rank = t->rank;
    size_t count = 1;
    for (int32_t d = 0; d < t->rank; ++d) {
      x->dims[d] = t->dims[d] < 0 ? batch : t->dims[d];
      count *= (size_t)x->dims[d];
    }
    storage[n] = calloc(count ? count : 1, kiln_dtype_size(t->dtype));
    x->data = storage[n];
    ++n;
  }
  return n;
}

/* Elements of `t`. */
static size_t elements_of(const kiln_tensor *t) {
  size_t n = 1;
  for (int32_t d = 0; d < t->rank; ++d)
    n *= (size_t)t->dims[d];
  return n;
}

/* Bytes of a tensor of `model` with dims `dims`. */
static size_t bytes_of(const kiln_model_tensor *t, const int64_t *dims) {
  size_t bytes = kiln_dtype_size(t->dtype);
  for (int32_t d = 0; d < t->rank; ++d)
    bytes *= (size_t)dims[d];
  return bytes;
}

/* What the driver copied across PCIe and on the device since `*since`
 * (updated to now). */
typedef struct traffic {
  unsigned long long to_device, to_host, on_device;
} traffic;
static traffic traffic_since(traffic *since) {
  traffic now = {driver->bytes_to_device, driver->bytes_to_host, driver->bytes_device_to_device};
  traffic d = {now.to_device - since->to_device, now.to_host - since->to_host,
               now.on_device - since->on_device};
  *since = now;
  return d;
}

/* Mode `plans` (a model with convolutions and matmuls and batch buckets,
 * on the cuBLASLt and cuDNN stand-ins): every library call's plan is made
 * when the session is created, one for each bucket; runs of each bucket,
 * and of a batch padded into one, make none. */
static void plans(kiln_session *session, kiln_model *model, const char *model_path) {
  void *library = dlopen(model_path, RTLD_NOW | RTLD_NOLOAD);
  const kiln_model_v1 *abi = library ? dlsym(library, "kiln_model_descriptor") : NULL;
  const char *blas_path = getenv("KILN_CUBLASLT_LIBRARY");
  void *blas = blas_path ? dlopen(blas_path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  unsigned long long (*heuristics)(void) =
      blas ? (unsigned long long (*)(void))dlsym(blas, "kiln_cublaslt_stand_in_heuristics")
           : NULL;
  CHECK(abi && abi->num_batch_buckets > 1 && heuristics,
        "a model with batch buckets, on the cuBLASLt stand-in");
  if (!abi || abi->num_batch_buckets < 2 || !heuristics)
    return;
  uint64_t convs = 0, matmuls = 0;
  for (uint32_t i = 0; i < abi->num_library_calls; ++i) {
    convs += abi->library_calls[i].kind == KILN_LIBRARY_CONV;
    matmuls += abi->library_calls[i].kind == KILN_LIBRARY_MATMUL;
  }
  uint32_t buckets = abi->num_batch_buckets;
  kiln_library_plan_stats made;
  CHECK(kiln_session_library_plan_stats(session, &made) == KILN_OK, "plan stats");
  unsigned long long queried = heuristics();
  CHECK(made.cudnn_graph_plans + made.cudnn_api_plans == convs * buckets,
        "a cuDNN plan for each of %llu convolutions at each of %u buckets when the session is "
        "created (%llu)",
        (unsigned long long)convs, buckets,
        (unsigned long long)(made.cudnn_graph_plans + made.cudnn_api_plans));
  CHECK(convs > 0 && matmuls > 0 && queried == matmuls * buckets,
        "a cuBLASLt plan for each of %llu matmuls at each of %u buckets when the session is "
        "created (%llu heuristic queries)",
        (unsigned long long)matmuls, buckets, queried);
  for (uint32_t b = 0; b <= buckets; ++b) {
    /* Each bucket, then a batch between the first two (padded). */
    int64_t batch = b < buckets ? (int64_t)abi->batch_buckets[b] : (int64_t)abi->batch_buckets[0] + 1;
    kiln_tensor in[8];
    void *storage[8] = {0};
    size_t n = zero_inputs(model, in, storage, 8, batch);
    CHECK(kiln_session_run(session, in, n) == KILN_OK, "a run of batch %lld", (long long)batch);
    for (size_t k = 0; k < n; ++k)
      free(storage[k]);
  }
  kiln_library_plan_stats after;
  CHECK(kiln_session_library_plan_stats(session, &after) == KILN_OK, "plan stats");
  CHECK(after.cudnn_graph_plans == made.cudnn_graph_plans &&
            after.cudnn_api_plans == made.cudnn_api_plans && heuristics() == queried,
        "runs of every bucket and of a padded batch make no plan (cuDNN %llu + %llu, cuBLASLt "
        "%llu queries)",
        (unsigned long long)after.cudnn_graph_plans, (unsigned long long)after.cudnn_api_plans,
        heuristics());
}

static void train(kiln_session *session, kiln_model *model) {
  kiln_tensor in[8];
  void *storage[8] = {0};
  size_t n = zero_inputs(model, in, storage, 8, 4);
  size_t input_bytes = 0, state_bytes = 0, update_bytes = 0;
  for (size_t k = 0; k < n; ++k)
    input_bytes += kiln_dtype_size(in[k].dtype) * elements_of(&in[k]);
  const kiln_model_tensor *first = NULL;
  for (uint32_t i = 0; i < kiln_model_num_inputs(model); ++i)
    if (kiln_model_input_is_parameter(model, i)) {
      const kiln_model_tensor *t = kiln_model_input(model, i);
      state_bytes += bytes_of(t, t->dims);
      if (!first)
        first = t;
    }
  for (uint32_t i = 0; i < kiln_model_num_outputs(model); ++i)
    if (kiln_model_output_updates_parameter(model, i)) {
      const kiln_model_tensor *t = kiln_model_output(model, i);
      update_bytes += bytes_of(t, t->dims);
    }
  CHECK(first != NULL && update_bytes > 0, "the step has parameters and updates them");
  kiln_tensor parameter;
  int have = first && kiln_session_parameter(session, first->name, &parameter) == KILN_OK;
  CHECK(have, "parameter '%s' readable", first ? first->name : "?");
  size_t bytes = have ? bytes_of(first, first->dims) : 0;
  /* A marker written before the first step: that step starts from it
   * (uploaded), and its update (the stand-in runs no kernel: whatever the
   * update's device buffer held) replaces it on the device. */
  if (have)
    memset(parameter.data, 0x7f, bytes);
  traffic seen = {driver->bytes_to_device, driver->bytes_to_host, driver->bytes_device_to_device};
  unsigned long long allocations = 0;
  size_t result_bytes = 0; /* the outputs that are not updates (the loss) */
  for (int run = 0; run < 4; ++run) {
    kiln_status s = kiln_session_run(session, in, n);
    CHECK(s == KILN_OK, "step %d: %s", run, s == KILN_OK ? "ok" : kiln_last_error());
    if (s != KILN_OK)
      break;
    if (run == 0) {
      for (uint32_t i = 0; i < kiln_model_num_outputs(model); ++i) {
        kiln_tensor out;
        if (!kiln_model_output_updates_parameter(model, i) &&
            kiln_session_output(session, i, &out) == KILN_OK)
          result_bytes += bytes_of(kiln_model_output(model, i), out.dims);
      }
    }
    traffic t = traffic_since(&seen);
    if (run == 0)
      CHECK(t.to_device >= state_bytes + input_bytes,
            "the first step uploads the parameters and optimiser state (%llu bytes: %zu, %zu of "
            "inputs, the rest constants)",
            t.to_device, state_bytes, input_bytes);
    else
      CHECK(t.to_device == input_bytes,
            "step %d uploads only its inputs (%llu bytes, expected %zu): the parameters stay on "
            "the GPU",
            run, t.to_device, input_bytes);
    CHECK(t.to_host == result_bytes,
          "step %d downloads only its results (%llu bytes, expected %zu): updates stay on the GPU",
          run, t.to_host, result_bytes);
    CHECK(t.on_device == update_bytes,
          "step %d copies its updates into the parameters on the GPU (%llu bytes, expected %zu%s)",
          run, t.on_device, update_bytes, run >= 2 ? ", inside the replayed graph" : "");
    if (run == 2)
      allocations = driver->allocations;
  }
  kiln_device_stats s = stats_of(session);
  CHECK(s.stream_runs == 1 && s.graph_captures == 1 && s.graph_replays == 2,
        "first step on the stream, the second captured, then replays (%llu, %llu, %llu)",
        (unsigned long long)s.stream_runs, (unsigned long long)s.graph_captures,
        (unsigned long long)s.graph_replays);
  CHECK(driver->allocations == allocations, "a replayed step allocates no device memory");
  CHECK(driver->allocations_in_capture == 0 && driver->synchronizations_in_capture == 0 &&
            driver->bad_launches == 0,
        "nothing illegal in the capture, every launch valid");
  CHECK(s.bytes_to_device == driver->bytes_to_device && s.bytes_to_host == driver->bytes_to_host,
        "the session's stats count the bytes the driver copied (%llu to the GPU, %llu back)",
        (unsigned long long)s.bytes_to_device, (unsigned long long)s.bytes_to_host);
  if (have) {
    unsigned char marker[4];
    memset(marker, 0x7f, sizeof marker);
    CHECK(bytes >= 4 && memcmp(parameter.data, marker, 4) == 0,
          "runs leave the host copy alone (it is refreshed when read by name)");
    kiln_tensor again;
    CHECK(kiln_session_parameter(session, first->name, &again) == KILN_OK &&
              again.data == parameter.data,
          "the parameter's host buffer stays where it was");
    traffic t = traffic_since(&seen);
    CHECK(t.to_host == bytes && t.to_device == 0,
          "reading it by name downloads it alone (%llu bytes, expected %zu)", t.to_host, bytes);
    CHECK(memcmp(parameter.data, marker, 4) != 0,
          "the step's update replaced the parameter (read back from the GPU)");
    /* What the caller writes now is what the next step starts from: that
     * tensor alone is uploaded. */
    kiln_status r = kiln_session_run(session, in, n);
    t = traffic_since(&seen);
    CHECK(r == KILN_OK && t.to_device == input_bytes + bytes,
          "after a read by name the next step uploads that parameter again (%llu bytes, "
          "expected %zu + %zu)",
          t.to_device, input_bytes, bytes);
    /* A parameter's update output reads the parameter's current value. */
    for (uint32_t i = 0; i < kiln_model_num_outputs(model); ++i) {
      kiln_tensor out;
      if (kiln_model_output_updates_parameter(model, i)) {
        CHECK(kiln_session_output(session, i, &out) == KILN_OK && out.data != NULL,
              "an update output (%s) is readable: %s", kiln_model_output(model, i)->name,
              kiln_last_error());
        break;
      }
    }
    /* A checkpoint brings every tensor to the host; loading one makes the
     * next step upload them all. */
    const char *path = "cuda-device-train.ckpt";
    CHECK(kiln_session_save_state(session, path) == KILN_OK, "save_state: %s",
          kiln_last_error());
    t = traffic_since(&seen);
    CHECK(t.to_host > 0 && t.to_host <= state_bytes,
          "saving downloads what the host lacked (%llu of %zu bytes)", t.to_host, state_bytes);
    CHECK(kiln_session_load_state(session, path) == KILN_OK, "load_state: %s",
          kiln_last_error());
    r = kiln_session_run(session, in, n);
    t = traffic_since(&seen);
    CHECK(r == KILN_OK && t.to_device == input_bytes + state_bytes,
          "after loading a checkpoint the next step uploads every tensor (%llu bytes, expected "
          "%zu + %zu)",
          t.to_device, input_bytes, state_bytes);
    remove(path);
  }
  /* The inference entry on the training session's parameters, which it
   * reads where they are on the GPU. */
  kiln_model *entry = kiln_model_inference(model);
  CHECK(entry != NULL, "the artifact has an inference entry");
  kiln_session *infer = NULL;
  if (entry && kiln_session_create_inference(session, NULL, &infer) == KILN_OK) {
    kiln_tensor x[8];
    void *xs[8] = {0};
    size_t m = zero_inputs(entry, x, xs, 8, 4);
    size_t x_bytes = 0;
    for (size_t k = 0; k < m; ++k)
      x_bytes += kiln_dtype_size(x[k].dtype) * elements_of(&x[k]);
    traffic_since(&seen);
    kiln_status r = kiln_session_run(infer, x, m);
    CHECK(r == KILN_OK, "the inference entry runs on the GPU: %s",
          r == KILN_OK ? "ok" : kiln_last_error());
    traffic t = traffic_since(&seen);
    CHECK(t.to_device == x_bytes,
          "it uploads only its input (%llu bytes, expected %zu): the parameters are the "
          "training session's on the GPU",
          t.to_device, x_bytes);
    kiln_tensor out;
    CHECK(r == KILN_OK && kiln_session_output(infer, 0, &out) == KILN_OK && out.rank == 2 &&
              out.dims[0] == 4,
          "its logits [4, classes]");
    for (size_t k = 0; k < m; ++k)
      free(xs[k]);
    kiln_session_free(infer);
  } else {
    CHECK(0, "an inference session: %s", kiln_last_error());
  }
  for (size_t k = 0; k < n; ++k)
    free(storage[k]);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: cuda-device-test MODE model.so stand-in.so [expected]\n");
    return 2;
  }
  const char *mode = argv[1], *model_path = argv[2], *stand_in = argv[3];
  setenv("KILN_CUDA_DRIVER", strcmp(mode, "no-driver") == 0 ? "/nonexistent/libcuda.so.1"
                                                              : stand_in,
         1);
  kiln_model *model = NULL;
  kiln_status loaded = kiln_model_load(model_path, &model);
  if (strcmp(mode, "no-driver") == 0 || strcmp(mode, "old-gpu") == 0) {
    /* Loading needs no GPU (kiln inspect); a session does. */
    CHECK(loaded == KILN_OK, "the artifact loads without a usable GPU");
    kiln_session *session = NULL;
    kiln_status created = model ? kiln_session_create(model, &session) : KILN_ERROR_LOAD;
    if (strcmp(mode, "no-driver") == 0)
      CHECK(created != KILN_OK && strstr(kiln_last_error(), "/nonexistent/libcuda.so.1"),
            "a missing driver is named");
    else
      CHECK(created != KILN_OK && strstr(kiln_last_error(), "compiled for sm_80") &&
                strstr(kiln_last_error(), "this GPU is sm_75"),
            "an older GPU is refused, naming both");
    kiln_session_free(session);
    kiln_model_free(model);
  } else {
    CHECK(loaded == KILN_OK, "load");
    kiln_session *session = NULL;
    kiln_status created = model ? kiln_session_create(model, &session) : KILN_ERROR_LOAD;
    /* The session loaded the driver: the stand-in, whose counters these are. */
    void *library = dlopen(stand_in, RTLD_NOW | RTLD_NOLOAD);
    kiln_stand_in_counters_fn counters =
        library ? (kiln_stand_in_counters_fn)dlsym(library, "kiln_stand_in_get_counters") : NULL;
    CHECK(counters != NULL, "the stand-in is the driver");
    if (created == KILN_OK && counters) {
      driver = counters();
      if (strcmp(mode, "graphs") == 0)
        graphs(session);
      else if (strcmp(mode, "fallback") == 0)
        fallback(session);
      else if (strcmp(mode, "threads") == 0)
        threads(session, model, library);
      else if (strcmp(mode, "reads") == 0)
        reads(session);
      else if (strcmp(mode, "strings") == 0 && argc > 4)
        strings(session, argv[4], argc > 5 ? argv[5] : NULL);
      else if (strcmp(mode, "train") == 0)
        train(session, model);
      else if (strcmp(mode, "plans") == 0)
        plans(session, model, model_path);
      else if (strcmp(mode, "binary") == 0) {
        run_batch(session, 1);
        int want = argc > 4 && strcmp(argv[4], "ptx") == 0 ? 2 : 1;
        CHECK(driver->module_format == want, "loaded %s",
              want == 2 ? "the PTX" : "a cubin");
      }
      kiln_session_free(session);
    } else {
      CHECK(0, "session");
    }
    kiln_model_free(model);
  }
  printf("cuda-device-test %s: %d passed, %d failed\n", mode, passed, failed);
  return failed ? 1 : 0;
}
