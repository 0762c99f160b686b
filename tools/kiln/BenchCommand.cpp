//===- BenchCommand.cpp - `kiln bench model.so` ---------------------------===//
//
// Measures a compiled model: warm-up runs, then timed runs on one session;
// prints median and p90 latency, throughput and peak RSS. A benchmark, not a
// test: compare against other runtimes in the same run, on an idle machine.
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"
#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <chrono>
#include <cmath>
#include <vector>

namespace kiln::cli {

static const char *kBenchUsage =
    "usage: kiln bench <model.so> [--batch N] [--threads T] [--runs R] [--warmup W]\n\n"
    "Times the model on synthetic inputs. Dynamic dims take --batch (dim 0,\n"
    "default 1) or 1. --threads sets the session's threads (generated loops and\n"
    "library calls share them; "
    "default: all cores).\n";

int runBench(llvm::ArrayRef<llvm::StringRef> args) {
  std::string modelPath;
  int64_t batch = 1, runs = 20, warmup = 3, threads = 0;
  for (ArgumentCursor cursor(args); !cursor.done(); cursor.next()) {
    llvm::StringRef arg = cursor.current();
    std::string badFlag;
    auto number = [&](llvm::StringRef flag, int64_t &out) {
      std::optional<std::string> v = cursor.value(flag);
      if (!v)
        return false;
      if (llvm::StringRef(*v).getAsInteger(10, out) || out <= 0)
        badFlag = flag.str();
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kBenchUsage;
      return 0;
    }
    if (number("--batch", batch) || number("--runs", runs) || number("--warmup", warmup) ||
        number("--threads", threads)) {
      if (!badFlag.empty()) {
        llvm::errs() << "kiln bench: " << badFlag << " takes a positive number\n";
        return 2;
      }
      continue;
    }
    if (!arg.starts_with("-") && modelPath.empty()) {
      modelPath = arg.str();
      continue;
    }
    llvm::errs() << "kiln bench: unexpected argument '" << arg << "'\n\n" << kBenchUsage;
    return 2;
  }
  if (modelPath.empty()) {
    llvm::errs() << kBenchUsage;
    return 2;
  }
  ModelHandle loaded = loadArtifact("bench", modelPath);
  if (!loaded)
    return 1;
  kiln_model *model = loaded.get();
  uint32_t numInputs = kiln_model_num_inputs(model);
  std::vector<std::vector<char>> storage(numInputs);
  std::vector<kiln_tensor> inputs(numInputs);
  for (uint32_t i = 0; i < numInputs; ++i) {
    const kiln_model_tensor *desc = kiln_model_input(model, i);
    kiln_tensor &t = inputs[i];
    t.dtype = desc->dtype;
    t.rank = desc->rank;
    int64_t count = 1;
    for (int32_t d = 0; d < desc->rank; ++d) {
      t.dims[d] = desc->dims[d] >= 0 ? desc->dims[d] : (d == 0 ? batch : 1);
      count *= t.dims[d];
    }
    // Zeros are valid for every dtype (indices included).
    storage[i].assign(count * kiln_dtype_size(desc->dtype), 0);
    t.data = storage[i].data();
  }
  kiln_session *session = nullptr;
  kiln_session_options options = {};
  options.num_threads = static_cast<int32_t>(threads);
  if (kiln_session_create_with_options(model, &options, &session) != KILN_OK) {
    llvm::errs() << "kiln bench: " << kiln_last_error() << "\n";
    return 1;
  }
  llvm::scope_exit freeSession([&] { kiln_session_free(session); });
  std::vector<double> times;
  for (int64_t r = 0; r < warmup + runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (kiln_session_run(session, inputs.data(), numInputs) != KILN_OK) {
      llvm::errs() << "kiln bench: " << kiln_last_error() << "\n";
      return 1;
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r >= warmup)
      times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  double p90 = times[std::min(times.size() - 1, static_cast<size_t>(std::ceil(times.size() * 0.9)) - 1)];
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  kiln_memory_stats memory;
  kiln_session_memory_stats(session, &memory);
  llvm::outs() << "model " << modelPath << ", batch " << batch << ", " << runs << " runs after "
               << warmup << " warm-up\n"
               << "  median " << llvm::format("%.3f", median) << " ms, p90 "
               << llvm::format("%.3f", p90) << " ms, throughput "
               << llvm::format("%.1f", 1000.0 * batch / median) << " samples/s\n"
               << "  arena " << kiln_model_arena_bytes(model) / 1024
               << " KiB (planned); pool: peak " << memory.peak_bytes / 1024
               << " KiB in use, " << memory.reserved_bytes / 1024 << " KiB reserved in "
               << memory.heap_allocations << " blocks\n"
               << "  peak RSS " << usage.ru_maxrss / 1024 << " MiB\n";
  return 0;
}

} // namespace kiln::cli
