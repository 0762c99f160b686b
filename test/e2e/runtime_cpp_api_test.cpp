// runtime_cpp_api_test MLP_MODEL.so
// A C++ program that uses only kiln.hpp: loads a compiled model, runs it,
// compares with the C API on the same input, binds a caller-owned output
// buffer, and checks that each kind of failure throws kiln::Error with its
// status. Prints "N passed, N failed".
#include "kiln/kiln.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

static int passed, failed;

#define CHECK(cond, what)                                                      \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, what);              \
    }                                                                          \
  } while (0)

/// Runs `body` and reports whether it threw kiln::Error with `status`.
template <typename F> static bool throwsStatus(F body, kiln_status status) {
  try {
    body();
  } catch (const kiln::Error &error) {
    std::printf("  expected error: %s\n", error.what());
    return error.status() == status;
  }
  return false;
}

static size_t countOf(const std::vector<int64_t> &dims) {
  size_t n = 1;
  for (int64_t d : dims)
    n *= static_cast<size_t>(d);
  return n;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MLP_MODEL.so\n", argv[0]);
    return 2;
  }
  const char *path = argv[1];
  try {
    kiln::Model model = kiln::Model::load(path);
    CHECK(model.numInputs() == 1 && model.numOutputs() == 1, "one input, one output");
    kiln::TensorInfo in = model.input(0), out = model.output(0);
    CHECK(in.dtype == KILN_DTYPE_F32 && !in.name.empty(), "input metadata");
    CHECK(model.contentHash().size() == 64, "a SHA-256 content hash");
    CHECK(model.device() == "cpu", "runs on the CPU device");
    CHECK(model.target().rfind("x86_64", 0) == 0, "a target triple and processor");
    // mlp.so is compiled without --max-batch: any batch, nothing planned for it.
    CHECK(model.maxBatch() == 0, "no batch limit without --max-batch");

    std::vector<int64_t> inDims = in.dims, outDims = out.dims;
    for (int64_t &d : inDims)
      d = d < 0 ? 1 : d;
    for (int64_t &d : outDims)
      d = d < 0 ? 1 : d;
    std::vector<float> x(countOf(inDims));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;

    // The same run through the C API, as the reference, on one thread too:
    // oneDNN's matmuls (mlp.so's) may sum in another order on another
    // thread count (they do on AVX2-only processors; generated code does
    // not, ctest runtime-c-api).
    kiln_model *cModel = nullptr;
    kiln_session *cSession = nullptr;
    kiln_tensor cIn = kiln::tensor(x.data(), inDims), cOut;
    kiln_session_options oneThread;
    std::memset(&oneThread, 0, sizeof oneThread);
    oneThread.num_threads = 1;
    bool cOk = kiln_model_load(path, &cModel) == KILN_OK &&
               kiln_session_create_with_options(cModel, &oneThread, &cSession) == KILN_OK &&
               kiln_session_run(cSession, &cIn, 1) == KILN_OK &&
               kiln_session_output(cSession, 0, &cOut) == KILN_OK;
    CHECK(cOk, "the C API runs the model");
    std::vector<float> reference(countOf(outDims));
    if (cOk)
      std::memcpy(reference.data(), cOut.data, reference.size() * sizeof(float));
    kiln_session_free(cSession);
    kiln_model_free(cModel);

    kiln::Session session(model, kiln::SessionOptions{1, nullptr});
    session.run({kiln::tensor(x.data(), inDims)});
    kiln_tensor y = session.output(0);
    CHECK(y.rank == static_cast<int32_t>(outDims.size()), "output rank");
    CHECK(std::memcmp(y.data, reference.data(), reference.size() * sizeof(float)) == 0,
          "one thread gives the C API's output bit for bit");

    // A caller-owned output buffer.
    std::vector<float> bound(reference.size(), -1.0f);
    session.bindOutput(0, kiln::tensor(bound.data(), outDims));
    session.run({kiln::tensor(x.data(), inDims)});
    CHECK(std::memcmp(bound.data(), reference.data(), bound.size() * sizeof(float)) == 0,
          "the bound buffer receives the output");
    session.unbindOutput(0);
    std::fill(bound.begin(), bound.end(), -1.0f);
    session.run({kiln::tensor(x.data(), inDims)});
    CHECK(bound[0] == -1.0f, "an unbound buffer is left alone");

    // An input written into the session's own buffer; on the CPU the
    // device stats stay zero.
    kiln_tensor buffer = session.inputBuffer(0, inDims);
    std::memcpy(buffer.data, x.data(), x.size() * sizeof(float));
    session.run({buffer});
    CHECK(std::memcmp(session.output(0).data, reference.data(),
                      reference.size() * sizeof(float)) == 0,
          "a run from the session's input buffer gives the same bits");
    CHECK(throwsStatus([&] { session.inputBuffer(7, inDims); }, KILN_ERROR_INVALID_ARGUMENT),
          "an input buffer out of range throws");
    kiln_device_stats device = session.deviceStats();
    CHECK(device.graph_replays == 0 && device.bytes_to_device == 0,
          "a CPU session's device stats are zero");
    // What ran each library call: a kernel and oneDNN's implementation.
    std::vector<kiln_library_call_info> calls = session.libraryCalls();
    bool named = !calls.empty();
    for (const kiln_library_call_info &call : calls)
      named &= call.kernel != KILN_KERNEL_END && std::strchr(call.implementation, ':') != nullptr;
    CHECK(named, "each library call ran in a kernel by a named implementation");
    // The thread policy: a 1-thread session never changes its count.
    session.setAdaptiveThreads(true);
    session.run({buffer});
    kiln_thread_stats threads = session.threadStats();
    CHECK(threads.threads == 1 && !threads.adaptive && threads.reduced_runs == 0,
          "a 1-thread session's thread stats: 1 thread, no policy");

    // Errors throw kiln::Error with their status.
    CHECK(throwsStatus([] { kiln::Model::load("/nonexistent/model.so"); }, KILN_ERROR_LOAD),
          "a missing file is KILN_ERROR_LOAD");
    CHECK(throwsStatus([&] { kiln::Model::loadVerified(path, std::string(64, '0')); },
                       KILN_ERROR_VERIFY),
          "a file with another SHA-256 is KILN_ERROR_VERIFY");
    std::vector<double> wrongType(x.size());
    CHECK(throwsStatus([&] { session.run({kiln::tensor(wrongType.data(), inDims)}); },
                       KILN_ERROR_DTYPE),
          "a double input is KILN_ERROR_DTYPE");
    std::vector<int64_t> wrongDims = inDims;
    wrongDims.back() += 1;
    std::vector<float> bigger(countOf(wrongDims));
    CHECK(throwsStatus([&] { session.run({kiln::tensor(bigger.data(), wrongDims)}); },
                       KILN_ERROR_SHAPE),
          "a wrong dim is KILN_ERROR_SHAPE");
    std::vector<int64_t> wrongOut = outDims;
    wrongOut.back() += 1;
    std::vector<float> wrongBuffer(countOf(wrongOut));
    CHECK(throwsStatus([&] { session.bindOutput(0, kiln::tensor(wrongBuffer.data(), wrongOut)); },
                       KILN_ERROR_SHAPE),
          "a bound buffer of the wrong shape is KILN_ERROR_SHAPE");
    CHECK(throwsStatus([&] { session.output(7); }, KILN_ERROR_INVALID_ARGUMENT),
          "output 7 is KILN_ERROR_INVALID_ARGUMENT");
    CHECK(throwsStatus([&] { model.input(7); }, KILN_ERROR_INVALID_ARGUMENT),
          "input 7 is KILN_ERROR_INVALID_ARGUMENT");
    // Training-step calls on an inference model.
    CHECK(!model.inputIsParameter(0), "an inference model's input is not a parameter");
    CHECK(throwsStatus([&] { model.inference(); }, KILN_ERROR_INVALID_ARGUMENT),
          "an inference model has no inference entry");
    CHECK(throwsStatus([&] { session.inference(); }, KILN_ERROR_INVALID_ARGUMENT),
          "nor an inference session");
    CHECK(throwsStatus([&] { session.parameter("w"); }, KILN_ERROR_INVALID_ARGUMENT),
          "nor parameters");
    CHECK(throwsStatus([&] { session.saveState("unused.kstate"); }, KILN_ERROR_INVALID_ARGUMENT),
          "nor a checkpoint");
    std::vector<int64_t> tooMany(KILN_MAX_RANK + 1, 1);
    CHECK(throwsStatus([&] { kiln::tensor(x.data(), tooMany); }, KILN_ERROR_SHAPE),
          "more than KILN_MAX_RANK dims is KILN_ERROR_SHAPE");

    // A session keeps its model alive.
    kiln::Session *orphan = nullptr;
    {
      kiln::Model scoped = kiln::Model::load(path);
      orphan = new kiln::Session(scoped, kiln::SessionOptions{1, nullptr});
    }
    orphan->run({kiln::tensor(x.data(), inDims)});
    kiln_tensor z = orphan->output(0);
    CHECK(std::memcmp(z.data, reference.data(), reference.size() * sizeof(float)) == 0,
          "a session outlives its Model handle");
    delete orphan;
  } catch (const kiln::Error &error) {
    ++failed;
    std::printf("FAIL: unexpected error: %s\n", error.what());
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
